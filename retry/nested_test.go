package retry_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
)

var reasons = []error{retry.ErrExhausted, retry.ErrPermanent, retry.ErrDeadline, retry.ErrCanceled, retry.ErrRetryAfterTooLong, retry.ErrRejected, retry.ErrBudget}

// checkOneReason asserts that err matches want and no other reason.
func checkOneReason(t *testing.T, err, want error) {
	t.Helper()
	for _, r := range reasons {
		if got := errors.Is(err, r); got != (r == want) {
			t.Errorf("errors.Is(err, %v) = %v, want %v (err: %v)", r, got, r == want, err)
		}
	}
}

// An outer loop around an operation that runs its own loop: the outer
// error matches only its own reason; Permanent and wait hints inside the
// inner error act on the outer loop as if the operation had returned them.
func TestNestedLoops(t *testing.T) {
	inner := backoff.Policy{Initial: -1, Retries: 2}
	outer := backoff.Policy{Initial: time.Second, Multiplier: 1, Retries: 1, Jitter: backoff.NoJitter}
	tests := []struct {
		name        string
		innerErr    error // what every inner attempt returns
		innerOpts   []retry.Option
		timeout     time.Duration
		want        error
		outerTries  int
		innerCalls  int
		outerAtSecs []int
	}{
		{name: "inner exhausted is retried", innerErr: errFlaky, want: retry.ErrExhausted, outerTries: 2, innerCalls: 6, outerAtSecs: []int{0, 1}},
		{name: "inner permanent stops the outer", innerErr: retry.Permanent(errFlaky), want: retry.ErrPermanent, outerTries: 1, innerCalls: 1, outerAtSecs: []int{0}},
		{name: "inner hint sets the outer wait", innerErr: retry.After(5*time.Second, errFlaky), innerOpts: []retry.Option{retry.WithMaxRetryAfter(time.Second)},
			want: retry.ErrExhausted, outerTries: 2, innerCalls: 2, outerAtSecs: []int{0, 5}},
		{name: "outer deadline", innerErr: errFlaky, timeout: 500 * time.Millisecond, want: retry.ErrDeadline, outerTries: 1, innerCalls: 3, outerAtSecs: []int{0}},
		{name: "outer budget", innerErr: errFlaky, want: retry.ErrBudget, outerTries: 1, innerCalls: 3, outerAtSecs: []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := timeoutContext(t, tt.timeout)
				var opts []retry.Option
				switch tt.want {
				case retry.ErrBudget:
					opts = append(opts, retry.WithBudget(&countingBudget{allow: false}))
				case retry.ErrDeadline:
					// An outer attempt needs a second: 500 ms leaves no
					// time for another, while the inner loop, needing the
					// default reserve, makes all its attempts.
					opts = append(opts, retry.WithDeadlineReserve(time.Second))
				}
				start := time.Now()
				var at []int
				calls := 0
				err := retry.Run(ctx, outer, func(ctx context.Context) error {
					at = append(at, int(time.Since(start)/time.Second))
					return retry.Run(ctx, inner, func(context.Context) error { calls++; return tt.innerErr }, tt.innerOpts...)
				}, opts...)
				re := checkError(t, err, tt.want, tt.outerTries, errFlaky)
				checkOneReason(t, err, tt.want)
				if calls != tt.innerCalls || fmt.Sprint(at) != fmt.Sprint(tt.outerAtSecs) {
					t.Errorf("inner calls %d, outer attempts at %v s; want %d, %v", calls, at, tt.innerCalls, tt.outerAtSecs)
				}
				// The inner error stays reachable for a caller who wants it.
				var innerErr *retry.Error
				if !errors.As(re.Last, &innerErr) || innerErr == re {
					t.Errorf("errors.As(Last, *retry.Error) did not find the inner error in %v", re.Last)
				}
			})
		})
	}
}

// The caller's context canceled during an inner wait: both loops end, and
// the outer error matches ErrCanceled alone, plus the context's error.
func TestNestedCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		p := backoff.Policy{Initial: time.Second, Jitter: backoff.NoJitter}
		err := retry.Run(ctx, p, func(ctx context.Context) error {
			return retry.Run(ctx, p, func(context.Context) error {
				time.AfterFunc(500*time.Millisecond, cancel)
				return errFlaky
			})
		})
		checkError(t, err, retry.ErrCanceled, 1, errFlaky)
		checkOneReason(t, err, retry.ErrCanceled)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("errors.Is(%v, context.Canceled) = false, want true", err)
		}
	})
}

// Sentinels met in Last outside an *Error do not add a reason either.
func TestBareSentinelInLast(t *testing.T) {
	err := retry.Run(t.Context(), backoff.Policy{Retries: backoff.NoRetries}, func(context.Context) error {
		return fmt.Errorf("upstream: %w", retry.ErrBudget)
	})
	checkOneReason(t, err, retry.ErrExhausted)
}
