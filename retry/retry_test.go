package retry_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// constRand always returns u.
type constRand float64

func (r constRand) Float64() float64 { return float64(r) }

// script is an operation that returns its errors in order, then succeeds,
// and records when each attempt started (relative to its creation, on the
// synctest clock).
type script struct {
	errs  []error
	start time.Time
	at    []time.Duration
}

func newScript(errs ...error) *script { return &script{errs: errs, start: time.Now()} }

func (s *script) op(context.Context) (string, error) {
	n := len(s.at)
	s.at = append(s.at, time.Since(s.start))
	if n < len(s.errs) {
		return "", s.errs[n]
	}
	return "ok", nil
}

// failing returns n copies of err.
func failing(n int, err error) []error {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = err
	}
	return errs
}

// timeoutContext returns the test's context, with a timeout of d unless d is
// zero.
func timeoutContext(t *testing.T, d time.Duration) context.Context {
	if d == 0 {
		return t.Context()
	}
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

func ms(n ...int) []time.Duration {
	d := make([]time.Duration, len(n))
	for i, v := range n {
		d[i] = time.Duration(v) * time.Millisecond
	}
	return d
}

func equalDurations(a, b []time.Duration) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// checkError asserts that err is a *retry.Error with the given reason and
// attempts, and that it unwraps to last.
func checkError(t *testing.T, err error, reason error, attempts int, last error) *retry.Error {
	t.Helper()
	var re *retry.Error
	if !errors.As(err, &re) {
		t.Fatalf("error = %v (%T), want *retry.Error", err, err)
	}
	if !errors.Is(err, reason) || re.Reason != reason {
		t.Errorf("Reason = %v, want %v", re.Reason, reason)
	}
	if re.Attempts != attempts {
		t.Errorf("Attempts = %d, want %d", re.Attempts, attempts)
	}
	if last != nil && !errors.Is(err, last) {
		t.Errorf("errors.Is(%v, %v) = false, want true", err, last)
	}
	return re
}

var policy = backoff.Policy{Initial: 100 * time.Millisecond, Multiplier: 2, Retries: 3, Jitter: backoff.NoJitter}

// 1. The first attempt runs at once; attempts = retries + 1; the delays come
// from the policy, jittered with the injected source; no sleep after the last.
func TestSchedule(t *testing.T) {
	tests := []struct {
		name     string
		p        backoff.Policy
		rnd      backoff.Rand
		failures int
		at       []time.Duration
		err      error
	}{
		{"success at once", policy, nil, 0, ms(0), nil},
		{"two failures", policy, nil, 2, ms(0, 100, 300), nil},
		{"exhausted", policy, nil, 10, ms(0, 100, 300, 700), retry.ErrExhausted},
		{"no retries", backoff.Policy{Retries: backoff.NoRetries}, nil, 10, ms(0), retry.ErrExhausted},
		{"full jitter", backoff.Policy{Initial: 100 * time.Millisecond, Retries: 2}, constRand(0.5), 10, ms(0, 50, 150), retry.ErrExhausted},
		{"capped", backoff.Policy{Initial: 100 * time.Millisecond, Max: 150 * time.Millisecond, Retries: 3, Jitter: backoff.NoJitter}, nil, 10, ms(0, 100, 250, 400), retry.ErrExhausted},
		{"zero delays", backoff.Policy{Initial: -1, Retries: 5}, nil, 10, ms(0, 0, 0, 0, 0, 0), retry.ErrExhausted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newScript(failing(tt.failures, errFlaky)...)
				v, err := retry.Do(t.Context(), tt.p, s.op, retry.WithRand(tt.rnd))
				if !equalDurations(s.at, tt.at) {
					t.Errorf("attempts started at %v, want %v", s.at, tt.at)
				}
				if tt.err == nil {
					if err != nil || v != "ok" {
						t.Errorf("Do = %q, %v; want ok, nil", v, err)
					}
					return
				}
				re := checkError(t, err, tt.err, len(tt.at), errFlaky)
				if want := tt.at[len(tt.at)-1]; re.Elapsed != want || time.Since(s.start) != want {
					t.Errorf("Elapsed = %v, returned after %v; want %v (no wait after the last attempt)", re.Elapsed, time.Since(s.start), want)
				}
				if v != "" {
					t.Errorf("Do value = %q on failure, want the zero value", v)
				}
			})
		})
	}
}

