package outage

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/cmd/again/internal/sim"
	"github.com/again-go/again/cmd/again/internal/sim/simtest"
)

// TestOutageConclusions asserts the expected picture of a 20 s spike, for
// several seeds: immediate retries and backoff alone leave the server
// collapsed long after the spike (amplification near 3, no recovery), while
// without retries or with a budget it recovers within seconds at an
// amplification near 1.
func TestSimOutageConclusions(t *testing.T) {
	for seed := range uint64(3) {
		res, err := Run(Config{Seed: seed, Policy: backoff.Default(), Runner: simtest.Parallel})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			s := r.Summary
			switch s.Strategy {
			case sim.Immediate, sim.Backoff:
				if s.Recovered || s.Amplification < 2.5 || s.SuccessRatio > 0.3 {
					t.Errorf("seed %d, %s: recovered %v, amplification %.2f, success %.2f; want a collapse: no recovery, amplification >= 2.5, success <= 0.3",
						seed, s.Strategy, s.Recovered, s.Amplification, s.SuccessRatio)
				}
			case sim.NoRetries, sim.Budget, sim.Breaker:
				if !s.Recovered || *s.RecoveryS > 15 || s.Amplification > 1.1 || s.SuccessRatio < 0.6 {
					t.Errorf("seed %d, %s: recovered %v after %v s, amplification %.2f, success %.2f; want recovery within 15 s, amplification <= 1.1, success >= 0.6",
						seed, s.Strategy, s.Recovered, fmtPtr(s.RecoveryS), s.Amplification, s.SuccessRatio)
				}
			}
		}
	}
}

func fmtPtr(p *float64) string {
	if p == nil {
		return "never"
	}
	return fmt.Sprint(*p)
}

// TestOutageSameDemand checks that every strategy faces the same arrivals,
// and that the counts add up.
func TestSimOutageSameDemand(t *testing.T) {
	res, err := Run(Config{Seed: 1, Policy: backoff.Default()})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if len(r.Seconds) != 120 {
			t.Fatalf("%s: %d seconds, want 120", r.Summary.Strategy, len(r.Seconds))
		}
		for i, sec := range r.Seconds {
			if want := res[0].Seconds[i].NewRequests; sec.NewRequests != want {
				t.Errorf("%s, second %d: %d new requests; %s had %d", r.Summary.Strategy, i, sec.NewRequests, res[0].Summary.Strategy, want)
			}
			if sec.Attempts < sec.NewRequests && r.Summary.Strategy != sim.Breaker {
				t.Errorf("%s, second %d: %d attempts for %d new requests", r.Summary.Strategy, i, sec.Attempts, sec.NewRequests)
			}
		}
	}
	// The spike doubles the demand.
	var before, during int
	for i := range 20 {
		before += res[0].Seconds[i].NewRequests
		during += res[0].Seconds[20+i].NewRequests
	}
	if r := float64(during) / float64(before); r < 1.7 || r > 2.3 {
		t.Errorf("the spike multiplies the demand by %.2f, want about 2", r)
	}
}

func TestSimOutageGolden(t *testing.T) {
	c := Config{Seed: 1, Policy: backoff.Default()}
	serial, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	c.Runner = simtest.Parallel
	par, _ := Run(c)
	var b strings.Builder
	for i, r := range serial {
		s := r.Summary
		fmt.Fprintf(&b, "%s amplification=%.4f recovered=%v recovery_s=%s success_ratio=%.4f\n", s.Strategy, s.Amplification, s.Recovered, fmtPtr(s.RecoveryS), s.SuccessRatio)
		if !reflect.DeepEqual(par[i], r) {
			t.Errorf("%s: the parallel run differs from the serial one", s.Strategy)
		}
	}
	simtest.Golden(t, "outage-seed-1.txt", b.String())
}

func TestSimOutageRejects(t *testing.T) {
	for _, c := range []Config{
		{Strategies: []sim.Strategy{sim.Shared}},
		{Rate: -1},
		{SpikeRate: sim.MaxRate + 1},
		{Timeout: -1},
		{Attempts: 101},
		{Hard: -1},
		{HardStart: -1, Hard: time.Second},
		{Hard: 2 * sim.MaxDuration},
		{Policy: backoff.Policy{Multiplier: 0.5}},
		// Each within its limit, together 36 M requests: minutes and
		// gigabytes.
		{Rate: sim.MaxRate, SpikeRate: sim.MaxRate, Duration: sim.MaxDuration, Policy: backoff.Default()},
	} {
		if _, err := Run(c); err == nil {
			t.Errorf("Run(%+v) returned no error", c)
		}
	}
}

