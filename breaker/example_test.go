package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
	"github.com/again-go/again/breaker/breakertest"
)

func Example() {
	clock := breakertest.NewClock(time.Unix(0, 0))
	b, err := breaker.New(breaker.Config{
		MinCalls: 4,
		Open:     backoff.Policy{Initial: 2 * time.Second, Multiplier: 2, Max: time.Minute, Jitter: backoff.NoJitter},
		Clock:    clock,
	})
	if err != nil {
		panic(err)
	}
	down := errors.New("connection refused")
	ctx := context.Background()
	for i := range 6 {
		err := b.Do(ctx, func(context.Context) error { return down })
		fmt.Printf("call %d: %v\n", i+1, err)
	}
	clock.Advance(2 * time.Second) // the open period ends: one probe is admitted
	err = b.Do(ctx, func(context.Context) error { return nil })
	fmt.Println("probe:", err, "→", b.State())
	// Output:
	// call 1: connection refused
	// call 2: connection refused
	// call 3: connection refused
	// call 4: connection refused
	// call 5: breaker: open, next probe in 2s
	// call 6: breaker: open, next probe in 2s
	// probe: <nil> → closed
}

// A 503 arrives as a response, not an error: CallJudged judges the value.
func ExampleCallJudged() {
	var b breaker.Breaker
	judge := func(resp *http.Response, err error) breaker.Outcome {
		switch {
		case err != nil:
			return breaker.Classify(err)
		case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
			return breaker.Failure
		}
		return breaker.Success
	}
	get := func(ctx context.Context) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Body: http.NoBody}, nil
	}
	for range 25 {
		resp, err := breaker.CallJudged(context.Background(), &b, get, judge)
		if err == nil {
			resp.Body.Close()
		}
	}
	fmt.Println(b.State())
	// Output: open
}

func ExampleBreaker_Snapshot() {
	var b breaker.Breaker
	for range 5 {
		_ = b.Do(context.Background(), func(context.Context) error { return errors.New("no") })
	}
	s := b.Snapshot()
	fmt.Println(s.State, s.Calls, s.Failures)
	// Output: closed 5 5
}

// One breaker per host: a host that fails does not stop calls to the others.
func ExampleGroup() {
	hosts := &breaker.Group{Config: breaker.Config{ConsecutiveFailures: 3}}
	call := func(host string, err error) error {
		b, cerr := hosts.Get(host)
		if cerr != nil {
			return cerr
		}
		return b.Do(context.Background(), func(context.Context) error { return err })
	}
	for range 3 {
		_ = call("db-1.internal", errors.New("connection refused"))
	}
	fmt.Println(errors.Is(call("db-1.internal", nil), breaker.ErrOpen))
	fmt.Println(call("db-2.internal", nil))
	// Output:
	// true
	// <nil>
}

// Call guards a call that returns a value. A rejected call returns ErrOpen
// at once, without running the function, so the caller can fall back.
func ExampleCall() {
	// The defaults: 50 % failures of at least 20 calls in 10 s open it. In a
	// program, the zero value is ready (var b breaker.Breaker); the example
	// sets a clock that moves only when told, so its output is certain.
	b, err := breaker.New(breaker.Config{Clock: breakertest.NewClock(time.Unix(0, 0))})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	lookup := func(fail bool) (string, error) {
		return breaker.Call(ctx, b, func(context.Context) (string, error) {
			if fail {
				return "", errors.New("connection refused")
			}
			return "alice", nil
		})
	}
	for range 20 {
		lookup(true)
	}
	user, err := lookup(false)
	if errors.Is(err, breaker.ErrOpen) {
		user = "from the cache" // the dependency was not called
	}
	fmt.Println(user, b.State())
	// Output: from the cache open
}

// A two-step call (Allow, then Done) whose result arrives after the
// breaker changed state is dropped as stale; OnStale says so.
func ExampleConfig_onStale() {
	b, err := breaker.New(breaker.Config{
		MinCalls: -1, // trip at the first failure, for the example
		OnStale: func(s breaker.Stale) {
			fmt.Printf("dropped a %v admitted while %v, reported while %v\n", s.Outcome, s.Admitted, s.Now)
		},
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	slow, _ := b.Allow(ctx) // a long call starts
	_ = b.Do(ctx, func(context.Context) error { return errors.New("boom") })
	slow.Done(nil) // it succeeds, but the breaker has opened meanwhile
	// Output: dropped a success admitted while closed, reported while open
}