// An invalid policy is reported in place of the first retry: the first
// attempt runs (a success is returned as under any policy), and a failure
// never goes on with a policy that means nothing. NewLoop reports it
// before the first attempt.
func TestInvalidPolicy(t *testing.T) {
	invalid := backoff.Policy{Multiplier: 0.5}
	tests := []struct {
		name    string
		err     error // the first attempt's
		wantErr bool
	}{
		{"first attempt succeeds", nil, false},
		{"first attempt fails", errFlaky, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := retry.Run(context.Background(), invalid, func(context.Context) error { calls++; return tt.err })
			if calls != 1 {
				t.Errorf("Run with Multiplier 0.5 made %d attempts, want 1", calls)
			}
			if got := errors.Is(err, backoff.ErrInvalid); got != tt.wantErr || (!tt.wantErr && err != nil) {
				t.Errorf("Run with Multiplier 0.5 = %v; want backoff.ErrInvalid: %v", err, tt.wantErr)
			}
		})
	}
	if _, err := retry.NewLoop(context.Background(), invalid); !errors.Is(err, backoff.ErrInvalid) {
		t.Errorf("NewLoop with Multiplier 0.5 = %v, want backoff.ErrInvalid", err)
	}
}

// 2. Only retryable failures are retried.
func TestNotRetried(t *testing.T) {
	errNotFound := errors.New("not found")
	notFound := retry.WithClassifier(func(err error) bool { return !errors.Is(err, errNotFound) })
	tests := []struct {
		name     string
		errs     []error
		opts     []retry.Option
		reason   error
		attempts int
	}{
		{"permanent", []error{errFlaky, retry.Permanent(errNotFound)}, nil, retry.ErrPermanent, 2},
		{"permanent wrapped", []error{fmt.Errorf("get: %w", retry.Permanent(errNotFound))}, nil, retry.ErrPermanent, 1},
		{"permanent beats hint", []error{retry.After(time.Second, retry.Permanent(errNotFound))}, nil, retry.ErrPermanent, 1},
		{"classifier rejects", []error{errFlaky, errNotFound}, []retry.Option{notFound}, retry.ErrPermanent, 2},
		{"classifier accepts", failing(10, errFlaky), []retry.Option{notFound}, retry.ErrExhausted, 4},
		{"nil classifier", failing(10, errNotFound), []retry.Option{notFound, retry.WithClassifier(nil)}, retry.ErrExhausted, 4},
		{"op's own deadline is retried", failing(10, context.DeadlineExceeded), nil, retry.ErrExhausted, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newScript(tt.errs...)
				_, err := retry.Do(t.Context(), policy, s.op, tt.opts...)
				checkError(t, err, tt.reason, tt.attempts, tt.errs[tt.attempts-1])
				if len(s.at) != tt.attempts {
					t.Errorf("op ran %d times, want %d", len(s.at), tt.attempts)
				}
			})
		})
	}
}

func TestPermanentAndAfterOfNil(t *testing.T) {
	if err := retry.Permanent(nil); err != nil {
		t.Errorf("Permanent(nil) = %v, want nil", err)
	}
	if err := retry.After(time.Second, nil); err != nil {
		t.Errorf("After(1s, nil) = %v, want nil", err)
	}
	if retry.IsPermanent(errFlaky) || !retry.IsPermanent(fmt.Errorf("x: %w", retry.Permanent(errFlaky))) {
		t.Error("IsPermanent does not find Permanent in the chain")
	}
	if err := retry.Permanent(errFlaky); err.Error() != errFlaky.Error() || !errors.Is(err, errFlaky) {
		t.Errorf("Permanent(errFlaky) = %q, want the same message and errors.Is", err)
	}
}