// TestSimOutageNoSpike checks the baseline: without a spike, the server
// keeps up whatever the strategy.
func TestSimOutageNoSpike(t *testing.T) {
	res, err := Run(Config{Spike: NoSpike, Duration: 60 * time.Second, Seed: 1, Policy: backoff.Default()})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		s := r.Summary
		if !s.Recovered || *s.RecoveryS != 0 || s.Amplification > 1.02 || s.SuccessRatio < 0.97 {
			t.Errorf("%s without a spike: recovered %v after %s s, amplification %.3f, success %.3f; want at once, about 1, about 1",
				s.Strategy, s.Recovered, fmtPtr(s.RecoveryS), s.Amplification, s.SuccessRatio)
		}
	}
}

// TestSimOutageRequestLimit checks the bound on a run's size: the largest
// run it admits is admitted, and one more second of demand is not.
func TestSimOutageRequestLimit(t *testing.T) {
	// 10 s of spike at 10000/s and 90 s at 10000/s: exactly 1 M requests.
	at := Config{Rate: sim.MaxRate, SpikeRate: sim.MaxRate, Spike: 10 * time.Second, Duration: 100 * time.Second}
	at.Policy = backoff.Default()
	d, err := at.withDefaults()
	if err != nil {
		t.Fatalf("%v requests: %v", d.expectedRequests(), err)
	}
	over := at
	over.Duration += time.Second
	if _, err := over.withDefaults(); !errors.Is(err, sim.ErrInvalid) {
		t.Errorf("101 s at %d/s: got %v, want an error matching ErrInvalid", sim.MaxRate, err)
	}
}

// Rates near 0 and waits as long as a time.Duration can be run to the end
// instead of overflowing the clock (they used to index seconds with a
// negative time).
func TestOutageExtremes(t *testing.T) {
	huge := backoff.Policy{Initial: time.Hour, Multiplier: 1e308, Max: -1, Jitter: backoff.DecorrelatedJitter}
	for _, c := range []Config{
		{Rate: 1e-20, Policy: backoff.Default()},
		{SpikeRate: 1e-300, Policy: backoff.Default()},
		{Rate: 1e-20, SpikeRate: 1e-300, Policy: backoff.Default()},
		{Policy: huge},
	} {
		if _, err := Run(c); err != nil {
			t.Errorf("Run(rate %g, spike rate %g, %+v): %v", c.Rate, c.SpikeRate, c.Policy, err)
		}
	}
}

// hardScenario is a fast server behind a 3 s hard outage from t = 2 s:
// what `again proxy --outage 3s@2s` makes of a loopback server.
func hardScenario(seed uint64) Config {
	return Config{
		Rate: 100, SpikeRate: 100, Spike: NoSpike, SpikeStart: 2 * time.Second,
		HardStart: 2 * time.Second, Hard: 3 * time.Second, Duration: 12 * time.Second,
		Latency: time.Millisecond, PerRequest: 1, Timeout: 600 * time.Millisecond, Attempts: 3, NetMean: 1,
		Policy: backoff.Policy{Initial: 100 * time.Millisecond, Max: 2 * time.Second}, Seed: seed, Runner: simtest.Parallel,
	}
}

