package retry_test

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
)

var errFlaky = errors.New("flaky")

// failTwice returns an operation that fails twice, then succeeds, forever:
// its errors are preallocated so that any allocation measured is the loop's.
type failTwice struct{ n int }

func (f *failTwice) op(context.Context) (int, error) {
	f.n++
	if f.n%3 != 0 {
		return 0, errFlaky
	}
	return f.n, nil
}

func succeedOp(context.Context) (int, error) { return 1, nil }

func TestAllocs(t *testing.T) {
	ctx := context.Background()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Each fail-twice call spends about two tokens: a budget of 10 would
	// empty within a few runs, and the runs after that would measure the
	// ErrBudget path instead of retrying (hidden by AllocsPerRun's rounding
	// down of the average), so this one is large enough for every run.
	budget := retry.TokenBucket{MaxTokens: 1e6}
	zero := backoff.Policy{Initial: -1, Retries: 3}
	hook := func(retry.Event) {}
	logger := slog.New(slog.DiscardHandler)
	opts := []retry.Option{retry.WithBudget(&budget), retry.WithOnRetry(hook), retry.WithLogger(logger), retry.WithMaxRetryAfter(0)}
	tests := []struct {
		name string
		run  func() error
	}{
		{"success", func() error { _, err := retry.Do(ctx, backoff.Default(), succeedOp); return err }},
		{"success cancelable ctx", func() error { _, err := retry.Do(cctx, backoff.Default(), succeedOp); return err }},
		{"success with options", func() error {
			_, err := retry.Do(ctx, backoff.Default(), succeedOp, retry.WithBudget(&budget), retry.WithOnRetry(hook), retry.WithLogger(logger))
			return err
		}},
		{"run success", func() error { return retry.Run(ctx, backoff.Default(), func(context.Context) error { return nil }) }},
		{"fail twice zero delay", func() error { f := failTwice{}; _, err := retry.Do(ctx, zero, f.op); return err }},
		{"fail twice zero delay options", func() error { f := failTwice{}; _, err := retry.Do(cctx, zero, f.op, opts...); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var failed error
			got := testing.AllocsPerRun(100, func() {
				if err := tt.run(); err != nil {
					failed = err
				}
			})
			if failed != nil {
				t.Fatalf("a run failed (%v): the allocations measured are not the success path's", failed)
			}
			if got != 0 {
				t.Errorf("allocations = %v, want 0", got)
			}
		})
	}
}

func BenchmarkDo(b *testing.B) {
	ctx := context.Background()
	b.Run("success", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = retry.Do(ctx, backoff.Default(), succeedOp)
		}
	})
	b.Run("fail twice zero delay", func(b *testing.B) {
		b.ReportAllocs()
		p := backoff.Policy{Initial: -1, Retries: 3}
		var f failTwice
		for b.Loop() {
			_, _ = retry.Do(ctx, p, f.op)
		}
	})
	b.Run("fail twice with hook", func(b *testing.B) {
		b.ReportAllocs()
		p := backoff.Policy{Initial: -1, Retries: 3}
		var f failTwice
		hook := func(retry.Event) {}
		for b.Loop() {
			_, _ = retry.Do(ctx, p, f.op, retry.WithOnRetry(hook))
		}
	})
}

// With real waits a call allocates its timer (and the context's Done
// channel) once: the count must not grow with the number of retries.
func TestAllocsPerRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		allocs := func(retries int) float64 {
			p := backoff.Policy{Initial: time.Millisecond, Retries: retries, Jitter: backoff.NoJitter}
			return testing.AllocsPerRun(20, func() {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				n := 0
				_, _ = retry.Do(ctx, p, func(context.Context) (int, error) {
					if n++; n <= retries {
						return 0, errFlaky
					}
					return n, nil
				})
			})
		}
		one, many := allocs(1), allocs(10)
		if many != one {
			t.Errorf("allocations with 10 retries = %v, with 1 retry = %v; want equal (none per retry)", many, one)
		}
	})
}

func TestMaxAttemptsSaturates(t *testing.T) {
	var got retry.Event
	n := 0
	// Retries MaxInt is backoff.UntilDeadline, which needs a deadline.
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	_ = retry.Run(ctx, backoff.Policy{Initial: -1, Retries: math.MaxInt}, func(context.Context) error {
		if n++; n < 2 {
			return errFlaky
		}
		return nil
	}, retry.WithOnRetry(func(e retry.Event) { got = e }))
	if got.MaxAttempts != math.MaxInt {
		t.Errorf("MaxAttempts with Retries MaxInt = %d, want %d (no overflow)", got.MaxAttempts, math.MaxInt)
	}
}
