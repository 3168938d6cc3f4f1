package plan_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/backoff/plan"
)

// The seed article's worked example: 500 ms doubling up to a 30 s cap, for
// 8 retries.
func workedExample() backoff.Policy {
	return backoff.Policy{
		Initial:    500 * time.Millisecond,
		Multiplier: 2,
		Max:        30 * time.Second,
		Retries:    8,
		Jitter:     backoff.FullJitter,
	}
}

func ExampleAnalyze() {
	s := plan.Analyze(workedExample(), plan.DefaultSeed)
	t := s.Total
	fmt.Println("shortest:", t.Min)
	fmt.Println("mean:    ", t.Mean)
	fmt.Println("longest: ", t.Max)
	fmt.Println("median:  ", t.P50) // full jitter: the median is the mean
	fmt.Println("p99:     ", t.P99.Round(time.Millisecond))
	fmt.Println("estimated:", t.Estimated) // exact for every jitter but decorrelated
	fit := s.Deadline(time.Minute)
	// Six waits end by 59.9 s, 100 ms (the reserve) before the deadline;
	// the loop shortens the seventh to end then, and stops.
	fmt.Printf("within 1 min: worst case fits=%v, retries made=%d\n", fit.WorstCaseFits, fit.RetriesWithin)
	// Output:
	// shortest: 0s
	// mean:     45.75s
	// longest:  1m31.5s
	// median:   45.75s
	// p99:      1m14.97s
	// estimated: false
	// within 1 min: worst case fits=false, retries made=7
}

func ExampleSolve() {
	p := workedExample()
	// How many retries fit a one-minute budget in the worst case, leaving
	// the loop's 100 ms reserve for the last attempt?
	q, err := plan.Solve(p, plan.ParamRetries, time.Minute, plan.TargetMax, plan.DefaultSeed)
	fmt.Println(q.Retries, err)

	// And how large may the first delay be for all 8 retries to fit?
	q, err = plan.Solve(p, plan.ParamInitial, time.Minute, plan.TargetMax, plan.DefaultSeed)
	fmt.Println(q.Initial, plan.Analyze(q, plan.DefaultSeed).Total.Max, err)

	// With a 2 s cap, 8 retries never exceed 16 s, however fast delays grow.
	p.Max = 2 * time.Second
	_, err = plan.Solve(p, plan.ParamMultiplier, time.Minute, plan.TargetMax, plan.DefaultSeed)
	fmt.Println(errors.Is(err, plan.ErrUnbounded))
	// Output:
	// 6 <nil>
	// 235.43307ms 59.89999989s <nil>
	// true
}
