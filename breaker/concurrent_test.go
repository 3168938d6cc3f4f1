package breaker

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// Many goroutines against a dependency that goes down and comes back, on the
// real clock inside a synctest bubble: run with -race. No more probes than
// allowed ever run at once, and the breaker ends closed once the dependency
// is healthy again.
func TestConcurrentCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const probes = 3
		b, err := New(Config{Probes: probes, ProbeSuccesses: 2, MinCalls: 10, ProbeTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		down := func() bool { e := time.Since(start); return e > 2*time.Second && e < 8*time.Second }
		var halfOpenRunning, maxHalfOpen atomic.Int32
		var wg sync.WaitGroup
		for g := range 40 {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(g), 7))
				for range 600 {
					tk, err := b.Allow(context.Background())
					if err != nil {
						time.Sleep(50 * time.Millisecond)
						continue
					}
					probe := tk.probe != 0
					if probe {
						n := halfOpenRunning.Add(1)
						for m := maxHalfOpen.Load(); n > m && !maxHalfOpen.CompareAndSwap(m, n); m = maxHalfOpen.Load() {
						}
					}
					time.Sleep(time.Duration(r.IntN(100)) * time.Millisecond)
					if probe {
						halfOpenRunning.Add(-1)
					}
					switch {
					case r.IntN(50) == 0:
						// The caller vanishes without reporting.
					case down() && r.IntN(10) > 0:
						tk.Done(errBoom)
					default:
						tk.Done(nil)
					}
				}
			})
		}
		wg.Wait()
		if m := maxHalfOpen.Load(); m > probes || m == 0 {
			t.Errorf("at most %d probes ran at once, want between 1 and %d", m, probes)
		}
		if s := b.Snapshot(); s.State != Closed {
			t.Errorf("after recovery: %+v, want closed", s)
		}
	})
}
