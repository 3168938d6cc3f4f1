package limiter_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker/breakertest"
	"github.com/again-go/again/limiter"
	"github.com/again-go/again/retry"
)

// A bulkhead of 2: the third call at once is refused, without waiting.
func ExampleLimiter() {
	l, err := limiter.New(limiter.Config{Limit: 2})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	p1, _ := l.Acquire(ctx)
	p2, _ := l.Acquire(ctx)
	_, err = l.Acquire(ctx)
	fmt.Println(errors.Is(err, limiter.ErrLimited), err)
	p1.Done(limiter.Success)
	p2.Done(limiter.Success)
	fmt.Println(l.Snapshot().InFlight, "in flight,", l.Snapshot().Refused, "refused")
	// Output:
	// true limiter: concurrency limit reached (2 of 2 in flight)
	// 0 in flight, 1 refused
}

// An AIMD limit under a dependency that takes 10 calls at once and times
// out the others: the limit saws around that capacity, each success of a
// busy round adding 1 and each timeout taking 10 %.
func ExampleAIMD() {
	clk := breakertest.NewClock(time.Unix(0, 0)) // a clock that moves only when told
	l, _ := limiter.New(limiter.Config{Algorithm: limiter.AIMD{Min: 1}, Clock: clk})
	lo, hi := 1000, 0
	for round := range 1000 {
		if round >= 900 {
			lo, hi = min(lo, l.Limit()), max(hi, l.Limit())
		}
		var held []limiter.Permit
		for {
			p, err := l.Acquire(context.Background())
			if err != nil {
				break // the limit: as many as the client may send at once
			}
			held = append(held, p)
		}
		clk.Advance(10 * time.Millisecond)
		for i := range held {
			if i < 10 {
				held[i].Done(limiter.Success)
			} else {
				held[i].Done(limiter.Dropped) // timed out
			}
		}
	}
	fmt.Println("limit between", lo, "and", hi)
	// Output: limit between 8 and 16
}

// Through retry.Do, each attempt takes its own permit, and gives it back
// before any backoff wait; a call refused by the limit fails at once.
func ExampleLimiter_retry() {
	l, _ := limiter.New(limiter.Config{Limit: 1})
	ctx := context.Background()
	held, _ := l.Acquire(ctx) // another call holds the only permit
	_, err := retry.Do(ctx, backoff.Default(), func(context.Context) (string, error) {
		return "sent", nil
	}, retry.WithAdmitter(l, nil))
	fmt.Println(err)
	held.Release()
	v, err := retry.Do(ctx, backoff.Default(), func(context.Context) (string, error) {
		return "sent", nil
	}, retry.WithAdmitter(l, nil))
	fmt.Println(v, err)
	// Output:
	// retry: permanent error after 1 attempt: limiter: concurrency limit reached (1 of 1 in flight)
	// sent <nil>
}

// One limit per host: a Group with a fixed limit of 8 each, at most 1024
// hosts.
func ExampleGroup() {
	g := &limiter.Group{Config: limiter.Config{Limit: 8}}
	a, _ := g.Get("api.example.com")
	b, _ := g.Get("cdn.example.com")
	fmt.Println(a.Limit(), b.Limit(), a != b, g.Len())
	// Output: 8 8 true 2
}
