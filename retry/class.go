package retry

import (
	"fmt"
	"math"
	"time"

	"github.com/again-go/again/backoff"
)

// Class is a kind of failure with a retry schedule of its own: overloads
// (a 429, a 503, RESOURCE_EXHAUSTED, a throttle's or a breaker's
// rejection) are retried slowly, a dropped connection at once. Give a
// call its classes with WithClasses; a failure that no class matches is
// retried on the call's policy, as without classes.
//
// A Class is a plain value, safe to copy and to share between goroutines
// once built (its Match function must then be safe for concurrent use).
// The zero Class matches every error and retries it on the default
// policy (backoff.Default()) at a cost of 1.
type Class struct {
	// Name names the class, for the caller's logs (Event.Class); for
	// example "overload" or "transient".
	Name string
	// Match reports whether a failed attempt's error belongs to the
	// class. It is called on the calling goroutine, only for errors that
	// are retried at all (not Permanent, not rejected by the classifier
	// of WithClassifier, not the caller's context ending). Nil matches
	// every error: a catch-all class, to put last.
	Match func(error) bool
	// Policy is the class's schedule: the wait after the class's nth
	// failure in a call is Policy.Sample(n, ...), and a server's wait hint
	// is floored at Policy.Delay(1). Its MaxAttempts caps the failures of
	// the class within one call: the call stops with ErrExhausted when
	// they reach it, and the call's own policy still caps every attempt.
	// Zero fields take their defaults, as for any backoff.Policy.
	Policy backoff.Policy
	// Cost is what a retry of the class takes from the call's Budget, in
	// the Budget's tokens, when the Budget has a method
	// FailureCost(cost float64) bool (as *TokenBucket has); other Budgets
	// are told Failure() whatever the cost. Zero means 1, the cost of a
	// failure without classes. It must not be negative.
	Cost float64
}

// maxClasses is the most classes a call may have: the Loop counts each
// class's failures in an array, so that classes cost no allocation.
const maxClasses = 8

// WithClasses gives the call a retry schedule per class of failure (see
// Class): after a failed attempt, the first class whose Match accepts the
// error decides the wait, counts the failure against its own cap and
// charges its Cost to the Budget; a failure no class matches is retried on
// the call's policy at a cost of 1, as without classes (its wait is the
// policy's for the attempt's number). A class's schedule counts the
// class's own failures: a failure of another class neither advances nor
// restarts it, and under WithRestartAfterHint a server's hint restarts the
// schedule of its own class alone. At most 8 classes;
// more, or a class whose Policy or Cost is invalid, is reported as
// an ErrInvalid error where an invalid policy is (see Do and NewLoop). No
// classes, the default, is the behaviour without this option.
//
// Making the Option copies cs into a new slice (one allocation): make it
// once and reuse it, as its calls then allocate nothing for it.
func WithClasses(cs ...Class) Option {
	if len(cs) == 0 {
		return Option{kind: optClasses}
	}
	return Option{kind: optClasses, v: append([]Class(nil), cs...)}
}

// AWSMaxAttempts is the attempts the AWS SDKs' retry behaviour of 2026
// allows a call, the first included: give the call's policy
// Retries: AWSMaxAttempts - 1 with AWSClasses.
const AWSMaxAttempts = 3

// AWSClasses returns the two classes of the AWS SDKs' retry behaviour as
// updated in 2026 (aws-sdk-go-v2 #3416): throttling errors (IsOverload)
// wait from a 1 s base and cost 5 tokens of the retry quota, other
// transient errors from a 50 ms base and cost 14; both double up to 20 s
// with full jitter. With a policy of AWSMaxAttempts attempts and a
// TokenBucket of 500 tokens (the SDKs' quota) it is their standard mode:
//
//	p := backoff.Policy{Retries: retry.AWSMaxAttempts - 1}
//	quota := &retry.TokenBucket{MaxTokens: 500, TokenRatio: 1}
//	opts := []retry.Option{retry.WithClasses(retry.AWSClasses()...), retry.WithBudget(quota)}
//
// The SDKs refuse a retry when the quota holds less than its cost, where a
// TokenBucket refuses one once it is half empty.
func AWSClasses() []Class {
	const capWait = 20 * time.Second
	return []Class{
		{Name: "throttling", Match: IsOverload, Cost: 5,
			Policy: backoff.Policy{Initial: time.Second, Multiplier: 2, Max: capWait}},
		{Name: "transient", Cost: 14,
			Policy: backoff.Policy{Initial: 50 * time.Millisecond, Multiplier: 2, Max: capWait}},
	}
}

