package backoff_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/again-go/again/backoff"
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

func ExamplePolicy_Delay() {
	p := workedExample()
	for n := 1; n <= p.Retries; n++ {
		fmt.Printf("retry %d: %v capped=%v\n", n, p.Delay(n), p.Capped(n))
	}
	// Output:
	// retry 1: 500ms capped=false
	// retry 2: 1s capped=false
	// retry 3: 2s capped=false
	// retry 4: 4s capped=false
	// retry 5: 8s capped=false
	// retry 6: 16s capped=false
	// retry 7: 30s capped=true
	// retry 8: 30s capped=true
}

func ExamplePolicy_Stats() {
	s := workedExample().Stats(backoff.DefaultSeed)
	t := s.Total
	fmt.Println("shortest:", backoff.Human(t.Min))
	fmt.Println("mean:    ", backoff.Human(t.Mean))
	fmt.Println("longest: ", backoff.Human(t.Max))
	fmt.Println("median:  ", backoff.Human(t.P50)) // full jitter: the median is the mean
	fmt.Println("p99:     ", backoff.Human(t.P99))
	fit := s.Deadline(time.Minute)
	fmt.Printf("within 1 min: worst case fits=%v, retries that fit=%d\n", fit.WorstCaseFits, fit.RetriesWithin)
	// Output:
	// shortest: 0 ms
	// mean:     45.8 s
	// longest:  1 min 32 s
	// median:   45.8 s
	// p99:      1 min 15 s
	// within 1 min: worst case fits=false, retries that fit=6
}

func ExamplePolicy_Sample() {
	p := workedExample()
	// A fixed seed makes the draw reproducible; a retry loop would use a
	// fast goroutine-safe source instead.
	r := rand.New(rand.NewPCG(1, 2))
	var prev time.Duration
	for n := 1; n <= 3; n++ {
		prev = p.Sample(n, prev, r)
		fmt.Printf("retry %d: %v (between 0 and %v)\n", n, prev.Round(time.Millisecond), p.Delay(n))
	}
	// Output:
	// retry 1: 338ms (between 0 and 500ms)
	// retry 2: 461ms (between 0 and 1s)
	// retry 3: 1.017s (between 0 and 2s)
}

func ExampleSolve() {
	p := workedExample()
	// How many retries fit a one-minute budget in the worst case?
	q, err := backoff.Solve(p, backoff.ParamRetries, time.Minute, backoff.TargetMax, backoff.DefaultSeed)
	fmt.Println(q.Retries, err)

	// And how large may the first delay be for all 8 retries to fit?
	q, err = backoff.Solve(p, backoff.ParamInitial, time.Minute, backoff.TargetMax, backoff.DefaultSeed)
	fmt.Println(q.Initial, backoff.Human(q.Stats(backoff.DefaultSeed).Total.Max), err)

	// With a 2 s cap, 8 retries never exceed 16 s, however fast delays grow.
	p.Max = 2 * time.Second
	_, err = backoff.Solve(p, backoff.ParamMultiplier, time.Minute, backoff.TargetMax, backoff.DefaultSeed)
	fmt.Println(errors.Is(err, backoff.ErrUnbounded))
	// Output:
	// 6 <nil>
	// 236.220472ms 1 min <nil>
	// true
}

func ExampleParseJitter() {
	j, f, err := backoff.ParseJitter("proportional:0.1")
	fmt.Println(j, f, err)
	_, _, err = backoff.ParseJitter("gaussian")
	fmt.Println(err)
	fmt.Println(errors.Is(err, backoff.ErrInvalid))
	// Output:
	// proportional 0.1 <nil>
	// backoff: Jitter must be none, full, equal, decorrelated or proportional:F with F in (0, 1], got "gaussian"
	// true
}

func ExampleHuman() {
	for _, d := range []time.Duration{250 * time.Millisecond, 45750 * time.Millisecond, 91500 * time.Millisecond, time.Hour + 5*time.Second} {
		fmt.Println(backoff.Human(d))
	}
	// Output:
	// 250 ms
	// 45.8 s
	// 1 min 32 s
	// 1 h 5 s
}

func ExampleDefault() {
	p := backoff.Default()
	fmt.Println(p.Initial, p.EffectiveMultiplier(), p.Max, p.Retries, p.JitterText())
	// Change what you need; every call returns a fresh value.
	p.Retries = 5
	fmt.Println(p.Delay(5), p.Capped(5), backoff.Default().Retries)
	// Output:
	// 500ms 2 10s 3 full
	// 8s false 3
}

func ExamplePolicy_Validate() {
	p := backoff.Policy{Initial: time.Second, Multiplier: 0.5, Retries: 3}
	err := p.Validate()
	var fe *backoff.FieldError
	if errors.As(err, &fe) {
		fmt.Println(fe.Field, fe.Value, errors.Is(err, backoff.ErrInvalid))
	}
	fmt.Println(err)
	// Output:
	// Multiplier 0.5 true
	// backoff: Multiplier must be a finite number >= 1 (or 0 for the default 2), got 0.5
}