// 2. The caller's context errors are not retried.
func TestCallerContext(t *testing.T) {
	t.Run("op returns ctx error", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			n := 0
			err := retry.Run(ctx, policy, func(ctx context.Context) error {
				n++
				cancel()
				return ctx.Err()
			})
			checkError(t, err, retry.ErrCanceled, 1, context.Canceled)
			if n != 1 {
				t.Errorf("op ran %d times, want 1", n)
			}
		})
	})
	t.Run("op fails otherwise after ctx ended", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		err := retry.Run(ctx, policy, func(context.Context) error {
			n++
			cancel() // e.g. the connection was closed because ctx ended
			return errFlaky
		})
		checkError(t, err, retry.ErrCanceled, 1, errFlaky)
		if !errors.Is(err, context.Canceled) || n != 1 {
			t.Errorf("error %v after %d attempts, want context.Canceled after 1", err, n)
		}
	})
	t.Run("done before the first attempt", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		errShutdown := errors.New("shutdown")
		cancel(errShutdown)
		err := retry.Run(ctx, policy, func(context.Context) error { t.Error("op called with a done context"); return nil })
		checkError(t, err, retry.ErrCanceled, 0, nil)
		if !errors.Is(err, errShutdown) || !errors.Is(err, context.Canceled) {
			t.Errorf("error %v does not match both the cause and context.Canceled", err)
		}
	})
}

