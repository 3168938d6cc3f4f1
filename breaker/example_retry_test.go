package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
	"github.com/again-go/again/retry"
)

// Retry around a breaker, the usual order: each attempt goes through the
// breaker. While it is open, its rejections tell retry how long to wait (the
// rest of the open period) instead of burning attempts, and they cost the
// retry budget nothing: the dependency was never called.
func Example_retryAroundBreaker() {
	b, _ := breaker.New(breaker.Config{
		ConsecutiveFailures: 2,
		Open:                backoff.Policy{Initial: 20 * time.Millisecond, Jitter: backoff.NoJitter},
	})
	attempt := 0
	fetch := func(ctx context.Context) (string, error) {
		return breaker.Call(ctx, b, func(ctx context.Context) (string, error) {
			attempt++
			fmt.Println("dependency called: attempt", attempt)
			if attempt <= 2 {
				return "", errors.New("503 service unavailable")
			}
			return "hello", nil
		})
	}
	p := backoff.Policy{Initial: time.Millisecond, Multiplier: 2, Max: time.Second, Retries: 5, Jitter: backoff.NoJitter}
	v, err := retry.Do(context.Background(), p, fetch, retry.WithBudget(&retry.TokenBucket{}),
		retry.WithOnRetry(func(e retry.Event) {
			if retry.IsRejected(e.Err) {
				fmt.Println("rejected by the breaker: retry waits for its probe")
			}
		}))
	fmt.Println(v, err)
	// Output:
	// dependency called: attempt 1
	// dependency called: attempt 2
	// rejected by the breaker: retry waits for its probe
	// dependency called: attempt 3
	// hello <nil>
}

// A breaker around a retry loop counts one outcome per retried call, and
// once open it rejects calls before their retries start. Use it when the
// retries are someone else's (a client library that retries inside).
func Example_breakerAroundRetry() {
	b, _ := breaker.New(breaker.Config{ConsecutiveFailures: 2})
	p := backoff.Policy{Initial: time.Millisecond, Multiplier: 2, Max: time.Second, Retries: 2, Jitter: backoff.NoJitter}
	attempts := 0
	for range 3 {
		err := b.Do(context.Background(), func(ctx context.Context) error {
			return retry.Run(ctx, p, func(context.Context) error { attempts++; return errors.New("timeout") })
		})
		switch {
		case errors.Is(err, breaker.ErrOpen):
			fmt.Println("rejected; attempts so far:", attempts)
		case errors.Is(err, retry.ErrExhausted):
			fmt.Println("retries exhausted; attempts so far:", attempts)
		}
	}
	// Output:
	// retries exhausted; attempts so far: 3
	// retries exhausted; attempts so far: 6
	// rejected; attempts so far: 6
}
