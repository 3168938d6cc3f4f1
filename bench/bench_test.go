package bench

import (
	"context"
	"errors"
	"testing"
	"time"

	avast "github.com/avast/retry-go/v4"
	avast5 "github.com/avast/retry-go/v5"
	cenkalti "github.com/cenkalti/backoff/v5"
	cenkalti7 "github.com/cenkalti/backoff/v7"
	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	sethvargo "github.com/sethvargo/go-retry"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
)

// The errors are allocated once so that the benchmarks measure the
// libraries, not the operation.
var (
	errFlaky          = errors.New("flaky")
	errFlakyRetryable = sethvargo.RetryableError(errFlaky) // sethvargo retries only errors marked so
)

// flaky fails twice then succeeds, in every call of the library: calls
// counts the attempts of the current call.
type flaky struct {
	calls int
	err   error
}

func (f *flaky) attempt() (int, error) {
	f.calls++
	if f.calls%3 != 0 {
		return 0, f.err
	}
	return f.calls, nil
}

// lib is one library's idiomatic call: run op with up to 3 retries and no
// delay, and return its value.
type lib struct {
	name string
	// prepare builds what the library lets a caller reuse and returns the
	// call; op is the operation to retry.
	prepare func(ctx context.Context, op func() (int, error)) func() (int, error)
	err     error // the error the operation returns
}

var libs = []lib{
	{"again", func(ctx context.Context, op func() (int, error)) func() (int, error) {
		p := backoff.Policy{Initial: -1, Retries: 3}
		f := func(context.Context) (int, error) { return op() }
		return func() (int, error) { return retry.Do(ctx, p, f) }
	}, errFlaky},
	{"cenkalti", func(ctx context.Context, op func() (int, error)) func() (int, error) {
		opts := []cenkalti.RetryOption{cenkalti.WithBackOff(&cenkalti.ZeroBackOff{}), cenkalti.WithMaxTries(4)}
		return func() (int, error) { return cenkalti.Retry(ctx, op, opts...) }
	}, errFlaky},
	{"cenkalti7", func(ctx context.Context, op func() (int, error)) func() (int, error) {
		opts := []cenkalti7.RetryOption{cenkalti7.WithBackOff(&cenkalti7.ZeroBackOff{}), cenkalti7.WithMaxTries(4)}
		return func() (int, error) { return cenkalti7.Retry(ctx, op, opts...) }
	}, errFlaky},
	{"avast5", func(ctx context.Context, op func() (int, error)) func() (int, error) {
		r := avast5.NewWithData[int](avast5.Attempts(4), avast5.Delay(0), avast5.DelayType(avast5.FixedDelay), avast5.Context(ctx))
		return func() (int, error) { return r.Do(op) }
	}, errFlaky},
	{"avast", func(ctx context.Context, op func() (int, error)) func() (int, error) {
		opts := []avast.Option{avast.Attempts(4), avast.Delay(0), avast.DelayType(avast.FixedDelay), avast.Context(ctx)}
		return func() (int, error) { return avast.DoWithData(op, opts...) }
	}, errFlaky},
	{"sethvargo", func(ctx context.Context, op func() (int, error)) func() (int, error) {
		f := func(context.Context) (int, error) { return op() }
		zero := sethvargo.BackoffFunc(func() (time.Duration, bool) { return 0, false })
		return func() (int, error) {
			// A sethvargo Backoff counts retries, so each call needs its own.
			return sethvargo.DoValue(ctx, sethvargo.WithMaxRetries(3, zero), f)
		}
	}, errFlakyRetryable},
	{"failsafe", func(ctx context.Context, op func() (int, error)) func() (int, error) {
		exec := failsafe.With(retrypolicy.NewBuilder[int]().WithMaxRetries(3).WithDelay(0).Build()).WithContext(ctx)
		return func() (int, error) { return exec.Get(op) }
	}, errFlaky},
}

func BenchmarkSuccess(b *testing.B) {
	for _, l := range libs {
		b.Run(l.name, func(b *testing.B) {
			call := l.prepare(b.Context(), func() (int, error) { return 1, nil })
			b.ReportAllocs()
			for b.Loop() {
				if v, err := call(); v != 1 || err != nil {
					b.Fatalf("call() = %v, %v; want 1, nil", v, err)
				}
			}
		})
	}
}

func BenchmarkFailTwice(b *testing.B) {
	for _, l := range libs {
		b.Run(l.name, func(b *testing.B) {
			f := flaky{err: l.err}
			call := l.prepare(b.Context(), f.attempt)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := call(); err != nil {
					b.Fatalf("call() = %v, want success on the third attempt", err)
				}
			}
		})
	}
}
