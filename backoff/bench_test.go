package backoff_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
)

// sink keeps results alive so the compiler cannot drop the benchmarked call.
var sink time.Duration

func BenchmarkDelay(b *testing.B) {
	p := backoff.Default()
	n := 0
	for b.Loop() {
		n = n%50 + 1
		sink = p.Delay(n)
	}
}

func BenchmarkSample(b *testing.B) {
	for _, j := range []backoff.Jitter{backoff.FullJitter, backoff.DecorrelatedJitter} {
		b.Run(j.String(), func(b *testing.B) {
			p := backoff.Default()
			p.Jitter = j
			r := rand.New(rand.NewPCG(1, 2))
			n := 0
			var prev time.Duration
			for b.Loop() {
				n = n%50 + 1
				prev = p.Sample(n, prev, r)
			}
			sink = prev
		})
	}
}

// BenchmarkStats10000 analyses 10,000 retries (500 ms, ×2, cap 30 s), the
// largest schedule the issue asks to be prompt.
func BenchmarkStats10000(b *testing.B) {
	for _, j := range []backoff.Jitter{backoff.NoJitter, backoff.FullJitter, backoff.EqualJitter, backoff.ProportionalJitter, backoff.DecorrelatedJitter} {
		b.Run(j.String(), func(b *testing.B) {
			p := backoff.Policy{Initial: 500 * time.Millisecond, Multiplier: 2, Max: 30 * time.Second, Retries: 10_000, Jitter: j}
			for b.Loop() {
				sink = p.Stats(backoff.DefaultSeed).Total.P99
			}
		})
	}
}

// BenchmarkStatsUncapped10000 has no cap and a slow multiplier, so all
// 10,000 delays differ.
func BenchmarkStatsUncapped10000(b *testing.B) {
	p := backoff.Policy{Initial: time.Millisecond, Multiplier: 1.0005, Retries: 10_000, Jitter: backoff.FullJitter}
	for b.Loop() {
		sink = p.Stats(backoff.DefaultSeed).Total.P99
	}
}

func BenchmarkSolve(b *testing.B) {
	for _, c := range []struct {
		name   string
		param  backoff.Param
		target backoff.Target
	}{
		{"initial/max", backoff.ParamInitial, backoff.TargetMax},
		{"multiplier/max", backoff.ParamMultiplier, backoff.TargetMax},
		{"retries/max", backoff.ParamRetries, backoff.TargetMax},
		{"initial/p99", backoff.ParamInitial, backoff.TargetP99},
		{"multiplier/p99", backoff.ParamMultiplier, backoff.TargetP99},
		{"retries/p99", backoff.ParamRetries, backoff.TargetP99},
	} {
		b.Run(c.name, func(b *testing.B) {
			// 1,000 retries of at most 30 s against a 4 h deadline.
			p := backoff.Policy{Initial: 500 * time.Millisecond, Multiplier: 2, Max: 30 * time.Second, Retries: 1000, Jitter: backoff.FullJitter}
			for b.Loop() {
				q, err := backoff.Solve(p, c.param, 4*time.Hour, c.target, backoff.DefaultSeed)
				if err != nil {
					b.Fatal(err)
				}
				sink = q.Initial
			}
		})
	}
}