// TestSimHardOutage asserts the picture of a hard outage against a fast
// server, for several seeds: immediate retries triple the load while it
// lasts, backoff nearly so (a few retries fall after its end), a budget
// keeps it near the demand and an open breaker below it; once the outage
// ends, every strategy but the breaker (still open for its jittered
// period) serves the demand at once.
func TestSimHardOutage(t *testing.T) {
	for seed := range uint64(5) {
		res, err := Run(hardScenario(seed))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			s := r.Summary
			var lo, hi float64
			switch s.Strategy {
			case sim.NoRetries:
				lo, hi = 1, 1
			case sim.Immediate:
				lo, hi = 3, 3
			case sim.Backoff:
				lo, hi = 2.7, 3
			case sim.Budget:
				lo, hi = 1, 1.1
			case sim.Breaker:
				lo, hi = 0.3, 0.95
			}
			if s.Amplification < lo || s.Amplification > hi {
				t.Errorf("seed %d, %s: amplification %.3f, want %g to %g", seed, s.Strategy, s.Amplification, lo, hi)
			}
			if s.Strategy != sim.Breaker && (!s.Recovered || *s.RecoveryS != 0) {
				t.Errorf("seed %d, %s: recovered %v after %s s, want at the outage's end", seed, s.Strategy, s.Recovered, fmtPtr(s.RecoveryS))
			}
			// During the outage nothing succeeds; before it, everything.
			for _, sec := range r.Seconds[2:5] {
				if sec.Successes > 1 { // the last attempt answered before 2 s may land in it
					t.Errorf("seed %d, %s, second %d: %d successes during the outage", seed, s.Strategy, sec.Second, sec.Successes)
				}
			}
			if sec := r.Seconds[0]; sec.Successes != sec.NewRequests || sec.Attempts != sec.NewRequests {
				t.Errorf("seed %d, %s, second 0: %+v, want every request to succeed at once", seed, s.Strategy, sec)
			}
		}
	}
}

// The hard outage costs the server no work: a slow server (the default,
// 1 s + 10 ms per request in progress) recovers from a hard outage as
// fast as without retries, whatever the retries (the breaker, still open
// for its jittered period after the outage, aside), where a spike of the
// same length collapses it.
func TestSimHardOutageNoWork(t *testing.T) {
	res, err := Run(Config{Strategies: []sim.Strategy{sim.NoRetries, sim.Immediate, sim.Backoff, sim.Budget}, Spike: NoSpike, HardStart: 20 * time.Second, Hard: 20 * time.Second, Seed: 1, Policy: backoff.Default(), Runner: simtest.Parallel})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if s := r.Summary; !s.Recovered || *s.RecoveryS > 5 {
			t.Errorf("%s: recovered %v after %s s, want within 5 s", s.Strategy, s.Recovered, fmtPtr(s.RecoveryS))
		}
	}
}

// Summarize sums up a run's seconds as Run does, with a spike or
// a hard outage, so that a real run's summary means the same.
func TestSummarize(t *testing.T) {
	for _, c := range []Config{{Seed: 1, Policy: backoff.Default()}, hardScenario(1)} {
		res, err := Run(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			var news int
			for _, sec := range r.Seconds {
				news += sec.NewRequests
			}
			succeeded := int(r.Summary.SuccessRatio*float64(news) + 0.5)
			got, err := Summarize(c, r.Summary.Strategy, r.Seconds, succeeded, news)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, r.Summary) {
				t.Errorf("hard %v, %s: Summarize = %+v, want %+v", c.Hard, r.Summary.Strategy, got, r.Summary)
			}
		}
	}
	if _, err := Summarize(Config{Hard: -1, Policy: backoff.Default()}, sim.NoRetries, nil, 0, 0); !errors.Is(err, sim.ErrInvalid) {
		t.Errorf("Summarize with Hard -1: %v, want an error matching ErrInvalid", err)
	}
}

// Arrivals are the arrivals Run's strategies face: as many per
// second as its NewRequests.
func TestArrivals(t *testing.T) {
	for _, c := range []Config{{Seed: 1, Policy: backoff.Default()}, hardScenario(2)} {
		res, err := Run(c)
		if err != nil {
			t.Fatal(err)
		}
		arr, err := Arrivals(c)
		if err != nil {
			t.Fatal(err)
		}
		per := make([]int, len(res[0].Seconds))
		for i, a := range arr {
			if i > 0 && a < arr[i-1] {
				t.Fatalf("arrival %d at %v before arrival %d at %v", i, a, i-1, arr[i-1])
			}
			per[a/time.Second]++
		}
		for i, sec := range res[0].Seconds {
			if per[i] != sec.NewRequests {
				t.Errorf("hard %v, second %d: %d arrivals, Run had %d new requests", c.Hard, i, per[i], sec.NewRequests)
			}
		}
	}
}
