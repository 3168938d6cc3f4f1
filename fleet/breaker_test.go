package fleet

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/again-go/again/breaker"
	"github.com/redis/go-redis/v9"
)

func newTestStore(t *testing.T, s *server, key string) *BreakerStore {
	t.Helper()
	st, err := NewBreakerStore(BreakerStoreConfig{Client: s.client(nil), Key: key, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestBreakerStore checks breaker.Shared's contract on a real server:
// compare-and-set versions, open periods on the server's clock, and one
// probe claim at a time, released by an Update or by its ttl.
func TestBreakerStore(t *testing.T) {
	s := startServer(t)
	st := newTestStore(t, s, "semantics")
	ctx := context.Background()
	must := func(got breaker.SharedState, err error) breaker.SharedState {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := must(st.Load(ctx)); got != (breaker.SharedState{}) {
		t.Fatalf("Load on an empty server = %+v, want the zero state", got)
	}
	got := must(st.Update(ctx, 0, breaker.SharedState{State: breaker.Open, Wait: 300 * time.Millisecond, Trips: 1}))
	if got.State != breaker.Open || got.Trips != 1 || got.Version != 1 || got.Wait <= 0 || got.Wait > 300*time.Millisecond {
		t.Fatalf("Update(0, open 300ms) = %+v, want open, trips 1, version 1, 0 < wait <= 300ms", got)
	}
	// A stale version changes nothing and returns the state in force.
	if got := must(st.Update(ctx, 0, breaker.SharedState{State: breaker.Closed})); got.State != breaker.Open || got.Version != 1 {
		t.Fatalf("Update(0, closed) after version 1 = %+v, want open, version 1", got)
	}
	if _, ok, err := st.Probe(ctx, 1, 10*time.Second); ok || err != nil {
		t.Fatalf("Probe during the open period = %v, %v; want false", ok, err)
	}
	eventually(t, "the open period over on the server's clock", func() bool { return must(st.Load(ctx)).Wait <= 0 })
	if _, ok, err := st.Probe(ctx, 0, 10*time.Second); ok || err != nil {
		t.Fatalf("Probe with a stale version = %v, %v; want false", ok, err)
	}
	if _, ok, err := st.Probe(ctx, 1, 10*time.Second); !ok || err != nil {
		t.Fatalf("first Probe after the open period = %v, %v; want true", ok, err)
	}
	if _, ok, err := st.Probe(ctx, 1, 10*time.Second); ok || err != nil {
		t.Fatalf("second Probe while the first holds the claim = %v, %v; want false", ok, err)
	}
	// The probe failed: reopen at once (wait 0), which releases the claim.
	got = must(st.Update(ctx, 1, breaker.SharedState{State: breaker.Open, Trips: 2}))
	if got.Version != 2 || got.Trips != 2 {
		t.Fatalf("Update(1, open) = %+v, want version 2, trips 2", got)
	}
	if _, ok, _ := st.Probe(ctx, 2, 50*time.Millisecond); !ok {
		t.Fatal("Probe after an Update released the claim = false, want true")
	}
	// A probe whose process died: its claim expires after ttl.
	eventually(t, "the claim expired after its 50ms ttl", func() bool {
		_, ok, err := st.Probe(ctx, 2, time.Minute)
		return ok && err == nil
	})
	if got := must(st.Update(ctx, 2, breaker.SharedState{State: breaker.Closed})); got.State != breaker.Closed || got.Version != 3 || got.Wait != 0 {
		t.Fatalf("Update(2, closed) = %+v, want closed, version 3, no wait", got)
	}
}

// TestBreakerStoreProbeTTL checks that the probe's claim always expires,
// even when a direct caller of Probe passes a ttl <= 0 (the breaker never
// does): a claim without expiry, whose prober died, would keep the fleet's
// breaker open until Reset or Isolate. The claim's ttl is read on the
// server (PTTL), rather than waited for.
func TestBreakerStoreProbeTTL(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	tests := []struct {
		name string
		ttl  time.Duration
		want time.Duration // the claim's ttl on the server, at most
	}{
		{"positive", 300 * time.Millisecond, 300 * time.Millisecond},
		{"under a millisecond", time.Microsecond, time.Millisecond},
		{"zero", 0, breaker.DefaultProbeTimeout},
		{"negative", -time.Second, breaker.DefaultProbeTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newTestStore(t, s, "probe-ttl-"+tt.name)
			// Open with no wait, so that a probe may be claimed at once.
			if _, err := st.Update(ctx, 0, breaker.SharedState{State: breaker.Open, Trips: 1}); err != nil {
				t.Fatal(err)
			}
			if _, ok, err := st.Probe(ctx, 1, tt.ttl); !ok || err != nil {
				t.Fatalf("Probe(1, %v) = %v, %v; want the claim", tt.ttl, ok, err)
			}
			pttl, err := s.client(nil).PTTL(ctx, st.keys[1]).Result()
			if err != nil {
				t.Fatal(err)
			}
			// PTTL is -1 for a key without expiry, -2 for no key; one
			// that expired already (a short ttl on a slow machine) is no
			// failure.
			if pttl == -1 || pttl > tt.want {
				t.Errorf("Probe(1, %v) left a claim whose ttl is %v, want one in (0, %v]", tt.ttl, pttl, tt.want)
			}
		})
	}
}

// breakerConfig is the breaker of the multi-process tests: three failures
// in a row trip it, for DefaultOpen's first period with the most jitter
// allows (5 s).
func breakerConfig(st breaker.Shared) breaker.Config {
	return breaker.Config{FailureRatio: -1, ConsecutiveFailures: 3, Shared: st, SharedRefresh: 20 * time.Millisecond, Rand: topRand{}}
}

// topRand draws the top of every jitter range.
type topRand struct{}

func (topRand) Float64() float64 { return 1 - 1e-9 }

// runBreakerChild is a child process's main for the breaker tests.
func runBreakerChild(cfg childConfig) (childReport, error) {
	c := redis.NewClient(&redis.Options{Addr: cfg.Addr, ContextTimeoutEnabled: true, MaxRetries: -1})
	defer c.Close()
	st, err := NewBreakerStore(BreakerStoreConfig{Client: c, Key: cfg.Key, Timeout: 5 * time.Second, ConnectTimeout: 30 * time.Second})
	if err != nil {
		return childReport{}, err
	}
	b, err := breaker.New(breakerConfig(st))
	if err != nil {
		return childReport{}, err
	}
	ctx := context.Background()
	var r childReport
	switch cfg.Mode {
	case "trip":
		for range 3 {
			b.Do(ctx, func(context.Context) error { return errors.New("down") })
		}
	case "probe":
		// Ask for calls until the deadline; a probe admitted is held (never
		// reported), as a slow probe would be, so the claim stays taken.
		for time.Now().Before(time.UnixMilli(cfg.Until)) {
			if t, err := b.Allow(ctx); err == nil {
				r.Probes++
				_ = t
				if b.State() != breaker.HalfOpen {
					return r, fmt.Errorf("admitted a call in state %v, want half-open", b.State())
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	default:
		return r, fmt.Errorf("unknown mode %q", cfg.Mode)
	}
	r.State = b.State().String()
	r.FellBack = b.Snapshot().SharedDown
	return r, nil
}

// TestBreakerTripSeenByAnotherProcess: a child process trips the shared
// breaker; this process, which saw nothing fail, then finds it open until
// the moment the child set, on the server's clock.
func TestBreakerTripSeenByAnotherProcess(t *testing.T) {
	s := startServer(t)
	start := time.Now()
	r := runFleet(t, []childConfig{{Addr: s.Addr(), Key: "trip", Mode: "trip"}})
	if r.State != "open" {
		t.Fatalf("the child's breaker is %s after 3 failures, want open", r.State)
	}
	b, err := breaker.New(breakerConfig(newTestStore(t, s, "trip")))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	err = b.Do(ctx, func(context.Context) error {
		t.Error("this process ran a call while the fleet's breaker is open")
		return nil
	})
	var oe *breaker.OpenError
	if !errors.Is(err, breaker.ErrOpen) || !errors.As(err, &oe) {
		t.Fatalf("call after another process tripped the breaker: %v, want ErrOpen", err)
	}
	if oe.Wait <= 5*time.Second-slack-time.Since(start) || oe.Wait > 5*time.Second {
		t.Errorf("OpenError.Wait = %v, %v after the child tripped the breaker for 5s, want the rest of that", oe.Wait, time.Since(start))
	}
}

// TestBreakerOneProbeAcrossProcesses: twenty processes whose breakers see
// the fleet's open period end together run exactly one probe between
// them.
func TestBreakerOneProbeAcrossProcesses(t *testing.T) {
	s := startServer(t)
	st := newTestStore(t, s, "probe")
	if _, err := st.Update(context.Background(), 0, breaker.SharedState{State: breaker.Open, Wait: 500 * time.Millisecond, Trips: 1}); err != nil {
		t.Fatal(err)
	}
	const n = 20
	cfgs := make([]childConfig, n)
	until := time.Now().Add(3 * time.Second).UnixMilli()
	for i := range cfgs {
		cfgs[i] = childConfig{Addr: s.Addr(), Key: "probe", Mode: "probe", Until: until}
	}
	r := runFleet(t, cfgs)
	if r.Probes != 1 {
		t.Errorf("%d processes ran %d probes once the open period ended, want 1", n, r.Probes)
	}
}

// TestBreakerStoreNamed: the stores Named returns share the client but
// not the state: one per host, under Key/host.
func TestBreakerStoreNamed(t *testing.T) {
	s := startServer(t)
	st, err := OpenBreakerStore(s.URL("key=hosts&timeout=2s"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	a, b := st.Named("a.example:443"), st.Named("b{x}")
	if _, err := a.Update(ctx, 0, breaker.SharedState{State: breaker.Open, Wait: time.Minute, Trips: 1}); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Load(ctx); err != nil || got.State != breaker.Closed {
		t.Errorf("the other host's state = %+v, %v; want closed", got, err)
	}
	if got, err := st.Named("a.example:443").Load(ctx); err != nil || got.State != breaker.Open {
		t.Errorf("the same host's state through a new Named = %+v, %v; want open", got, err)
	}
	if n, err := s.Query("EXISTS", "again:{hosts/a.example:443}:breaker"); n != "1" || err != nil {
		t.Errorf("the host's key: EXISTS = %q, %v; want 1", n, err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("Close of a Named store = %v, want nil (it owns no client)", err)
	}
	if _, err := a.Load(ctx); err != nil {
		t.Errorf("Load after a Named store's Close: %v, want the client still open", err)
	}
}
