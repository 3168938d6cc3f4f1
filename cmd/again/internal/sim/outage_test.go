package sim

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
)

// TestOutageConclusions asserts the expected picture of a 20 s spike, for
// several seeds: immediate retries and backoff alone leave the server
// collapsed long after the spike (amplification near 3, no recovery), while
// without retries or with a budget it recovers within seconds at an
// amplification near 1.
func TestSimOutageConclusions(t *testing.T) {
	for seed := range uint64(3) {
		res, err := Outage(OutageConfig{Seed: seed, Policy: backoff.Default(), Runner: parallel})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			s := r.Summary
			switch s.Strategy {
			case Immediate, Backoff:
				if s.Recovered || s.Amplification < 2.5 || s.SuccessRatio > 0.3 {
					t.Errorf("seed %d, %s: recovered %v, amplification %.2f, success %.2f; want a collapse: no recovery, amplification >= 2.5, success <= 0.3",
						seed, s.Strategy, s.Recovered, s.Amplification, s.SuccessRatio)
				}
			case NoRetries, Budget, Breaker:
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
	res, err := Outage(OutageConfig{Seed: 1, Policy: backoff.Default()})
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
			if sec.Attempts < sec.NewRequests && r.Summary.Strategy != Breaker {
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
	c := OutageConfig{Seed: 1, Policy: backoff.Default()}
	serial, err := Outage(c)
	if err != nil {
		t.Fatal(err)
	}
	c.Runner = parallel
	par, _ := Outage(c)
	var b strings.Builder
	for i, r := range serial {
		s := r.Summary
		fmt.Fprintf(&b, "%s amplification=%.4f recovered=%v recovery_s=%s success_ratio=%.4f\n", s.Strategy, s.Amplification, s.Recovered, fmtPtr(s.RecoveryS), s.SuccessRatio)
		if !reflect.DeepEqual(par[i], r) {
			t.Errorf("%s: the parallel run differs from the serial one", s.Strategy)
		}
	}
	golden(t, "outage-seed-1.txt", b.String())
}

func TestSimOutageRejects(t *testing.T) {
	for _, c := range []OutageConfig{
		{Strategies: []Strategy{Shared}},
		{Rate: -1},
		{SpikeRate: MaxRate + 1},
		{Timeout: -1},
		{Attempts: 101},
		{Policy: backoff.Policy{Multiplier: 0.5}},
		// Each within its limit, together 36 M requests: minutes and
		// gigabytes.
		{Rate: MaxRate, SpikeRate: MaxRate, Duration: MaxDuration, Policy: backoff.Default()},
	} {
		if _, err := Outage(c); err == nil {
			t.Errorf("Outage(%+v) returned no error", c)
		}
	}
}

// TestSimOutageNoSpike checks the baseline: without a spike, the server
// keeps up whatever the strategy.
func TestSimOutageNoSpike(t *testing.T) {
	res, err := Outage(OutageConfig{Spike: NoSpike, Duration: 60 * time.Second, Seed: 1, Policy: backoff.Default()})
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
	at := OutageConfig{Rate: MaxRate, SpikeRate: MaxRate, Spike: 10 * time.Second, Duration: 100 * time.Second}
	at.Policy = backoff.Default()
	d, err := at.withDefaults()
	if err != nil {
		t.Fatalf("%v requests: %v", d.expectedRequests(), err)
	}
	over := at
	over.Duration += time.Second
	if _, err := over.withDefaults(); !errors.Is(err, ErrInvalid) {
		t.Errorf("101 s at %d/s: got %v, want an error matching ErrInvalid", MaxRate, err)
	}
}

// Rates near 0 and waits as long as a time.Duration can be run to the end
// instead of overflowing the clock (they used to index seconds with a
// negative time).
func TestOutageExtremes(t *testing.T) {
	huge := backoff.Policy{Initial: time.Hour, Multiplier: 1e308, Max: -1, Jitter: backoff.DecorrelatedJitter}
	for _, c := range []OutageConfig{
		{Rate: 1e-20, Policy: backoff.Default()},
		{SpikeRate: 1e-300, Policy: backoff.Default()},
		{Rate: 1e-20, SpikeRate: 1e-300, Policy: backoff.Default()},
		{Policy: huge},
	} {
		if _, err := Outage(c); err != nil {
			t.Errorf("Outage(rate %g, spike rate %g, %+v): %v", c.Rate, c.SpikeRate, c.Policy, err)
		}
	}
}
