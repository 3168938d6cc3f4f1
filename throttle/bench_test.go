package throttle

import (
	"context"
	"testing"
	"time"
)

// BenchmarkThrottlerAdmitted is the success path: Admit then Done of a
// request admitted by a Throttler that rejects nothing, on the real clock.
func BenchmarkThrottlerAdmitted(b *testing.B) {
	th, _ := New(Config{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if th.Admit(ctx) != nil {
			b.Fatal("rejected")
		}
		th.Done(false)
	}
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
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if th.Admit(ctx) == nil {
				th.Done(false)
			}
		}
	})
}

// BenchmarkRateAdmitted is a Rate's success path before any throttle:
// Admit, then Done (which updates the measured rate and CUBIC).
func BenchmarkRateAdmitted(b *testing.B) {
	r, _ := NewRate(RateConfig{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if r.Admit(ctx) != nil {
			b.Fatal("rejected")
		}
		r.Done(false)
	}
}

// BenchmarkRateAdmittedSettled is the same on a Rate that has run for an
// hour before any throttle, as a long-lived client's has: Done then takes
// its quiet path (one clock read and one atomic add, see DoneAt).
func BenchmarkRateAdmittedSettled(b *testing.B) {
	r, _ := NewRate(RateConfig{})
	r.lastThrottle -= int64(time.Hour) // made an hour ago
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if r.Admit(ctx) != nil {
			b.Fatal("rejected")
		}
		r.Done(false)
	}
}

// BenchmarkRateParallel is BenchmarkRateAdmittedSettled from every core.
func BenchmarkRateParallel(b *testing.B) {
	r, _ := NewRate(RateConfig{})
	r.lastThrottle -= int64(time.Hour)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if r.Admit(ctx) == nil {
				r.Done(false)
			}
		}
	})
}
