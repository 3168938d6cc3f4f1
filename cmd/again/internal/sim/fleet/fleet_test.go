package fleet

import (
	"fmt"
	"strings"
	"testing"

	"github.com/again-go/again/cmd/again/internal/sim"
	"github.com/again-go/again/cmd/again/internal/sim/simtest"
)

// TestFleetConclusions asserts Brooker's results: three retries at failure
// 1 amplify 4×; per-client token buckets hold about 1.1× with 10 clients
// but leak toward 1.5× with 1000 small ones; a shared budget holds about
// 1.1× at any fleet size and failure rate; per-client breakers leak like
// per-client buckets.
func TestSimFleetConclusions(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) { fleetConclusions(t, seed) })
	}
}

func fleetConclusions(t *testing.T, seed uint64) {
	rows, err := Run(Config{Seed: seed, Runner: simtest.Parallel})
	if err != nil {
		t.Fatal(err)
	}
	get := func(n int, p float64, s sim.Strategy) Row {
		for _, r := range rows {
			if r.Clients == n && r.Failure == p && r.Strategy == s {
				return r
			}
		}
		t.Fatalf("no row for %d clients, failure %v, %s", n, p, s)
		return Row{}
	}
	for _, n := range []int{10, 100, 1000} {
		if a := get(n, 1, sim.Retries).Amplification; a != 4 {
			t.Errorf("%d clients, failure 1, retries: amplification %v, want 4", n, a)
		}
		for _, p := range []float64{0, 0.1, 0.5, 1} {
			if a := get(n, p, sim.Shared).Amplification; a > 1.12 {
				t.Errorf("%d clients, failure %v, shared: amplification %.3f, want <= 1.12", n, p, a)
			}
			if a := get(n, p, sim.NoRetries).Amplification; a != 1 {
				t.Errorf("%d clients, failure %v, none: amplification %v, want 1", n, p, a)
			}
		}
	}
	if a := get(10, 1, sim.Bucket).Amplification; a < 1.05 || a > 1.15 {
		t.Errorf("10 clients, failure 1, bucket: amplification %.3f, want about 1.1", a)
	}
	if a := get(1000, 1, sim.Bucket).Amplification; a < 1.4 || a > 1.6 {
		t.Errorf("1000 clients, failure 1, bucket: amplification %.3f, want about 1.5", a)
	}
	if a, b := get(1000, 1, sim.Budget).Amplification, get(10, 1, sim.Budget).Amplification; a < b+0.2 {
		t.Errorf("failure 1, budget: amplification %.3f with 1000 clients, %.3f with 10; want the small clients to leak", a, b)
	}
	// A per-client breaker sheds the load of a dependency that is down when
	// each client calls it often, but a client that makes 10 calls in 10 s
	// sees too few to trip early: per-client state leaks in a large fleet.
	if a := get(10, 1, sim.Breaker).Amplification; a > 0.5 {
		t.Errorf("10 clients, failure 1, breaker: amplification %.3f, want <= 0.5 (rejected attempts never reach the dependency)", a)
	}
	if a := get(1000, 1, sim.Breaker).Amplification; a < 1.5 {
		t.Errorf("1000 clients, failure 1, breaker: amplification %.3f, want the small clients' breakers to leak (>= 1.5)", a)
	}
	for _, r := range rows {
		if r.SuccessRatio < 0 || r.SuccessRatio > 1 || r.Amplification < 0 || r.Amplification > 4 {
			t.Errorf("%+v: out of range", r)
		}
		if r.Failure == 0 && (r.SuccessRatio != 1 || r.Amplification != 1) {
			t.Errorf("%+v: want every call to succeed at once", r)
		}
	}
}

func TestSimFleetGolden(t *testing.T) {
	c := Config{Seed: 1, Failures: []float64{0.2, 0.6, 1}}
	serial, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	c.Runner = simtest.Parallel
	par, _ := Run(c)
	var b strings.Builder
	for i, r := range serial {
		fmt.Fprintf(&b, "%d,%v,%s,%.4f,%.4f\n", r.Clients, r.Failure, r.Strategy, r.Amplification, r.SuccessRatio)
		if par[i] != r {
			t.Errorf("row %d: serial %+v, parallel %+v", i, r, par[i])
		}
	}
	simtest.Golden(t, "fleet-seed-1.csv", b.String())
}

func TestSimFleetRejects(t *testing.T) {
	for _, c := range []Config{
		{Clients: []int{0}},
		{Failures: []float64{1.5}},
		{Strategies: []sim.Strategy{sim.Immediate}},
		{Rate: -1},
		{Retries: 101},
	} {
		if _, err := Run(c); err == nil {
			t.Errorf("Run(%+v) returned no error", c)
		}
	}
}
