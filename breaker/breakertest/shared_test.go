package breakertest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/breaker"
)

// skewClock is a process's clock: the world's time plus an offset, so that
// two processes disagree about the time as real hosts do.
type skewClock struct {
	world *Clock
	off   time.Duration
}

func (c skewClock) Now() time.Time { return c.world.Now().Add(c.off) }

// fleet returns n breakers that share one MemoryStore, each on its own
// skewed clock; the store's clock is the world's.
func fleet(t *testing.T, n int, cfg breaker.Config) (*Clock, *MemoryStore, []*breaker.Breaker) {
	world := newClock()
	store := NewMemoryStore(world)
	var bs []*breaker.Breaker
	for i := range n {
		c := cfg
		c.Shared = store
		c.Clock = skewClock{world, time.Duration(i) * 7 * time.Minute}
		bs = append(bs, newTest(t, c, world))
	}
	return world, store, bs
}

var sharedCfg = breaker.Config{MinCalls: -1, Open: noJitter, SharedRefresh: 100 * time.Millisecond}

func TestSharedTripIsSeenByTheFleet(t *testing.T) {
	world, store, bs := fleet(t, 2, sharedCfg)
	a, b := bs[0], bs[1]
	call(a, errBoom) // A trips: open for 1 s of the store's time
	if st, _ := store.Load(context.Background()); st.State != breaker.Open || st.Trips != 1 || st.Wait != time.Second {
		t.Fatalf("store holds %+v, want open for 1s, trip 1", st)
	}
	world.Advance(100 * time.Millisecond)
	// B's next call refreshes and sees the open state, ending at the same moment.
	if oe := rejection(t, b); oe.State != breaker.Open || oe.Wait != 900*time.Millisecond {
		t.Fatalf("B: rejection %+v, want Open with Wait 900ms", *oe)
	}
	if oe := rejection(t, a); oe.Wait != 900*time.Millisecond {
		t.Fatalf("A: Wait %v, want 900ms", oe.Wait)
	}

	// Exactly one probe across the fleet when the period ends.
	world.Advance(900 * time.Millisecond)
	probe, err := a.Allow(context.Background())
	if err != nil {
		t.Fatalf("A: first call after the open period: %v, want the probe", err)
	}
	if oe := rejection(t, b); oe.State != breaker.HalfOpen {
		t.Fatalf("B: rejection %+v while A probes, want HalfOpen", *oe)
	}
	probe.Done(nil) // closes the breaker for the fleet
	wantState(t, a, breaker.Closed)
	world.Advance(100 * time.Millisecond)
	if !call(b, nil) {
		t.Fatal("B: rejected a call after A's probe closed the breaker")
	}
	wantState(t, b, breaker.Closed)
}

func TestSharedFailedProbeReopensTheFleetForLonger(t *testing.T) {
	world, _, bs := fleet(t, 2, sharedCfg)
	a, b := bs[0], bs[1]
	call(a, errBoom)
	world.Advance(time.Second)
	if !call(b, errBoom) { // B holds the probe, and it fails
		t.Fatal("B: probe not admitted")
	}
	world.Advance(100 * time.Millisecond)
	if oe := rejection(t, a); oe.State != breaker.Open || oe.Wait != 1900*time.Millisecond {
		t.Fatalf("A: rejection %+v, want Open for the second period (2s) minus 100ms", *oe)
	}
	if s := a.Snapshot(); s.Trips != 2 {
		t.Fatalf("A: Trips = %d, want 2", s.Trips)
	}
}

func TestSharedRaceToTripHasOneWinner(t *testing.T) {
	world, store, bs := fleet(t, 2, sharedCfg)
	a, b := bs[0], bs[1]
	call(a, errBoom)
	world.Advance(50 * time.Millisecond)
	// B has not refreshed yet and trips on its own; the store keeps A's
	// trip and B adopts it.
	call(b, errBoom)
	if st, _ := store.Load(context.Background()); st.Version != 1 {
		t.Fatalf("store version %d after two trips from version 0, want 1", st.Version)
	}
	if oe := rejection(t, b); oe.Wait != 950*time.Millisecond {
		t.Fatalf("B: Wait %v, want A's period: 950ms", oe.Wait)
	}
}