// 3. Retry-After hints: a hint replaces one wait of the schedule, but a
// server's is never shorter than the policy's first delay; a rejection's
// is waited as it is.
func TestRetryAfter(t *testing.T) {
	tests := []struct {
		name     string
		p        *backoff.Policy // nil: policy
		errs     []error
		opts     []retry.Option
		timeout  time.Duration
		at       []time.Duration
		reason   error
		hint     time.Duration
		attempts int
	}{
		{name: "replaces the delay", errs: []error{retry.After(5*time.Second, errFlaky), errFlaky}, at: ms(0, 5000, 5200)},
		{name: "shorter than the schedule, longer than the first delay", errs: []error{errFlaky, errFlaky, retry.After(150*time.Millisecond, errFlaky)}, at: ms(0, 100, 300, 450)},
		{name: "shorter than the first delay waits the first delay", errs: []error{errFlaky, retry.After(time.Millisecond, errFlaky)}, at: ms(0, 100, 200)},
		{name: "zero waits the first delay", errs: []error{retry.After(0, errFlaky), retry.After(0, errFlaky)}, at: ms(0, 100, 200)},
		{name: "zero waits the default first delay", p: &backoff.Policy{}, errs: []error{retry.After(0, errFlaky)}, at: ms(0, 500)},
		{name: "zero waits the capped first delay", p: &backoff.Policy{Initial: time.Second, Max: 200 * time.Millisecond}, errs: []error{retry.After(0, errFlaky)}, at: ms(0, 200)},
		{name: "zero is kept by a policy without waits", p: &backoff.Policy{Initial: -1}, errs: []error{retry.After(0, errFlaky)}, at: ms(0, 0)},
		{name: "a rejection's hint is not floored", errs: []error{refusal{wait: time.Millisecond}, refusal{wait: 0}}, at: ms(0, 1, 1)},
		{name: "sub-second precision", errs: []error{retry.After(1500*time.Millisecond, errFlaky)}, at: ms(0, 1500)},
		{name: "wrapped", errs: []error{fmt.Errorf("get: %w", retry.After(2*time.Second, errFlaky))}, at: ms(0, 2000)},
		{name: "negative is zero, which waits the first delay", errs: []error{retry.After(-time.Second, errFlaky)}, at: ms(0, 100)},
		{name: "counts as a retry", errs: failing(10, retry.After(time.Second, errFlaky)), at: ms(0, 1000, 2000, 3000),
			reason: retry.ErrExhausted, hint: time.Second, attempts: 4},
		{name: "above the default max", errs: []error{errFlaky, retry.After(61*time.Second, errFlaky)}, at: ms(0, 100),
			reason: retry.ErrRetryAfterTooLong, hint: 61 * time.Second, attempts: 2},
		{name: "default max itself", errs: []error{retry.After(time.Minute, errFlaky)}, at: ms(0, 60000)},
		{name: "above a custom max", errs: []error{retry.After(11*time.Second, errFlaky)}, opts: []retry.Option{retry.WithMaxRetryAfter(10 * time.Second)},
			at: ms(0), reason: retry.ErrRetryAfterTooLong, hint: 11 * time.Second, attempts: 1},
		{name: "custom max", errs: []error{retry.After(2*time.Minute, errFlaky)}, opts: []retry.Option{retry.WithMaxRetryAfter(time.Hour)}, at: ms(0, 120000)},
		{name: "zero max is the default", errs: []error{retry.After(time.Minute, errFlaky)}, opts: []retry.Option{retry.WithMaxRetryAfter(0)}, at: ms(0, 60000)},
		{name: "negative max honours no hint", errs: []error{errFlaky, retry.After(0, errFlaky)}, opts: []retry.Option{retry.WithMaxRetryAfter(-1)},
			at: ms(0, 100), reason: retry.ErrRetryAfterTooLong, hint: 0, attempts: 2},
		{name: "any type with RetryAfter", errs: []error{fmt.Errorf("call: %w", hintError{3 * time.Second})}, at: ms(0, 3000)},
		{name: "the first delay past the deadline", errs: []error{retry.After(0, errFlaky)}, timeout: 50 * time.Millisecond,
			at: ms(0), reason: retry.ErrDeadline, hint: 0, attempts: 1},
		{name: "past the deadline", errs: []error{retry.After(2*time.Second, errFlaky)}, timeout: time.Second,
			at: ms(0), reason: retry.ErrDeadline, hint: 2 * time.Second, attempts: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := timeoutContext(t, tt.timeout)
				s := newScript(tt.errs...)
				p := policy
				if tt.p != nil {
					p = *tt.p
				}
				_, err := retry.Do(ctx, p, s.op, tt.opts...)
				if !equalDurations(s.at, tt.at) {
					t.Errorf("attempts started at %v, want %v", s.at, tt.at)
				}
				if tt.reason == nil {
					if err != nil {
						t.Errorf("Do = %v, want success", err)
					}
					return
				}
				checkError(t, err, tt.reason, tt.attempts, errFlaky)
				if d, ok := retry.RetryAfter(err); !ok || d != tt.hint {
					t.Errorf("RetryAfter(err) = %v, %v; want %v, true", d, ok, tt.hint)
				}
				if got := time.Since(s.start); got != tt.at[len(tt.at)-1] {
					t.Errorf("returned after %v, want %v (at once)", got, tt.at[len(tt.at)-1])
				}
			})
		})
	}
}

func TestRetryAfterOfPlainError(t *testing.T) {
	if d, ok := retry.RetryAfter(errFlaky); ok {
		t.Errorf("RetryAfter(plain error) = %v, true; want false", d)
	}
	if d, ok := retry.RetryAfter(errors.Join(errFlaky, retry.After(3*time.Second, errFlaky))); !ok || d != 3*time.Second {
		t.Errorf("RetryAfter(joined) = %v, %v; want 3s, true", d, ok)
	}
}

