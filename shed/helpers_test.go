package shed

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixedRand returns the same draw every time.
type fixedRand float64

func (r fixedRand) Float64() float64 { return float64(r) }

// newTest returns a Shedder of cfg, with its Fixed limit, failing t on a
// configuration error.
func newTest(t *testing.T, cfg Config) (*Shedder, *Fixed) {
	t.Helper()
	if cfg.Adaptive == nil {
		cfg.Adaptive = NewFixed(cfg.Limit) // 0 is 1
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v) = %v", cfg, err)
	}
	f, _ := cfg.Adaptive.(*Fixed)
	return s, f
}

// result is how a request started by start ended.
type result struct {
	name   string
	reason Reason
	waited time.Duration
}

// arrivals runs requests through a Shedder inside a synctest bubble, each
// one on its own goroutine, and records in order how they were decided.
type arrivals struct {
	s   *Shedder
	mu  sync.Mutex
	out []result
	wg  sync.WaitGroup
}

// start sends a request named name and waits until it is decided or
// blocked in the queue. An admitted request holds its permit for hold
// (zero: until release is closed, if not nil), then gives it back.
func (a *arrivals) start(ctx context.Context, name string, req Request, hold time.Duration, release chan struct{}) {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		t0 := time.Now()
		p, why := a.s.admit(ctx, req)
		a.mu.Lock()
		a.out = append(a.out, result{name, why, time.Since(t0)})
		a.mu.Unlock()
		if why != Admitted {
			return
		}
		switch {
		case hold > 0:
			time.Sleep(hold)
		case release != nil:
			<-release
		}
		p.Done()
	}()
	synctest.Wait()
}

func (a *arrivals) results() []result {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]result(nil), a.out...)
}
