package fleet

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestSuccessAllocs: recording a success allocates nothing and makes no
// round trip (the client points nowhere; nothing is flushed in the test).
func TestSuccessAllocs(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer c.Close()
	b := newTestBudget(t, BudgetConfig{Client: c, FlushInterval: time.Hour})
	if n := testing.AllocsPerRun(1000, b.Success); n != 0 {
		t.Errorf("Success allocates %v times per call, want 0", n)
	}
}

// BenchmarkSuccess is the cost of recording a success: no round trip.
func BenchmarkSuccess(b *testing.B) {
	s := startServer(b)
	var rt atomic.Int64
	bud, err := NewBudget(BudgetConfig{Client: s.client(&rt), Key: "bench-success", FlushInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer bud.Close()
	<-bud.warm
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			bud.Success()
		}
	})
	b.ReportMetric(float64(rt.Load())/float64(b.N), "roundtrips/op")
}

// BenchmarkDecision64 is a retry decision (Failure) against the local
// redis-server from 64 goroutines: decisions per second, the p50 and p99
// of one decision, and round trips per decision.
func BenchmarkDecision64(b *testing.B) { benchDecisions(b, 64) }

// BenchmarkDecision1 is the same from one goroutine: the latency of one
// decision without queueing behind 63 others.
func BenchmarkDecision1(b *testing.B) { benchDecisions(b, 1) }

func benchDecisions(b *testing.B, goroutines int) {
	s := startServer(b)
	var rt atomic.Int64
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1, PoolSize: goroutines})
	c.AddHook(countHook{&rt})
	defer c.Close()
	bud, err := NewBudget(BudgetConfig{Client: c, Key: "bench-decision", Timeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer bud.Close()
	<-bud.warm // connected, script loaded
	rt.Store(0)

	var (
		mu        sync.Mutex
		latencies []time.Duration
	)
	decide := func(next func() bool) {
		var mine []time.Duration
		for next() {
			t0 := time.Now()
			bud.Failure()
			mine = append(mine, time.Since(t0))
		}
		mu.Lock()
		latencies = append(latencies, mine...)
		mu.Unlock()
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	if goroutines == 1 {
		i := 0
		decide(func() bool { i++; return i <= b.N })
	} else {
		// RunParallel runs parallelism × GOMAXPROCS goroutines.
		procs := runtime.GOMAXPROCS(0)
		b.SetParallelism((goroutines + procs - 1) / procs)
		b.RunParallel(func(pb *testing.PB) { decide(pb.Next) })
	}
	elapsed := time.Since(start)
	b.StopTimer()
	if !bud.Shared() {
		b.Fatal("decisions fell back to the local bucket")
	}
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds())
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "decisions/s")
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(float64(rt.Load())/float64(b.N), "roundtrips/op")
}
