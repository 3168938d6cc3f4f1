package fleet

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
	"github.com/redis/go-redis/v9"
)

// TestBudgetWaitMeetsTheDeadline checks that a retry loop on a shared
// Budget whose Redis is slow still meets its deadline by the loops' rule:
// each decision may wait up to Timeout for Redis, and the loop reads the
// clock after it, so the wait it shortens still ends the reserve before
// the deadline, and the loop stops, with ErrDeadline, before the deadline.
func TestBudgetWaitMeetsTheDeadline(t *testing.T) {
	s := startServer(t)
	p := startProxy(t, s.Addr())
	c := redis.NewClient(&redis.Options{Addr: p.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	b := newTestBudget(t, BudgetConfig{Client: c})
	p.setDelay(80 * time.Millisecond) // longer than the 50 ms Timeout

	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	dl, _ := ctx.Deadline()
	var at []time.Time
	// The first wait, 10 s, ends long after the deadline.
	pol := backoff.Policy{Initial: 10 * time.Second, Retries: backoff.UntilDeadline, Jitter: backoff.NoJitter}
	err := retry.Run(ctx, pol, func(context.Context) error {
		at = append(at, time.Now())
		return errors.New("down")
	}, retry.WithBudget(b))
	end := time.Now()
	if !errors.Is(err, retry.ErrDeadline) || len(at) != 2 {
		t.Fatalf("Run = %v after %d attempts, want ErrDeadline after 2: one wait, shortened", err, len(at))
	}
	if left := dl.Sub(at[1]); left <= 0 || left > backoff.DeadlineReserve {
		t.Errorf("the second attempt started %v before the deadline, want within the reserve, %v", left, backoff.DeadlineReserve)
	}
	if !end.Before(dl) {
		t.Errorf("Run returned %v after the deadline, want before it", end.Sub(dl))
	}
}
