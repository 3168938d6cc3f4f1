package hedge

import (
	"context"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
)

// Do calls op until it succeeds, as retry.Do does, but each attempt is
// hedged by h (see Attempt): a hedged attempt is one attempt of the retry
// loop. It returns op's value, or the *retry.Error of the loop, whose
// Attempts counts attempts, not copies, and whose Last is the attempt's
// error (see Result.Err).
//
// The hedges run inside the attempt rather than the retries inside each
// hedge, so that with p.Retries < 0 (no retries) Do is exactly gRPC's
// hedging policy (proposal A6): hedges after a delay, the next at once
// after a retryable failure, the call ended by a permanent one, and one
// error when every copy failed. With retries, a failed attempt waits its
// backoff (or the pushback's hint) before a new hedged attempt, so the
// retry Budget of retry.WithBudget and the hedge Budget of h each count
// what they are for: failed attempts, and extra copies.
//
// opts are retry's options: the classifier of retry.WithClassifier also
// decides which failed copies send the next hedge at once. Do returns the
// error of h.Validate, p.Validate or the retry Budget's Validate without
// calling op.
func Do[T any](ctx context.Context, p backoff.Policy, h *Hedger, key string, op func(context.Context) (T, error), opts ...retry.Option) (T, error) {
	var zero T
	if err := h.Validate(); err != nil {
		return zero, err
	}
	l, err := retry.NewLoop(ctx, p, opts...)
	if err != nil {
		return zero, err
	}
	c := Call[T]{
		Key:       key,
		Op:        func(ctx context.Context, _ int) (T, error) { return op(ctx) },
		Retryable: func(err error) bool { return retry.Retryable(err, opts...) },
	}
	for {
		c.Attempt = l.Attempts() + 1
		r := Attempt(ctx, h, c)
		if r.Err == nil {
			l.Succeeded()
			return r.Value, nil
		}
		if err := l.Failed(ctx, r.Err); err != nil {
			return zero, err
		}
	}
}
