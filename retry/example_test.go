package retry_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
)

// A policy with microsecond delays keeps the examples fast; real code starts
// from backoff.Default().
var quick = backoff.Policy{Initial: time.Microsecond, Retries: 3, Jitter: backoff.NoJitter}

func ExampleDo() {
	attempts := 0
	v, err := retry.Do(context.Background(), quick, func(ctx context.Context) (string, error) {
		attempts++
		if attempts < 3 {
			return "", errors.New("connection refused")
		}
		return "connected", nil
	})
	fmt.Println(v, err, attempts)
	// Output: connected <nil> 3
}

func ExampleRun() {
	err := retry.Run(context.Background(), quick, func(ctx context.Context) error {
		return errors.New("connection refused")
	})
	var re *retry.Error
	if errors.As(err, &re) {
		fmt.Println(errors.Is(err, retry.ErrExhausted), re.Attempts, re.Last)
	}
	// Output: true 4 connection refused
}

func ExamplePermanent() {
	errNotFound := errors.New("not found")
	attempts := 0
	err := retry.Run(context.Background(), quick, func(ctx context.Context) error {
		attempts++
		return retry.Permanent(errNotFound)
	})
	fmt.Println(errors.Is(err, retry.ErrPermanent), errors.Is(err, errNotFound), attempts)
	// Output: true true 1
}

func ExampleAfter() {
	// A server answered 503 with "Retry-After: 120": more than the one
	// minute we are willing to wait inside one call.
	err := retry.Run(context.Background(), quick, func(ctx context.Context) error {
		return retry.After(2*time.Minute, errors.New("503 service unavailable"))
	})
	d, ok := retry.RetryAfter(err)
	fmt.Println(errors.Is(err, retry.ErrRetryAfterTooLong), d, ok)
	// Output: true 2m0s true
}

func ExampleWithClassifier() {
	errBadRequest := errors.New("bad request")
	err := retry.Run(context.Background(), quick, func(ctx context.Context) error {
		return errBadRequest
	}, retry.WithClassifier(func(err error) bool { return !errors.Is(err, errBadRequest) }))
	fmt.Println(err)
	// Output: retry: permanent error after 1 attempt: bad request
}

func ExampleWithOnRetry() {
	attempts := 0
	_ = retry.Run(context.Background(), quick, func(ctx context.Context) error {
		attempts++
		if attempts < 3 {
			return errors.New("timeout")
		}
		return nil
	}, retry.WithOnRetry(func(e retry.Event) {
		fmt.Printf("attempt %d of %d failed (%v); retrying in %v\n", e.Attempt, e.MaxAttempts, e.Err, e.Delay)
	}))
	// Output:
	// attempt 1 of 4 failed (timeout); retrying in 1µs
	// attempt 2 of 4 failed (timeout); retrying in 2µs
}

func ExampleTokenBucket() {
	// One budget per downstream service, shared by every call to it.
	var budget retry.TokenBucket
	attempts := 0
	for range 100 {
		_ = retry.Run(context.Background(), backoff.Policy{Initial: -1, Retries: 3}, func(ctx context.Context) error {
			attempts++
			return errors.New("service down")
		}, retry.WithBudget(&budget))
	}
	// Without the budget, the outage would have cost 400 attempts.
	fmt.Println(attempts, budget.Tokens())
	// Output: 103 0
}

func ExampleWithLogger() {
	// A text handler without the time, so that the output is reproducible.
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
	attempts := 0
	_ = retry.Run(context.Background(), quick, func(ctx context.Context) error {
		attempts++
		if attempts < 2 {
			return errors.New("connection reset")
		}
		return nil
	}, retry.WithLogger(logger))
	// Output:
	// level=INFO msg="retry: attempt failed; retrying" attempt=1 max_attempts=4 delay=1µs error="connection reset"
}

