package breakertest_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
	"github.com/again-go/again/breaker/breakertest"
)

// Two processes share one breaker state through a store (here in memory; on
// Redis with package fleet). When one trips, the other sees it open until the
// same moment.
func ExampleMemoryStore() {
	clock := breakertest.NewClock(time.Unix(0, 0))
	store := breakertest.NewMemoryStore(clock)
	cfg := breaker.Config{
		ConsecutiveFailures: 3,
		Open:                backoff.Policy{Initial: 10 * time.Second, Jitter: backoff.NoJitter},
		Clock:               clock,
		Shared:              store,
	}
	a, _ := breaker.New(cfg)
	b, _ := breaker.New(cfg)
	ctx := context.Background()
	for range 3 {
		_ = a.Do(ctx, func(context.Context) error { return errors.New("timeout") })
	}
	clock.Advance(time.Second) // b refreshes at most once a second
	err := b.Do(ctx, func(context.Context) error { return nil })
	fmt.Println("a:", a.State())
	fmt.Println("b:", err)
	// Output:
	// a: open
	// b: breaker: open, next probe in 9s
}
