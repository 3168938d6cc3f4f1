package breaker_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
	"github.com/again-go/again/retry"
)

// These tests run inside testing/synctest bubbles: the breaker's real clock
// (Config.Clock nil) and retry's timers both run on the bubble's fake time.

var errDown = errors.New("connection refused")

// countingBudget counts what retry spends and refunds.
type countingBudget struct{ successes, failures atomic.Int32 }

func (b *countingBudget) Success()      { b.successes.Add(1) }
func (b *countingBudget) Failure() bool { b.failures.Add(1); return true }

// openFor returns a breaker that trips on its first failure and stays open
// for d, exactly.
func openFor(t *testing.T, d time.Duration) *breaker.Breaker {
	t.Helper()
	b, err := breaker.New(breaker.Config{
		MinCalls: -1,
		Open:     backoff.Policy{Initial: d, Multiplier: 2, Max: time.Hour, Jitter: backoff.NoJitter},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Retry around the breaker: every attempt goes through the breaker. A
// rejection makes retry wait until the breaker admits a probe, instead of
// burning attempts, and costs the budget nothing.
func TestRetryAroundBreakerWaitsForTheProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := openFor(t, 5*time.Second)
		budget := &countingBudget{}
		var calls []time.Duration
		start := time.Now()
		op := func(ctx context.Context) (string, error) {
			return breaker.Call(ctx, b, func(context.Context) (string, error) {
				calls = append(calls, time.Since(start))
				if len(calls) == 1 {
					return "", errDown // trips the breaker
				}
				return "ok", nil
			})
		}
		p := backoff.Policy{Initial: 100 * time.Millisecond, Multiplier: 2, Max: time.Second, Retries: 5, Jitter: backoff.NoJitter}
		v, err := retry.Do(context.Background(), p, op, retry.WithBudget(budget))
		if v != "ok" || err != nil {
			t.Fatalf("Do() = %q, %v, want ok", v, err)
		}
		// Attempt 1 fails at 0 and trips; attempt 2 at 100ms is rejected
		// with a hint of 4.9s; attempt 3, the probe, runs at 5s.
		if len(calls) != 2 || calls[0] != 0 || calls[1] != 5*time.Second {
			t.Fatalf("the dependency was called at %v, want at 0s and 5s", calls)
		}
		if f, s := budget.failures.Load(), budget.successes.Load(); f != 1 || s != 1 {
			t.Errorf("budget: %d failures, %d successes, want 1 and 1 (the rejection costs nothing)", f, s)
		}
	})
}

// When the breaker's hint is past the deadline or the longest hint allowed,
// retry stops at once with the rejection as its last error.
func TestRetryAroundBreakerStopsAtOnce(t *testing.T) {
	tests := []struct {
		name    string
		ctx     func() (context.Context, context.CancelFunc)
		opts    []retry.Option
		isolate bool
		reason  error
	}{
		{
			name: "past the deadline",
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 2*time.Second)
			},
			reason: retry.ErrDeadline,
		},
		{
			name:   "longer than the longest hint",
			ctx:    func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			opts:   []retry.Option{retry.WithMaxRetryAfter(time.Second)},
			reason: retry.ErrRejected,
		},
		{
			name:    "isolated",
			ctx:     func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			isolate: true,
			reason:  breaker.ErrIsolated,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := openFor(t, 5*time.Second)
				_ = b.Do(context.Background(), func(context.Context) error { return errDown })
				if tt.isolate {
					b.Isolate()
				}
				ctx, cancel := tt.ctx()
				defer cancel()
				start := time.Now()
				ran := 0
				err := retry.Run(ctx, backoff.Default(), func(ctx context.Context) error {
					return b.Do(ctx, func(context.Context) error { ran++; return nil })
				}, tt.opts...)
				if !errors.Is(err, tt.reason) || !errors.Is(err, breaker.ErrOpen) {
					t.Fatalf("Run() = %v, want %v and breaker.ErrOpen", err, tt.reason)
				}
				if ran != 0 || time.Since(start) != 0 {
					t.Fatalf("the dependency ran %d times, Run took %v, want 0 and 0", ran, time.Since(start))
				}
				var re *retry.Error
				if errors.As(err, &re) && re.Attempts != 1 {
					t.Errorf("Attempts = %d, want 1", re.Attempts)
				}
			})
		})
	}
}

// Breaker around retry: the breaker sees one outcome per retried call, and
// once open it rejects whole calls without starting their retries.
func TestBreakerAroundRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := breaker.New(breaker.Config{MinCalls: 2, FailureRatio: 1})
		if err != nil {
			t.Fatal(err)
		}
		attempts := 0
		p := backoff.Policy{Initial: 10 * time.Millisecond, Multiplier: 2, Max: time.Second, Retries: 2, Jitter: backoff.NoJitter}
		call := func() error {
			return b.Do(context.Background(), func(ctx context.Context) error {
				return retry.Run(ctx, p, func(context.Context) error { attempts++; return errDown })
			})
		}
		for i := range 2 {
			if err := call(); !errors.Is(err, retry.ErrExhausted) {
				t.Fatalf("call %d: %v, want retry.ErrExhausted", i+1, err)
			}
		}
		if attempts != 6 || b.State() != breaker.Open {
			t.Fatalf("after two exhausted calls: %d attempts, breaker %v; want 6 and open", attempts, b.State())
		}
		if err := call(); !errors.Is(err, breaker.ErrOpen) || attempts != 6 {
			t.Fatalf("third call: %v after %d attempts, want ErrOpen without attempts", err, attempts)
		}
	})
}
