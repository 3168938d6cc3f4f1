package bench

import (
	"context"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/sony/gobreaker/v2"

	"github.com/again-go/again/breaker"
)

// The closed state's success path of each circuit breaker, configured alike
// where the library allows it: trip at 50 % failures of at least 20 calls
// over a 10 s window in 1 s buckets.

type breakerLib struct {
	name string
	// prepare returns one guarded call of an operation that succeeds.
	prepare func() func() (int, error)
}

var breakerLibs = []breakerLib{
	{"again/Do", func() func() (int, error) {
		b, _ := breaker.New(breaker.Config{})
		ctx := context.Background()
		op := func(context.Context) error { return nil }
		return func() (int, error) { return 1, b.Do(ctx, op) }
	}},
	{"again/Call", func() func() (int, error) {
		b, _ := breaker.New(breaker.Config{})
		ctx := context.Background()
		op := func(context.Context) (int, error) { return 1, nil }
		return func() (int, error) { return breaker.Call(ctx, b, op) }
	}},
	{"gobreaker/Execute", func() func() (int, error) {
		cb := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{
			Interval:     10 * time.Second,
			BucketPeriod: time.Second,
			ReadyToTrip: func(c gobreaker.Counts) bool {
				return c.Requests >= 20 && c.TotalFailures*2 >= c.Requests
			},
		})
		op := func() (int, error) { return 1, nil }
		return func() (int, error) { return cb.Execute(op) }
	}},
	{"failsafe/standalone", func() func() (int, error) {
		cb := circuitbreaker.NewBuilder[int]().WithFailureRateThreshold(0.5, 20, 10*time.Second).Build()
		return func() (int, error) {
			if !cb.TryAcquirePermit() {
				return 0, circuitbreaker.ErrOpen
			}
			cb.RecordSuccess()
			return 1, nil
		}
	}},
	{"failsafe/executor", func() func() (int, error) {
		cb := circuitbreaker.NewBuilder[int]().WithFailureRateThreshold(0.5, 20, 10*time.Second).Build()
		ex := failsafe.With[int](cb)
		op := func() (int, error) { return 1, nil }
		return func() (int, error) { return ex.Get(op) }
	}},
}

func BenchmarkBreakerSuccess(b *testing.B) {
	for _, l := range breakerLibs {
		b.Run(l.name, func(b *testing.B) {
			call := l.prepare()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := call(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The same, from every core at once on one shared breaker.
func BenchmarkBreakerSuccessParallel(b *testing.B) {
	for _, l := range breakerLibs {
		b.Run(l.name, func(b *testing.B) {
			call := l.prepare()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := call(); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