// Loop is Do's loop for code that makes its attempts itself, here to keep
// state between them without a closure.
func ExampleLoop() {
	ctx := context.Background()
	l, err := retry.NewLoop(ctx, quick)
	if err != nil {
		fmt.Println(err)
		return
	}
	for {
		err := dial(l.Attempts() + 1)
		if err == nil {
			l.Succeeded()
			break
		}
		if err = l.Failed(ctx, err); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println("connected after", l.Attempts(), "attempts")
	// Output: connected after 3 attempts
}

// dial fails twice, then succeeds.
func dial(attempt int) error {
	if attempt < 3 {
		return errors.New("connection refused")
	}
	return nil
}

// breakerOpen is how another package (a circuit breaker) tells the loop
// that the attempt never reached the dependency and when to come back,
// without importing retry.
type breakerOpen struct{ wait time.Duration }

func (e breakerOpen) Error() string             { return "circuit open" }
func (e breakerOpen) Rejected() bool            { return true }
func (e breakerOpen) RetryAfter() time.Duration { return e.wait }

func ExampleIsRejected() {
	var budget retry.TokenBucket
	attempts := 0
	err := retry.Run(context.Background(), quick, func(ctx context.Context) error {
		attempts++
		return breakerOpen{time.Microsecond}
	}, retry.WithBudget(&budget))
	// Rejections count as attempts but cost the budget nothing.
	fmt.Println(errors.Is(err, retry.ErrExhausted), retry.IsRejected(err), attempts, budget.Tokens())
	// Output: true true 4 10
}

func ExampleWithMaxRetryAfter() {
	// A negative limit honours no hint: the caller reschedules the work.
	err := retry.Run(context.Background(), quick, func(ctx context.Context) error {
		return retry.After(time.Second, errors.New("429 too many requests"))
	}, retry.WithMaxRetryAfter(-1))
	d, _ := retry.RetryAfter(err)
	fmt.Println(errors.Is(err, retry.ErrRetryAfterTooLong), d)
	// Output: true 1s
}

// Waiting for a dependency for up to a minute, however many attempts that
// takes: Retries backoff.UntilDeadline retries until the context's
// deadline, and refuses a context without one.
func ExampleDo_untilDeadline() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	attempts := 0
	p := backoff.Policy{Initial: time.Microsecond, Retries: backoff.UntilDeadline}
	err := retry.Run(ctx, p, func(context.Context) error {
		attempts++
		if attempts < 5 {
			return errors.New("connection refused") // the database is starting
		}
		return nil
	})
	fmt.Println(err, attempts)

	_, err = retry.Do(context.Background(), p, func(context.Context) (int, error) { return 0, nil })
	fmt.Println(errors.Is(err, retry.ErrNoDeadline))
	// Output:
	// <nil> 5
	// true
}

// tooMany is an HTTP 429 as an error: its Overload method puts it in the
// overload class (see IsOverload).
type tooMany struct{}

func (tooMany) Error() string  { return "429 Too Many Requests" }
func (tooMany) Overload() bool { return true }

// 429s wait a slow schedule and a dropped connection a fast one, in one
// call (microseconds here, seconds in earnest); each class has its own
// cap on attempts.
func ExampleWithClasses() {
	classes := retry.WithClasses( // made once, reused by every call
		retry.Class{Name: "overload", Match: retry.IsOverload,
			Policy: backoff.Policy{Initial: 100 * time.Microsecond, Max: time.Second, Retries: 3, Jitter: backoff.NoJitter}},
		retry.Class{Name: "transient",
			Policy: backoff.Policy{Initial: time.Microsecond, Max: time.Second, Retries: 5, Jitter: backoff.NoJitter}},
	)
	errs := []error{errors.New("connection reset"), tooMany{}, tooMany{}, errors.New("connection reset")}
	attempt := 0
	v, err := retry.Do(context.Background(), backoff.Policy{Retries: 6}, func(context.Context) (string, error) {
		if attempt++; attempt <= len(errs) {
			return "", errs[attempt-1]
		}
		return "done", nil
	}, classes, retry.WithOnRetry(func(e retry.Event) {
		fmt.Printf("%v (%s): retry in %v\n", e.Err, e.Class, e.Delay)
	}))
	fmt.Println(v, err)
	// Output:
	// connection reset (transient): retry in 1µs
	// 429 Too Many Requests (overload): retry in 100µs
	// 429 Too Many Requests (overload): retry in 200µs
	// connection reset (transient): retry in 2µs
	// done <nil>
}
