package backoff_test

import (
	"errors"
	"fmt"
	"iter"
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
		fmt.Printf("retry %d: %v\n", n, p.Delay(n))
	}
	// Output:
	// retry 1: 500ms
	// retry 2: 1s
	// retry 3: 2s
	// retry 4: 4s
	// retry 5: 8s
	// retry 6: 16s
	// retry 7: 30s
	// retry 8: 30s
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

func ExampleParseJitter() {
	j, f, err := backoff.ParseJitter("proportional:0.1")
	fmt.Println(j, f, err)
	_, _, err = backoff.ParseJitter("gaussian")
	fmt.Println(err)
	fmt.Println(errors.Is(err, backoff.ErrInvalid))
	// Output:
	// proportional 0.1 <nil>
	// backoff: Jitter must be none, full, equal, decorrelated, proportional:F or grpc:F with F in (0, 1], got "gaussian"
	// true
}

func ExampleDefault() {
	p := backoff.Default()
	fmt.Println(p.Initial, p.EffectiveMultiplier(), p.Max, p.Retries, p.JitterText())
	// Change what you need; every call returns a fresh value.
	p.Retries = 5
	fmt.Println(p.Delay(5), p.MaxAttempts(), backoff.Default().Retries)
	// Output:
	// 500ms 2 10s 3 full
	// 8s 6 3
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

// The zero rule: a zero field takes its default and a negative one means
// none, so a partly filled Policy is never a burst of instant retries.
func ExamplePolicy_zeroRule() {
	p := backoff.Policy{Retries: 5} // Initial 500ms, ×2, Max 10s, full jitter
	fmt.Println(p.MaxAttempts(), p.Delay(1), p.Delay(5), p.Delay(6))

	once := backoff.Policy{Retries: backoff.NoRetries}
	fmt.Println(once.MaxAttempts())

	uncapped := backoff.Policy{Initial: 8 * time.Second, Max: backoff.NoCap, Jitter: backoff.NoJitter}
	fmt.Println(uncapped.Delay(3))

	// Zero Max means the default 10 s cap, so a larger Initial is rejected
	// instead of silently shortened.
	fmt.Println(backoff.Policy{Initial: 30 * time.Second}.Validate())
	// Output:
	// 6 500ms 8s 10s
	// 1
	// 32s
	// backoff: Initial must be at most the default Max of 10s when Max is 0 (set Max, or Max: NoCap), got 30s
}

func ExamplePolicy_Waits() {
	p := workedExample()
	p.Retries = 4
	p.Jitter = backoff.EqualJitter
	r := rand.New(rand.NewPCG(1, 2)) // fixed for the example; nil in real code
	for d := range p.Waits(r) {
		fmt.Println(d.Round(time.Millisecond))
	}
	// Output:
	// 419ms
	// 731ms
	// 1.509s
	// 2.86s
}

// Code written for cenkalti/backoff's NextBackOff can pull the waits one
// at a time.
func ExamplePolicy_Waits_pull() {
	p := backoff.Policy{Initial: time.Second, Retries: 2, Jitter: backoff.NoJitter}
	next, stop := iter.Pull(p.Waits(nil))
	defer stop()
	for {
		d, ok := next()
		if !ok { // cenkalti/backoff's Stop
			fmt.Println("give up")
			break
		}
		fmt.Println("wait", d)
	}
	// Output:
	// wait 1s
	// wait 2s
	// give up
}
