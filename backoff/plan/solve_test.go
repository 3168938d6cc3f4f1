package plan

import (
	"errors"
	"github.com/again-go/again/backoff"
	"math"
	"testing"
	"time"
)

func TestSolveErrors(t *testing.T) {
	tests := []struct {
		name     string
		p        backoff.Policy
		param    Param
		deadline time.Duration
		target   Target
		want     error
	}{
		{"invalid policy", backoff.Policy{Multiplier: 0.5}, ParamInitial, time.Minute, TargetMax, backoff.ErrInvalid},
		{"zero deadline", backoff.Default(), ParamInitial, 0, TargetMax, ErrArgument},
		{"negative deadline", backoff.Default(), ParamRetries, -time.Second, TargetMax, ErrArgument},
		{"unknown param", backoff.Default(), Param(3), time.Minute, TargetMax, ErrArgument},
		{"negative param", backoff.Default(), Param(-1), time.Minute, TargetMax, ErrArgument},
		{"unknown target", backoff.Default(), ParamInitial, time.Minute, Target(2), ErrArgument},
		{"p99 beyond MaxStatsRetries", backoff.Policy{Initial: time.Second, Retries: MaxStatsRetries + 1}, ParamInitial, time.Minute, TargetP99, ErrArgument},
		// Multiplier 1 gives 3 × 1 s, already over 2 s.
		{"multiplier 1 too long", backoff.Policy{Initial: time.Second, Retries: 3, Jitter: backoff.NoJitter}, ParamMultiplier, 2 * time.Second, TargetMax, ErrUnsolvable},
		{"multiplier 1 too long at p99", backoff.Policy{Initial: time.Second, Retries: 3, Jitter: backoff.EqualJitter}, ParamMultiplier, 2 * time.Second, TargetP99, ErrUnsolvable},
		// 1 s + 2 s + 2 s fits in 10 s however fast delays grow.
		{"any multiplier fits", backoff.Policy{Initial: time.Second, Max: 2 * time.Second, Retries: 3}, ParamMultiplier, 10 * time.Second, TargetMax, ErrUnbounded},
		{"any multiplier fits at p99", backoff.Policy{Initial: time.Second, Max: 2 * time.Second, Retries: 3}, ParamMultiplier, 10 * time.Second, TargetP99, ErrUnbounded},
		{"any initial fits under the cap", backoff.Policy{Max: time.Second, Retries: 3}, ParamInitial, 5 * time.Second, TargetMax, ErrUnbounded},
		{"any initial fits without retries", backoff.Policy{Retries: backoff.NoRetries}, ParamInitial, time.Second, TargetP99, ErrUnbounded},
		{"any retry count fits without delays", backoff.Policy{Initial: -1, Multiplier: 3}, ParamRetries, time.Second, TargetMax, ErrUnbounded},
		{"p99 fits for MaxStatsRetries", backoff.Policy{Initial: time.Nanosecond, Multiplier: 1, Jitter: backoff.FullJitter}, ParamRetries, time.Hour, TargetP99, ErrUnbounded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Solve(tt.p, tt.param, tt.deadline, tt.target, DefaultSeed)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Solve(%v, %v, %v) error = %v, want %v", tt.param, tt.deadline, tt.target, err, tt.want)
			}
			if got != tt.p {
				t.Errorf("Solve() = %+v with an error, want the policy unchanged %+v", got, tt.p)
			}
		})
	}
}

