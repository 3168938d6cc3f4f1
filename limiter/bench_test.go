package limiter

import (
	"context"
	"testing"
	"time"

	"github.com/again-go/again/breaker"
	"github.com/again-go/again/throttle"
)

// The admitted path of each limit, beside a Throttler's and a closed
// breaker's in the same run (see BENCHMARKS.md): Acquire, then Done, of a
// call the limit admits; a refusal fails the benchmark.

func benchPermits(b *testing.B, l *Limiter) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p, err := l.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		p.Done(Success)
	}
}

// BenchmarkFixedAdmitted is a fixed limit's admitted call.
func BenchmarkFixedAdmitted(b *testing.B) { benchPermits(b, mustNew(b, Config{Limit: 8})) }

// BenchmarkAdaptiveAdmitted is each adaptive limit's admitted call, its
// update rule run on the calls it measures: at this rate one in
// DefaultSampleEvery (two clock reads, one lock), the others costing a
// fixed limit's. AIMDNoTimeout learns from every call without a clock
// read: here, one in flight, under half its limit, a success leaves it
// as it is and takes no lock (at half the limit or more, each takes the
// lock once). Gradient2EveryCall measures every call (SampleEvery 1), the
// cost of one measured call.
func BenchmarkAdaptiveAdmitted(b *testing.B) {
	for _, c := range []struct {
		name  string
		alg   Algorithm
		every int
	}{
		{"AIMD", AIMD{}, 0}, {"Vegas", Vegas{}, 0}, {"Gradient2", Gradient2{}, 0},
		{"AIMDNoTimeout", AIMD{Timeout: -1}, 0}, {"Gradient2EveryCall", Gradient2{}, 1},
	} {
		b.Run(c.name, func(b *testing.B) { benchPermits(b, mustNew(b, Config{Algorithm: c.alg, SampleEvery: c.every})) })
	}
}

// BenchmarkFixedParallel is the fixed limit's admitted call from every
// core at once, under a limit no core reaches.
func BenchmarkFixedParallel(b *testing.B) {
	l := mustNew(b, Config{Limit: 1 << 20})
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if p, err := l.Acquire(ctx); err == nil {
				p.Done(Success)
			}
		}
	})
}

// BenchmarkThrottlerAdmitted is throttle's Throttler, admitted, in the
// same run.
func BenchmarkThrottlerAdmitted(b *testing.B) {
	th, _ := throttle.New(throttle.Config{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if th.Admit(ctx) != nil {
			b.Fatal("rejected")
		}
		th.Done(false)
	}
}

// BenchmarkBreakerClosed is a closed breaker's Allow and Record, in the
// same run.
func BenchmarkBreakerClosed(b *testing.B) {
	br, _ := breaker.New(breaker.Config{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		t, err := br.Allow(ctx)
		if err != nil {
			b.Fatal(err)
		}
		t.Record(breaker.Success)
	}
}

func mustNew(tb testing.TB, cfg Config) *Limiter {
	tb.Helper()
	l, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

var sinkDuration time.Duration

// BenchmarkTwoClockReads is the floor under an adaptive limit's measured
// call: the two monotonic clock reads that measure its RTT.
func BenchmarkTwoClockReads(b *testing.B) {
	for b.Loop() {
		start := time.Since(epoch0)
		sinkDuration += time.Since(epoch0) - start
	}
}
