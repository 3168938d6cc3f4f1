package hedge_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/hedge"
	"github.com/again-go/again/retry"
)

func Example() {
	h := &hedge.Hedger{
		After:   time.Millisecond,                    // or a Quantile of observed latencies
		Budget:  &retry.TokenBucket{TokenRatio: 0.1}, // hedges ≤ ~10 % of successes
		OnHedge: func(e hedge.Event) { fmt.Printf("hedge %d won: %v\n", e.Hedge, e.Won) },
	}
	var copies atomic.Int32 // the copies run concurrently
	v, err := hedge.Do(context.Background(), backoff.Policy{Retries: -1}, h, "replica", func(ctx context.Context) (string, error) {
		if copies.Add(1) == 1 {
			<-ctx.Done() // the first copy is stuck; the hedge's answer cancels it
			return "", ctx.Err()
		}
		return "from the hedge", nil
	})
	fmt.Println(v, err)
	// Output:
	// hedge 1 won: false
	// hedge 1 won: true
	// from the hedge <nil>
}

// Do retries like retry.Do, each attempt hedged: here the first copy fails
// with a retryable error, so the hedge is sent at once, without waiting for
// the delay, and its answer is the attempt's.
func ExampleDo() {
	h := &hedge.Hedger{After: time.Hour} // a delay that never passes here
	var copies atomic.Int32
	v, err := hedge.Do(context.Background(), backoff.Policy{Retries: 2}, h, "replica", func(ctx context.Context) (string, error) {
		if copies.Add(1) == 1 {
			return "", errors.New("connection reset")
		}
		return "answer", nil
	})
	fmt.Println(v, err, copies.Load())
	// Output: answer <nil> 2
}

// Attempt makes one hedged attempt, for code that runs its own retry loop
// or needs to know which copy answered.
func ExampleAttempt() {
	// A delay that never passes here: only the first copy's failure sends
	// a hedge, so the output does not depend on the machine's speed.
	h := &hedge.Hedger{After: time.Minute, MaxHedges: 2}
	r := hedge.Attempt(context.Background(), h, hedge.Call[int]{
		Op: func(ctx context.Context, n int) (int, error) {
			if n == 0 {
				return 0, errors.New("connection reset") // retryable: the next hedge goes at once
			}
			return 42, nil
		},
	})
	fmt.Println(r.Value, r.Err, r.Winner, r.Hedges)
	// Output: 42 <nil> 1 1
}

// With a quantile, a key is hedged only once it has enough samples, after
// the quantile of its latest successful latencies.
func ExampleHedger_Delay() {
	h := &hedge.Hedger{Quantile: 0.9, Window: 10, Warmup: 10}
	for i := range 10 {
		h.Observe("db-1", time.Duration(i+1)*time.Millisecond)
	}
	fmt.Println(h.Delay("db-1"))
	fmt.Println(h.Delay("db-2"))
	// Output:
	// 9ms true
	// 0s false
}