func TestSolveSeedExample(t *testing.T) {
	p := seedExample(backoff.FullJitter)
	got, err := Solve(p, ParamRetries, time.Minute, TargetMax, DefaultSeed)
	if err != nil || got.Retries != 6 {
		t.Errorf("Solve(retries, 1 min) = %d, %v; want 6, nil", got.Retries, err)
	}
	// 91.5 s is the example's own worst case, so with the 100 ms reserve,
	// 91.6 s makes its 500 ms the answer.
	got, err = Solve(p, ParamInitial, 91600*time.Millisecond, TargetMax, DefaultSeed)
	if err != nil || got.Initial != 500*time.Millisecond {
		t.Errorf("Solve(initial, 91.6 s) = %v, %v; want 500ms, nil", got.Initial, err)
	}
	got, err = Solve(p, ParamMultiplier, 91600*time.Millisecond, TargetMax, DefaultSeed)
	if err != nil || got.Multiplier < 2 || got.Multiplier > 2.000001 {
		t.Errorf("Solve(multiplier, 91.6 s) = %v, %v; want just above 2, nil", got.Multiplier, err)
	}
	// No more than the reserve: the loop makes no retry, whatever the delay.
	if _, err = Solve(p, ParamInitial, backoff.DeadlineReserve, TargetMax, DefaultSeed); !errors.Is(err, ErrUnsolvable) {
		t.Errorf("Solve(initial, %v) error = %v, want ErrUnsolvable", backoff.DeadlineReserve, err)
	}
}

// next returns the policy with param one step larger: 1 ns, the next
// float64 or one more retry.
func next(p backoff.Policy, param Param) backoff.Policy {
	switch param {
	case ParamInitial:
		p.Initial = max(p.Initial, 0) + 1 // from no wait (negative) to 1 ns
	case ParamMultiplier:
		p.Multiplier = math.Nextafter(p.Multiplier, math.Inf(1))
	case ParamRetries:
		p.Retries = max(p.Retries, 0) + 1 // from backoff.NoRetries to 1
	}
	return p
}

// scale returns the policy with param larger by the relative step r.
func scale(p backoff.Policy, param Param, r float64) backoff.Policy {
	switch param {
	case ParamInitial:
		p.Initial = max(p.Initial+1, time.Duration(float64(p.Initial)*(1+r)))
	case ParamMultiplier:
		p.Multiplier *= 1 + r
	case ParamRetries:
		p.Retries++
	}
	return p
}

func TestSolveFindsTheLargestValue(t *testing.T) {
	policies := []backoff.Policy{
		seedExample(backoff.NoJitter), seedExample(backoff.FullJitter), seedExample(backoff.EqualJitter), seedExample(backoff.ProportionalJitter), seedExample(backoff.DecorrelatedJitter),
		{Initial: 10 * time.Millisecond, Multiplier: 1.3, Retries: 40, Jitter: backoff.FullJitter},
		{Initial: 250 * time.Millisecond, Multiplier: 2, Max: 4 * time.Second, Retries: 500, Jitter: backoff.ProportionalJitter, JitterFactor: 0.5},
	}
	deadlines := []time.Duration{time.Minute, 17*time.Minute + 3*time.Second}
	for _, p := range policies {
		for _, d := range deadlines {
			for _, param := range []Param{ParamInitial, ParamMultiplier, ParamRetries} {
				for _, target := range []Target{TargetMax, TargetP99} {
					got, err := Solve(p, param, d, target, DefaultSeed)
					if errors.Is(err, ErrUnbounded) || errors.Is(err, ErrUnsolvable) {
						continue // covered by TestSolveErrors
					}
					if err != nil {
						t.Errorf("%v jitter: Solve(%v, %v, %v) error %v", p.Jitter, param, d, target, err)
						continue
					}
					stat := func(q backoff.Policy) time.Duration {
						if target == TargetMax {
							return Analyze(q, DefaultSeed).Total.Max
						}
						return Analyze(q, DefaultSeed).Total.P99
					}
					// The answer leaves the loop's reserve for the last attempt.
					end := d - backoff.DeadlineReserve
					if s := stat(got); s > end {
						t.Errorf("%v jitter: Solve(%v, %v, %v) = %+v whose %v total is %v, over the deadline minus the reserve", p.Jitter, param, d, target, got, target, s)
					}
					bigger := next(got, param)
					if target == TargetP99 {
						bigger = scale(got, param, 1e-3)
					}
					if s := stat(bigger); s <= end {
						t.Errorf("%v jitter: Solve(%v, %v, %v) = %+v, but %+v fits too (%v total %v)", p.Jitter, param, d, target, got, bigger, target, s)
					}
				}
			}
		}
	}
}
