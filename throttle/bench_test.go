package throttle

import (
	"context"
	"testing"
	"time"

	"github.com/again-go/again/retry"
)

// benchAdmitted measures a's success path: Admit, then Done, of a request
// it admits; an Admitter that rejects one fails the benchmark.
func benchAdmitted(b *testing.B, a retry.Admitter) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if a.Admit(ctx) != nil {
			b.Fatal("rejected")
		}
		a.Done(false)
	}
}

// benchParallel is benchAdmitted from every core at once.
func benchParallel(b *testing.B, a retry.Admitter) {
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if a.Admit(ctx) == nil {
				a.Done(false)
			}
		}
	})
}

// settledRate is a Rate that has run for an hour before any throttle, as
// a long-lived client's has: CUBIC's rate is then far above the measured
// one.
func settledRate() *Rate {
	r, _ := NewRate(RateConfig{})
	r.lastThrottle -= int64(time.Hour) // made an hour ago
	return r
}

// enabledRate is a Rate whose bucket is on, with a fill rate far above
// what one benchmark loop sends: throttled once, at a measured rate of a
// billion a second, so that Admit always finds a token.
func enabledRate() *Rate {
	r, _ := NewRate(RateConfig{})
	r.measured = 1e9
	r.DoneAt(time.Now(), true)
	return r
}

// BenchmarkThrottlerAdmitted is the success path of a Throttler that
// rejects nothing, on the real clock.
func BenchmarkThrottlerAdmitted(b *testing.B) {
	th, _ := New(Config{})
	benchAdmitted(b, th)
}

// BenchmarkThrottlerAdmittedAt is the same with the time given (AdmitAt),
// as a simulator or a caller that already read the clock does.
func BenchmarkThrottlerAdmittedAt(b *testing.B) {
	th, _ := New(Config{})
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		if th.AdmitAt(now) != nil {
			b.Fatal("rejected")
		}
		th.Done(false)
	}
}

// BenchmarkThrottlerParallel is the success path from every core at once.
func BenchmarkThrottlerParallel(b *testing.B) {
	th, _ := New(Config{})
	benchParallel(b, th)
}

// BenchmarkRateAdmitted is a Rate's success path before any throttle:
// Admit, then Done (which updates the measured rate and CUBIC).
func BenchmarkRateAdmitted(b *testing.B) {
	r, _ := NewRate(RateConfig{})
	benchAdmitted(b, r)
}

// BenchmarkRateAdmittedSettled is the same on a settled Rate.
func BenchmarkRateAdmittedSettled(b *testing.B) { benchAdmitted(b, settledRate()) }

// BenchmarkRateAdmittedEnabled is the success path once a throttle turned
// the bucket on, below the learned rate: Admit takes a token, Done grows
// the rate.
func BenchmarkRateAdmittedEnabled(b *testing.B) { benchAdmitted(b, enabledRate()) }

// BenchmarkRateParallel is BenchmarkRateAdmittedSettled from every core.
func BenchmarkRateParallel(b *testing.B) { benchParallel(b, settledRate()) }

// BenchmarkRateParallelEnabled is BenchmarkRateAdmittedEnabled from every
// core.
func BenchmarkRateParallelEnabled(b *testing.B) { benchParallel(b, enabledRate()) }