func TestSharedProbeThatNeverReports(t *testing.T) {
	world, _, bs := fleet(t, 2, breaker.Config{MinCalls: -1, Open: noJitter, SharedRefresh: 100 * time.Millisecond, ProbeTimeout: time.Second})
	a, b := bs[0], bs[1]
	call(a, errBoom)
	world.Advance(time.Second)
	if _, err := a.Allow(context.Background()); err != nil { // A's process dies holding the probe
		t.Fatal(err)
	}
	if call(b, nil) {
		t.Fatal("B: admitted a second probe")
	}
	world.Advance(time.Second) // the claim expires
	if !call(b, nil) {
		t.Fatal("B: no probe after the first one's claim expired")
	}
	wantState(t, b, breaker.Closed)
}

func TestSharedStoreDownFallsBackToLocalState(t *testing.T) {
	world, store, bs := fleet(t, 2, sharedCfg)
	a, b := bs[0], bs[1]
	store.Fail(errors.New("connection refused"))
	if !call(a, nil) {
		t.Fatal("a call failed because the store is down")
	}
	call(a, errBoom) // trips locally
	wantState(t, a, breaker.Open)
	if !a.Snapshot().SharedDown {
		t.Error("Snapshot().SharedDown = false with the store down")
	}
	world.Advance(time.Second)
	if !call(a, nil) { // local half-open, local probe
		t.Fatal("A: no local probe with the store down")
	}
	wantState(t, a, breaker.Closed)
	call(a, errBoom) // trips again, locally
	store.Fail(nil)
	world.Advance(100 * time.Millisecond)
	rejection(t, a) // refreshes: the store answers and learns A's state
	if a.Snapshot().SharedDown {
		t.Error("Snapshot().SharedDown = true after the store answered")
	}
	world.Advance(100 * time.Millisecond)
	if oe := rejection(t, b); oe.State != breaker.Open || oe.Wait != 800*time.Millisecond {
		t.Fatalf("B: rejection %+v, want A's open period: Wait 800ms", *oe)
	}
}

func TestSharedOneProbeAcrossManyProcesses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		world, _, bs := fleet(t, 20, sharedCfg)
		call(bs[0], errBoom)
		world.Advance(100 * time.Millisecond)
		for i, b := range bs { // each process learns of the trip at its next refresh
			if call(b, nil) {
				t.Fatalf("process %d: admitted a call after refreshing an open state", i)
			}
		}
		world.Advance(900 * time.Millisecond)
		var admitted atomic.Int32
		release := make(chan struct{})
		var wg sync.WaitGroup
		for _, b := range bs {
			for range 5 {
				wg.Go(func() {
					_ = b.Do(context.Background(), func(context.Context) error {
						admitted.Add(1)
						<-release
						return nil
					})
				})
			}
		}
		synctest.Wait() // the probes block on release; the rejected calls have returned
		if n := admitted.Load(); n != 1 {
			t.Errorf("%d probes ran at once across 20 processes, want 1", n)
		}
		close(release)
		wg.Wait()
	})
}

func TestSharedIsolateAndReset(t *testing.T) {
	world, _, bs := fleet(t, 2, sharedCfg)
	a, b := bs[0], bs[1]
	a.Isolate()
	world.Advance(100 * time.Millisecond)
	if oe := rejection(t, b); oe.State != breaker.Isolated {
		t.Fatalf("B: rejection %+v, want Isolated", *oe)
	}
	b.Reset()
	world.Advance(100 * time.Millisecond)
	if !call(a, nil) {
		t.Fatal("A: rejected after B's Reset")
	}
}

func TestSharedRefreshNegativeReadsOnlyOnTransitions(t *testing.T) {
	cfg := sharedCfg
	cfg.SharedRefresh = -1
	world, _, bs := fleet(t, 2, cfg)
	a, b := bs[0], bs[1]
	call(a, errBoom)
	world.Advance(500 * time.Millisecond)
	if !call(b, nil) {
		t.Fatal("B: rejected a call without any transition of its own to learn of A's trip")
	}
	call(b, errBoom) // B's own trip loses the race and adopts A's state
	if oe := rejection(t, b); oe.Wait != 500*time.Millisecond {
		t.Fatalf("B: Wait %v, want the rest of A's period: 500ms", oe.Wait)
	}
}

// A Group gives each key its own store.
func TestGroupShared(t *testing.T) {
	stores := map[string]*MemoryStore{}
	g := &breaker.Group{Config: breaker.Config{MinCalls: -1}, Shared: func(key string) breaker.Shared {
		stores[key] = NewMemoryStore(nil)
		return stores[key]
	}}
	b, _ := g.Get("a")
	call(b, errBoom)
	if st, _ := stores["a"].Load(t.Context()); st.State != breaker.Open {
		t.Fatalf("store of a holds %+v, want open", st)
	}
}