// validClasses checks the classes of opts.
func validClasses(opts []Option) error {
	cs := classesOf(opts)
	if len(cs) > maxClasses {
		return &FieldError{Field: "WithClasses", Value: fmt.Sprint(len(cs)), Accepted: "at most 8 classes"}
	}
	for i, c := range cs {
		if err := c.Policy.Validate(); err != nil {
			return fmt.Errorf("retry: class %d (%q): %w", i, c.Name, err)
		}
		if !(c.Cost >= 0) || math.IsInf(c.Cost, 1) {
			return &FieldError{Field: fmt.Sprintf("Class[%d].Cost", i), Value: fmt.Sprint(c.Cost), Accepted: "a finite number >= 0 (0 means 1)"}
		}
	}
	return nil
}

// classesOf returns the classes among opts (the last WithClasses given).
func classesOf(opts []Option) []Class {
	var cs []Class
	for _, o := range opts {
		if o.kind == optClasses {
			cs, _ = o.v.([]Class)
		}
	}
	return cs
}

// classOf returns the index of err's class among the Loop's, or -1.
func (l *Loop) classOf(err error) int {
	for i, c := range l.cfg.classes {
		if c.Match == nil || c.Match(err) {
			return i
		}
	}
	return -1
}

// failClass counts a failure of class c (-1: none) and reports whether the
// class has used up its attempts.
func (l *Loop) failClass(c int) (exhausted bool) {
	if c < 0 {
		return false
	}
	l.classFails[c]++
	return l.classFails[c] >= l.cfg.classes[c].Policy.MaxAttempts()
}

// spend charges the Budget for a retry of class c (-1: none).
func (l *Loop) spend(c int) bool {
	if c >= 0 {
		if cb, ok := l.cfg.budget.(interface{ FailureCost(float64) bool }); ok {
			cost := l.cfg.classes[c].Cost
			if cost == 0 {
				cost = 1
			}
			return cb.FailureCost(cost)
		}
	}
	return l.cfg.budget.Failure()
}

// firstDelay is the floor of a server's wait hint for class c (-1: the
// call's policy).
func (l *Loop) firstDelay(c int) time.Duration {
	if c < 0 {
		return l.p.Delay(1)
	}
	return l.cfg.classes[c].Policy.Delay(1)
}

// classWait draws the wait after the latest failure of class c, on the
// class's schedule, with decorrelated jitter growing from the class's own
// previous wait.
func (l *Loop) classWait(c int) time.Duration {
	d := l.cfg.classes[c].Policy.Sample(l.classFails[c]-l.classHinted[c], l.classPrev[c], l.cfg.rand)
	l.classPrev[c] = d
	return d
}

// restart starts the schedule of class c (-1: the call's policy) over
// after a server's hint set the wait of its latest failure, under
// WithRestartAfterHint: its next wait is its first delay. The schedules of
// the other classes, and their failures counted against their caps, go on
// as they were.
func (l *Loop) restart(c int) {
	if c < 0 {
		l.hintedAt, l.prev = l.attempts, 0
		return
	}
	l.classHinted[c], l.classPrev[c] = l.classFails[c], 0
}

// className is the Name of the latest failure's class, or "".
func (l *Loop) className() string {
	if l.class < 0 {
		return ""
	}
	return l.cfg.classes[l.class].Name
}
