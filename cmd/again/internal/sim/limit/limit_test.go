package limit

import (
	"errors"
	"testing"

	"github.com/again-go/again/cmd/again/internal/sim"
)

// TestLimitEnvoySetup runs Envoy's setup (8 workers, p90 50 ms, p99
// 150 ms, a 1 s timeout, the load ramped from 0.5 to 3 times capacity
// over 160 s) and checks what the issue asks: past the tipping point the
// unlimited client's p99 reaches the timeout, while the fixed limit of 8
// and the adaptive limits keep it near the unloaded p99, and the adaptive
// ones settle near 8.
func TestLimitEnvoySetup(t *testing.T) {
	rows, err := Run(Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	last := map[Limiting]Row{}
	for _, r := range rows {
		last[r.Limiter] = r // the last window: 2.8 to 3 × capacity
		t.Logf("%-9s t=%3.0f offered %.2f limit %6.1f goodput %.2f p50 %6.1f p99 %7.1f refused %5d timed out %5d",
			r.Limiter, r.TimeS, r.OfferedRatio, r.Limit, r.GoodputRatio, r.SuccessP50MS, r.SuccessP99MS, r.Refused, r.TimedOut)
	}
	// Without a limit, the p99 of what still succeeds reaches the
	// timeout, then nothing succeeds: the queue never drains.
	worst := 0.0
	for _, r := range rows {
		if r.Limiter == None {
			worst = max(worst, r.SuccessP99MS)
		}
	}
	if worst < 900 || last[None].GoodputRatio > 0.1 {
		t.Errorf("no limit: worst success p99 %.0f ms, goodput at 3 × capacity %.2f; want ≥ 900 ms and a collapse", worst, last[None].GoodputRatio)
	}
	// Bounded, the p99 stays within 1.5 × the unloaded p99 (150 ms), and
	// the adaptive limits settle within 25 % of the 8 workers.
	for _, l := range []Limiting{Fixed, Vegas, Gradient2} {
		r := last[l]
		if r.SuccessP99MS > 1.5*150 || r.GoodputRatio < 0.7 || r.Limit < 6 || r.Limit > 10 {
			t.Errorf("%s at 3 × capacity: p99 %.0f ms, goodput %.2f, limit %.1f; want ≤ 225 ms, ≥ 0.7, within 25 %% of 8", l, r.SuccessP99MS, r.GoodputRatio, r.Limit)
		}
	}
	// AIMD learns from losses alone: the queue's latency stays under the
	// timeout, so it climbs to its maximum.
	if r := last[AIMD]; r.Limit < 150 {
		t.Errorf("aimd at 3 × capacity: limit %.1f, want near its maximum 200 (no loss below the timeout)", r.Limit)
	}
}

func TestLimitConfigErrors(t *testing.T) {
	for _, c := range []Config{{Workers: -1}, {Limitings: []Limiting{"x"}}, {From: -1}, {Window: 200e9}, {Timeout: -1}} {
		var fe *sim.FieldError
		if _, err := Run(c); !errors.As(err, &fe) {
			t.Errorf("Run(%+v) = %v, want a *FieldError", c, err)
		}
	}
}
