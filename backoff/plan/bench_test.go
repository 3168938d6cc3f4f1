package plan_test

import (
	"testing"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/backoff/plan"
)

// sink keeps results alive so the compiler cannot drop the benchmarked call.
var sink time.Duration

// BenchmarkStats10000 analyses 10,000 retries (500 ms, ×2, cap 30 s), the
// largest schedule the issue asks to be prompt.
func BenchmarkStats10000(b *testing.B) {
	for _, j := range []backoff.Jitter{backoff.NoJitter, backoff.FullJitter, backoff.EqualJitter, backoff.ProportionalJitter, backoff.DecorrelatedJitter} {
		b.Run(j.String(), func(b *testing.B) {
			p := backoff.Policy{Initial: 500 * time.Millisecond, Multiplier: 2, Max: 30 * time.Second, Retries: 10_000, Jitter: j}
			for b.Loop() {
				sink = plan.Analyze(p, plan.DefaultSeed).Total.P99
			}
		})
	}
}

// BenchmarkStatsUncapped10000 has no cap and a slow multiplier, so all
// 10,000 delays differ.
func BenchmarkStatsUncapped10000(b *testing.B) {
	p := backoff.Policy{Initial: time.Millisecond, Multiplier: 1.0005, Retries: 10_000, Jitter: backoff.FullJitter}
	for b.Loop() {
		sink = plan.Analyze(p, plan.DefaultSeed).Total.P99
	}
}

func BenchmarkSolve(b *testing.B) {
	for _, c := range []struct {
		name   string
		param  plan.Param
		target plan.Target
	}{
		{"initial/max", plan.ParamInitial, plan.TargetMax},
		{"multiplier/max", plan.ParamMultiplier, plan.TargetMax},
		{"retries/max", plan.ParamRetries, plan.TargetMax},
		{"initial/p99", plan.ParamInitial, plan.TargetP99},
		{"multiplier/p99", plan.ParamMultiplier, plan.TargetP99},
		{"retries/p99", plan.ParamRetries, plan.TargetP99},
	} {
		b.Run(c.name, func(b *testing.B) {
			// 1,000 retries of at most 30 s against a 4 h deadline.
			p := backoff.Policy{Initial: 500 * time.Millisecond, Multiplier: 2, Max: 30 * time.Second, Retries: 1000, Jitter: backoff.FullJitter}
			for b.Loop() {
				q, err := plan.Solve(p, c.param, 4*time.Hour, c.target, plan.DefaultSeed)
				if err != nil {
					b.Fatal(err)
				}
				sink = q.Initial
			}
		})
	}
}
