package throttle_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/throttle"
)

// A backend that accepts 100 requests per second, offered 1,000: with
// K = 2 the Throttler lets about 200 per second reach it.
func ExampleThrottler() {
	th, err := throttle.New(throttle.Config{Rand: rand.New(rand.NewPCG(1, 2))})
	if err != nil {
		panic(err)
	}
	start := time.Unix(0, 0)
	sent, inSecond := 0, 0
	for ms := range 300_000 { // 5 minutes, one request per millisecond
		if ms%1000 == 0 {
			inSecond = 0
		}
		if th.AdmitAt(start.Add(time.Duration(ms)*time.Millisecond)) != nil {
			continue // rejected locally: not sent
		}
		inSecond++
		if ms >= 180_000 {
			sent++ // counted over the last 2 minutes
		}
		th.Done(inSecond > 100) // above capacity: 503
	}
	fmt.Printf("reached the backend: %.0f/s\n", math.Round(float64(sent)/120/10)*10)
	// Output: reached the backend: 200/s
}

// A call that the Throttler rejects is not made, and reads as a
// rejection: the retry budget neither spends nor refunds for it.
func ExampleRejectedError() {
	th, _ := throttle.New(throttle.Config{Rand: rand.New(rand.NewPCG(1, 2))})
	overloaded := errors.New("503 Service Unavailable")
	calls := 0
	err := retry.Run(context.Background(), backoff.Policy{Initial: -1, Retries: 4},
		func(context.Context) error { calls++; return overloaded },
		// Every error of this call is an overload signal.
		retry.WithAdmitter(th, func(error) bool { return true }))
	fmt.Println(calls < 5, errors.Is(err, throttle.ErrRejected) || errors.Is(err, overloaded))
	// Output: true true
}

// A Rate learns a send rate from throttles (HTTP 429), CUBIC as in AWS's
// adaptive retry mode, on a virtual clock.
func ExampleRate() {
	start := time.Unix(0, 0)
	r, _ := throttle.NewRate(throttle.RateConfig{FailFast: true, Clock: fixed(start)})
	for i := range 20 { // 10 responses per second, all accepted
		r.DoneAt(start.Add(time.Duration(i)*100*time.Millisecond), false)
	}
	fmt.Println(r.Stats())
	r.DoneAt(start.Add(2*time.Second), true) // 429: throttled
	fmt.Println(r.Stats())
	// Output:
	// rate: off
	// rate: 7/s
}

// fixed is a Clock stopped at one time.
type fixed time.Time

func (f fixed) Now() time.Time { return time.Time(f) }