// 4. Never sleep past the deadline: a wait that would end inside the
// reserve before it is shortened so that one more attempt starts with the
// reserve left, and the loop stops when no more than the reserve is left.
func TestDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		p := backoff.Policy{Initial: 400 * time.Millisecond, Retries: 5, Jitter: backoff.NoJitter}
		s := newScript(failing(10, errFlaky)...)
		_, err := retry.Do(ctx, p, s.op)
		// Waits of 400 ms then 800 ms: the second would end at 1.2 s, so it
		// is shortened to end at 900 ms, 100 ms (the reserve) before the
		// deadline; then only the reserve is left.
		if want := ms(0, 400, 900); !equalDurations(s.at, want) {
			t.Errorf("attempts started at %v, want %v", s.at, want)
		}
		checkError(t, err, retry.ErrDeadline, 3, errFlaky)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("errors.Is(%v, context.DeadlineExceeded) = false, want true", err)
		}
		if got := time.Since(s.start); got != 900*time.Millisecond {
			t.Errorf("returned after %v, want 900ms (no sleep into the deadline)", got)
		}
	})
}

// A wait that ends exactly at the deadline would start the attempt with an
// expired context: it is shortened to leave the reserve.
func TestDeadlineExactFit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		s := newScript(failing(10, errFlaky)...)
		_, err := retry.Do(ctx, policy, s.op)
		if want := ms(0, 100, 200); !equalDurations(s.at, want) {
			t.Errorf("attempts started at %v, want %v", s.at, want)
		}
		checkError(t, err, retry.ErrDeadline, 3, errFlaky)
	})
}

// 5. Cancellation during a wait returns at once, with the last error and
// the cause.
func TestCancelDuringWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(t.Context())
		errShutdown := errors.New("shutdown")
		time.AfterFunc(150*time.Millisecond, func() { cancel(errShutdown) })
		p := backoff.Policy{Initial: time.Hour, Max: backoff.NoCap, Retries: 3, Jitter: backoff.NoJitter}
		s := newScript(failing(10, errFlaky)...)
		_, err := retry.Do(ctx, p, s.op)
		re := checkError(t, err, retry.ErrCanceled, 1, errFlaky)
		for _, target := range []error{errShutdown, context.Canceled} {
			if !errors.Is(err, target) {
				t.Errorf("errors.Is(%v, %v) = false, want true", err, target)
			}
		}
		if got := time.Since(s.start); got != 150*time.Millisecond || re.Elapsed != got {
			t.Errorf("returned after %v (Elapsed %v), want 150ms", got, re.Elapsed)
		}
		if re.Cause != errShutdown {
			t.Errorf("Cause = %v, want %v", re.Cause, errShutdown)
		}
		synctest.Wait() // the bubble would report a goroutine left blocked
	})
}

// 6. The returned error says why, how many attempts, how long.
func TestErrorMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, err := retry.Do(t.Context(), policy, newScript(failing(10, errFlaky)...).op)
		want := "retry: retries exhausted after 4 attempts in 700ms: flaky"
		if err.Error() != want {
			t.Errorf("Error() = %q, want %q", err, want)
		}
		err = &retry.Error{Reason: retry.ErrExhausted, Attempts: 3, Elapsed: 2526127972, Last: errFlaky}
		want = "retry: retries exhausted after 3 attempts in 2.526s: flaky"
		if err.Error() != want {
			t.Errorf("Error() = %q, want %q (the message rounds Elapsed)", err, want)
		}
		_, err = retry.Do(t.Context(), backoff.Policy{Retries: backoff.NoRetries}, newScript(errFlaky).op)
		want = "retry: retries exhausted after 1 attempt: flaky"
		if err.Error() != want {
			t.Errorf("Error() = %q, want %q", err, want)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := retry.Run(ctx, policy, func(context.Context) error { return nil })
	want := "retry: canceled before the first attempt (context canceled)"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err, want)
	}
}

