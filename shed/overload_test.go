package shed

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// The server of the overload tests: W workers, a fixed service time, so a
// capacity C of W/service requests a second; clients that give up after
// timeout.
const (
	workers = 4
	service = 10 * time.Millisecond
	timeout = time.Second
	ovlRun  = 3 * time.Second
)

// overload offers times × C for ovlRun, a share sheddable of it SHEDDABLE
// and the rest CRITICAL, through serve (which returns when the request
// was served or refused, reporting whether it was served), and returns
// the goodput (successes within the client's timeout over C × ovlRun) and
// each class's availability.
func overload(t *testing.T, times float64, sheddable int, serve func(ctx context.Context, c Criticality) bool) (goodput, critical, shed float64) {
	capacity := float64(workers) / service.Seconds()
	gap := time.Duration(float64(time.Second) / (times * capacity))
	var ok, offered [CriticalPlus + 1]atomic.Int64
	var wg sync.WaitGroup
	n := int(ovlRun / gap)
	for i := range n {
		c := Critical
		if (i*37)%100 < sheddable { // spread evenly, not in runs
			c = Sheddable
		}
		offered[c].Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			if serve(ctx, c) && time.Since(start) <= timeout {
				ok[c].Add(1)
			}
		}()
		time.Sleep(gap)
	}
	wg.Wait()
	avail := func(c Criticality) float64 {
		if offered[c].Load() == 0 {
			return 1
		}
		return float64(ok[c].Load()) / float64(offered[c].Load())
	}
	total := ok[Critical].Load() + ok[Sheddable].Load()
	return float64(total) / (capacity * ovlRun.Seconds()), avail(Critical), avail(Sheddable)
}

// bare is a server without shedding: W workers taking requests in
// arrival order, serving each whether or not its client still waits, as
// net/http does.
func bare() func(ctx context.Context, c Criticality) bool {
	sem := make(chan struct{}, workers)
	return func(ctx context.Context, _ Criticality) bool {
		sem <- struct{}{}
		time.Sleep(service)
		<-sem
		return true
	}
}

// behind returns a server of W workers behind s.
func behind(s *Shedder) func(ctx context.Context, c Criticality) bool {
	return func(ctx context.Context, c Criticality) bool {
		p, why := s.admit(ctx, Request{Criticality: c, Timeout: timeout})
		if why != Admitted {
			return false
		}
		time.Sleep(service)
		p.Done()
		return true
	}
}

// TestGoodputAtFourTimesCapacity is the goal, on a virtual clock:
// at four times its capacity, a server behind a Shedder keeps serving at
// least 90 % of its capacity within the clients' timeout, where the same
// server without it, queueing everything, serves requests nobody waits
// for; and with two classes, the critical one (below the capacity on its
// own) stays above 99 % available while the sheddable one is shed.
func TestGoodputAtFourTimesCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("thousands of requests on the virtual clock: a few seconds under -race")
	}
	synctest.Test(t, func(t *testing.T) {
		g, _, _ := overload(t, 4, 0, bare())
		if g > 0.5 {
			t.Errorf("bare server at 4x capacity: goodput %.2f of capacity, want it collapsed below 0.5 (the test's premise)", g)
		}
		t.Logf("bare server at 4x: goodput %.3f of capacity", g)

		s, _ := newTest(t, Config{Limit: workers})
		g, _, _ = overload(t, 4, 0, behind(s))
		if g < 0.9 {
			t.Errorf("behind a Shedder at 4x capacity: goodput %.3f of capacity, want at least 0.9", g)
		}
		t.Logf("behind a Shedder at 4x: goodput %.3f of capacity", g)

		s, _ = newTest(t, Config{Limit: workers})
		// 20 % critical: 0.8x capacity of critical requests, 3.2x of
		// sheddable ones.
		g, crit, shed := overload(t, 4, 80, behind(s))
		if g < 0.9 || crit < 0.99 || shed > 0.1 {
			t.Errorf("80%% sheddable at 4x: goodput %.3f, critical %.3f available, sheddable %.3f; want at least 0.9, 0.99, and at most 0.1", g, crit, shed)
		}
		t.Logf("80%% sheddable at 4x: goodput %.3f, critical %.4f available, sheddable %.3f", g, crit, shed)
	})
}

// recovery offers 4 × C for 2 s, then 0.5 × C for 2 s, through serve, and
// returns how long after the step the last request failed (0 if none
// failed after it): the time back to stable goodput.
func recovery(serve func(ctx context.Context, c Criticality) bool) time.Duration {
	capacity := float64(workers) / service.Seconds()
	var mu sync.Mutex
	var lastFail time.Time
	var wg sync.WaitGroup
	start := time.Now()
	step := start.Add(2 * time.Second)
	for _, phase := range []struct {
		times float64
		until time.Time
	}{{4, step}, {0.5, step.Add(2 * time.Second)}} {
		gap := time.Duration(float64(time.Second) / (phase.times * capacity))
		for time.Now().Before(phase.until) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t0 := time.Now()
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				defer cancel()
				if !serve(ctx, Critical) || time.Since(t0) > timeout {
					mu.Lock()
					if t0.After(lastFail) {
						lastFail = t0
					}
					mu.Unlock()
				}
			}()
			time.Sleep(gap)
		}
	}
	wg.Wait()
	return max(lastFail.Sub(step), 0)
}

// TestRecoveryAfterTheStep: after 2 s at four times the capacity, the
// offered load falls to half of it. Behind a Shedder every request that
// arrives after the step is served at once (the queue held only fresh
// requests); the bare server spends seconds on the backlog of requests
// nobody waits for, failing those that arrive meanwhile.
func TestRecoveryAfterTheStep(t *testing.T) {
	if testing.Short() {
		t.Skip("thousands of requests on the virtual clock: a few seconds under -race")
	}
	synctest.Test(t, func(t *testing.T) {
		b := recovery(bare())
		if b < time.Second {
			t.Errorf("bare server: last failure %v after the step, want at least 1s (the test's premise)", b)
		}
		s, _ := newTest(t, Config{Limit: workers})
		d := recovery(behind(s))
		if d > 100*time.Millisecond {
			t.Errorf("behind a Shedder: last failure %v after the step, want at most 100ms", d)
		}
		t.Logf("time back to stable goodput after 4x -> 0.5x: bare %v, behind a Shedder %v", b, d)
	})
}
