package throttle

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/sim"
)

func TestSimThrottle(t *testing.T) {
	// A capacity of 50/s over 200 s keeps the run short under -race: the
	// counts settle within seconds, and the SRE steady state holds at any
	// capacity.
	c := Config{Demands: []float64{10, 30}, Seed: 1, Capacity: 50, Duration: 200 * time.Second, Warmup: 100 * time.Second,
		Throttlings: []Throttling{Budget, SentOnly, SRE, SRE11, CUBIC}}
	rows, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	get := func(d float64, th Throttling) Row {
		for _, r := range rows {
			if r.DemandRatio == d && r.Throttler == th {
				return r
			}
		}
		t.Fatalf("no row for %v at %v", th, d)
		return Row{}
	}
	for _, d := range []float64{10, 30} {
		// The promise: SRE K = 2 holds the backend within 10 %
		// of 2a, whatever the demand.
		if r := get(d, SRE); math.Abs(r.BackendLoadRatio-2) > 0.2 {
			t.Errorf("sre-k2 at D = %va: backend load %.3f a, want 2a ± 10 %%", d, r.BackendLoadRatio)
		}
		// Counting only what was sent lets the load grow with √D.
		if so, sre := get(d, SentOnly), get(d, SRE); so.BackendLoadRatio < 1.3*sre.BackendLoadRatio {
			t.Errorf("sent-only at D = %va: backend load %.3f a, want well above sre-k2's %.3f a", d, so.BackendLoadRatio, sre.BackendLoadRatio)
		}
		// Without throttling every first attempt is sent.
		if r := get(d, Budget); r.BackendLoadRatio < 0.95*d {
			t.Errorf("budget at D = %va: backend load %.3f a, want about D", d, r.BackendLoadRatio)
		}
		if r := get(d, SRE11); r.BackendLoadRatio > get(d, SRE).BackendLoadRatio {
			t.Errorf("sre-k1.1 at D = %va sends more than sre-k2", d)
		}
	}
	for _, r := range rows {
		if r.Throttler == SRE11 {
			continue // K = 1.1 leaves no room for the noise: it loses goodput
		}
		if r.GoodputRatio > 1.01 || r.GoodputRatio < 0.9 {
			t.Errorf("%v at D = %va: goodput %.3f a, want the backend's capacity or near it", r.Throttler, r.DemandRatio, r.GoodputRatio)
		}
	}
	c.Throttlings = []Throttling{SRE}
	again, _ := Run(c)
	// A row is the same computed alone or among others.
	for _, r := range again {
		if want := get(r.DemandRatio, SRE); r != want {
			t.Fatalf("Run is not deterministic: %+v, then %+v", want, r)
		}
	}
}

func TestSimThrottleRejects(t *testing.T) {
	for _, c := range []Config{
		{Throttlings: []Throttling{"nope"}},
		{Demands: []float64{0}},
		{Demands: []float64{101}},
		{Capacity: -1},
		{Warmup: 10 * 60e9},
		{Attempts: 101},
		{Demands: []float64{100}, Capacity: 10000},
	} {
		if _, err := Run(c); !errors.Is(err, sim.ErrInvalid) {
			t.Errorf("Run(%+v) = %v, want ErrInvalid", c, err)
		}
	}
}