// 7. The budget caps the extra load of a total outage and lets retries
// through under partial failure.
func TestBudget(t *testing.T) {
	t.Run("total outage", func(t *testing.T) {
		var b retry.TokenBucket
		p := backoff.Policy{Initial: -1, Retries: 3}
		attempts, budgetErrs := 0, 0
		const calls = 1000
		for range calls {
			err := retry.Run(context.Background(), p, func(context.Context) error { attempts++; return errFlaky }, retry.WithBudget(&b))
			if errors.Is(err, retry.ErrBudget) {
				budgetErrs++
			}
		}
		// Without a budget: 4000 attempts. With it, the first call retries
		// while more than 5 of 10 tokens remain, then no call retries.
		if attempts != calls+3 {
			t.Errorf("%d calls made %d attempts, want %d", calls, attempts, calls+3)
		}
		if budgetErrs != calls-1 {
			t.Errorf("%d calls stopped by the budget, want %d", budgetErrs, calls-1)
		}
		if b.Tokens() != 0 {
			t.Errorf("Tokens() = %v after the outage, want 0", b.Tokens())
		}
	})
	t.Run("partial failure", func(t *testing.T) {
		var b retry.TokenBucket
		p := backoff.Policy{Initial: -1, Retries: 3}
		attempts, failures := 0, 0
		const calls = 1000
		for range calls {
			// One attempt in twenty fails. (One in ten is the break-even
			// point of TokenRatio 0.1: nine refunds of 0.1 against one cost.)
			err := retry.Run(context.Background(), p, func(context.Context) error {
				attempts++
				if attempts%20 == 0 {
					return errFlaky
				}
				return nil
			}, retry.WithBudget(&b))
			if err != nil {
				failures++
			}
		}
		if failures != 0 {
			t.Errorf("%d of %d calls failed with 5%% failing attempts, want 0", failures, calls)
		}
	})
	t.Run("recovery", func(t *testing.T) {
		b := retry.TokenBucket{MaxTokens: 4, TokenRatio: 0.5}
		fail := func() error {
			return retry.Run(context.Background(), backoff.Policy{Initial: -1, Retries: 1}, func(context.Context) error { return errFlaky }, retry.WithBudget(&b))
		}
		for range 5 {
			_ = fail()
		}
		if b.Tokens() != 0 {
			t.Fatalf("Tokens() = %v, want 0", b.Tokens())
		}
		succeed := func(n int) {
			for range n {
				_ = retry.Run(context.Background(), backoff.Policy{Initial: -1}, func(context.Context) error { return nil }, retry.WithBudget(&b))
			}
		}
		succeed(5)
		if b.Tokens() != 2.5 {
			t.Errorf("Tokens() = %v after 5 successes, want 2.5", b.Tokens())
		}
		// The failure costs a token before the retry is considered: 1.5 <= 4/2.
		if err := fail(); !errors.Is(err, retry.ErrBudget) {
			t.Errorf("with 2.5 tokens: %v, want ErrBudget", err)
		}
		succeed(4) // 3.5 tokens: after the failure 2.5 > 2 remain, so it retries.
		if err := fail(); !errors.Is(err, retry.ErrExhausted) {
			t.Errorf("with 3.5 tokens: %v, want ErrExhausted", err)
		}
		if b.Tokens() != 1.5 {
			t.Errorf("Tokens() = %v, want 1.5", b.Tokens())
		}
		for range 10 {
			_ = retry.Run(context.Background(), backoff.Policy{Initial: -1}, func(context.Context) error { return nil }, retry.WithBudget(&b))
		}
		if b.Tokens() != 4 {
			t.Errorf("Tokens() = %v, want full bucket 4", b.Tokens())
		}
	})
	t.Run("first attempt never blocked", func(t *testing.T) {
		b := retry.TokenBucket{MaxTokens: 1}
		_ = retry.Run(context.Background(), backoff.Policy{Initial: -1}, func(context.Context) error { return errFlaky }, retry.WithBudget(&b))
		called := false
		err := retry.Run(context.Background(), backoff.Policy{Initial: -1, Retries: 3}, func(context.Context) error { called = true; return nil }, retry.WithBudget(&b))
		if !called || err != nil {
			t.Errorf("with an empty budget: called %v, err %v; want true, nil", called, err)
		}
	})
	t.Run("permanent errors cost nothing", func(t *testing.T) {
		var b retry.TokenBucket
		for range 20 {
			_ = retry.Run(context.Background(), policy, func(context.Context) error { return retry.Permanent(errFlaky) }, retry.WithBudget(&b))
		}
		if b.Tokens() != retry.DefaultMaxTokens {
			t.Errorf("Tokens() = %v, want %v", b.Tokens(), retry.DefaultMaxTokens)
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		var b retry.TokenBucket
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 500 {
					_ = retry.Run(context.Background(), backoff.Policy{Initial: -1, Retries: 2}, func(context.Context) error {
						if (g+i)%3 == 0 {
							return errFlaky
						}
						return nil
					}, retry.WithBudget(&b))
					if tk := b.Tokens(); tk < 0 || tk > retry.DefaultMaxTokens {
						t.Errorf("Tokens() = %v, want within [0, %v]", tk, retry.DefaultMaxTokens)
						return
					}
				}
			})
		}
		wg.Wait()
	})
}

// 8. OnRetry is called before each wait, not after the last attempt; the
// logger records each retry at Info and the give-up at Warn.
func TestObservability(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var events []retry.Event
		var at []time.Duration
		start := time.Now()
		hook := func(e retry.Event) { events = append(events, e); at = append(at, time.Since(start)) }
		var buf bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
		errs := failing(10, errFlaky)
		_, err := retry.Do(t.Context(), policy, newScript(errs...).op, retry.WithOnRetry(hook), retry.WithLogger(logger))
		checkError(t, err, retry.ErrExhausted, 4, errFlaky)
		want := []retry.Event{
			{Attempt: 1, MaxAttempts: 4, Delay: 100 * time.Millisecond, Err: errFlaky},
			{Attempt: 2, MaxAttempts: 4, Delay: 200 * time.Millisecond, Err: errFlaky},
			{Attempt: 3, MaxAttempts: 4, Delay: 400 * time.Millisecond, Err: errFlaky},
		}
		if fmt.Sprint(events) != fmt.Sprint(want) {
			t.Errorf("events = %v, want %v", events, want)
		}
		if wantAt := ms(0, 100, 300); !equalDurations(at, wantAt) {
			t.Errorf("hook called at %v, want %v (before each wait)", at, wantAt)
		}
		wantLog := `level=INFO msg="retry: attempt failed; retrying" attempt=1 max_attempts=4 delay=100ms error=flaky
level=INFO msg="retry: attempt failed; retrying" attempt=2 max_attempts=4 delay=200ms error=flaky
level=INFO msg="retry: attempt failed; retrying" attempt=3 max_attempts=4 delay=400ms error=flaky
level=WARN msg="retry: giving up" attempt=4 max_attempts=4 reason="retry: retries exhausted" error=flaky
`
		if buf.String() != wantLog {
			t.Errorf("log =\n%s\nwant\n%s", buf.String(), wantLog)
		}
	})
}

func TestZeroOption(t *testing.T) {
	n := 0
	err := retry.Run(context.Background(), backoff.Policy{Initial: -1, Retries: 1}, func(context.Context) error { n++; return errFlaky }, retry.Option{})
	if n != 2 || !errors.Is(err, retry.ErrExhausted) {
		t.Errorf("with a zero Option: %d attempts, %v; want 2, exhausted", n, err)
	}
}

func TestRetryable(t *testing.T) {
	errBad := errors.New("bad request")
	classify := retry.WithClassifier(func(err error) bool { return !errors.Is(err, errBad) })
	tests := []struct {
		name string
		err  error
		opts []retry.Option
		want bool
	}{
		{"nil", nil, nil, false},
		{"plain", errFlaky, nil, true},
		{"permanent", retry.Permanent(errFlaky), nil, false},
		{"permanent, wrapped", fmt.Errorf("get: %w", retry.Permanent(errFlaky)), nil, false},
		{"hinted", retry.After(time.Second, errFlaky), nil, true},
		{"classifier accepts", errFlaky, []retry.Option{classify}, true},
		{"classifier rejects", errBad, []retry.Option{classify}, false},
		{"the later classifier wins", errBad, []retry.Option{classify, retry.WithClassifier(nil)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retry.Retryable(tt.err, tt.opts...); got != tt.want {
				t.Errorf("Retryable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// Take grants while more than half the tokens would remain, and a refusal
// costs nothing, so that successes refill the bucket however many hedges
// were refused.
func TestTokenBucketTake(t *testing.T) {
	b := retry.TokenBucket{MaxTokens: 10, TokenRatio: 0.5}
	granted := 0
	for range 100 {
		if b.Take() {
			granted++
		}
	}
	if granted != 4 || b.Tokens() != 6 {
		t.Fatalf("from a full bucket of 10: %d granted, %v tokens left; want 4, 6", granted, b.Tokens())
	}
	b.Success()
	b.Success()
	if !b.Take() || b.Take() {
		t.Errorf("after refunds of 1 token: want exactly one more grant, tokens %v", b.Tokens())
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted = 0
	c := retry.TokenBucket{MaxTokens: 100}
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if c.Take() {
					mu.Lock()
					granted++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if granted != 49 {
		t.Errorf("concurrent takes from a full bucket of 100: %d granted, want 49", granted)
	}
}

// TestTokenBucketCountsAsWritten: a bucket counts in thousandths of a
// token, and a number written with three decimals is counted as written,
// although 8.001 × 1000 is 8000.999… in floating point.
func TestTokenBucketCountsAsWritten(t *testing.T) {
	b := retry.TokenBucket{MaxTokens: 8.001, TokenRatio: 1.005}
	if got := b.Tokens(); got != 8.001 {
		t.Fatalf("a full bucket of MaxTokens 8.001 holds %v tokens", got)
	}
	b.FailureCost(1.005)
	if got := b.Tokens(); got != 6.996 {
		t.Errorf("after a failure costing 1.005: %v tokens, want 6.996", got)
	}
	b.Failure()
	b.Success()
	if got := b.Tokens(); got != 7.001 {
		t.Errorf("after a failure and a success refunding 1.005: %v tokens, want 7.001", got)
	}
}

// TestRestartAfterHint checks WithRestartAfterHint: after a wait that a
// server's hint set, the schedule starts over at the policy's first delay,
// as gRPC's A6 asks after a pushback; without the option it goes on from
// the attempt's number. A breaker's rejection restarts nothing.
func TestRestartAfterHint(t *testing.T) {
	p := backoff.Policy{Initial: 100 * time.Millisecond, Multiplier: 2, Max: time.Hour, Retries: 10, Jitter: backoff.NoJitter}
	plain := errors.New("unavailable")
	hinted := retry.After(5*time.Second, plain)
	rejected := &rejection{hint: 3 * time.Second}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	tests := []struct {
		name  string
		opts  []retry.Option
		errs  []error
		waits []time.Duration
	}{
		{"by default the schedule goes on", nil,
			[]error{plain, plain, hinted, plain, plain}, []time.Duration{ms(100), ms(200), 5 * time.Second, ms(800), ms(1600)}},
		{"restarted after the hint", []retry.Option{retry.WithRestartAfterHint()},
			[]error{plain, plain, hinted, plain, plain}, []time.Duration{ms(100), ms(200), 5 * time.Second, ms(100), ms(200)}},
		{"restarted after each hint", []retry.Option{retry.WithRestartAfterHint()},
			[]error{hinted, plain, hinted, hinted, plain}, []time.Duration{5 * time.Second, ms(100), 5 * time.Second, 5 * time.Second, ms(100)}},
		{"a rejection restarts nothing", []retry.Option{retry.WithRestartAfterHint()},
			[]error{plain, plain, rejected, plain}, []time.Duration{ms(100), ms(200), 3 * time.Second, ms(800)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := retry.NewLoop(context.Background(), p, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			for i, e := range tt.errs {
				d, err := l.Next(context.Background(), e)
				if err != nil || d != tt.waits[i] {
					t.Fatalf("Next after attempt %d = %v, %v; want %v", i+1, d, err, tt.waits[i])
				}
			}
		})
	}
}
