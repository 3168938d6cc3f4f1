package ready

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
)

// Checker is what Wait waits for: a *Target, or a test's fake. Check makes
// one attempt and returns nil when ready; an *Error with Permanent set
// ends the wait. String names it, without secrets, in results.
type Checker interface {
	Check(ctx context.Context) error
	String() string
}

var _ Checker = (*Target)(nil)

// Config is how Wait waits. The zero Config is not usable as is (its zero
// Policy is backoff's general-purpose default, not one fit for waiting):
// start from DefaultConfig and change what you need.
type Config struct {
	// Policy is the schedule of attempts for each target, used as is.
	// DefaultPolicy retries until the deadline.
	Policy backoff.Policy
	// Deadline bounds the whole wait; it must be above zero: a wait is
	// never unbounded.
	Deadline time.Duration
	// AttemptTimeout bounds each check; 0 for none, each check then
	// bounded by what is left of the Deadline alone.
	AttemptTimeout time.Duration
	// Invert waits until each target is not reachable: a check that fails
	// with a transient error counts as ready, one that succeeds as not
	// ready ("still reachable"). Permanent failures stay permanent.
	Invert bool
	// OnAttempt, if set, is called after each attempt at each target, on
	// that target's goroutine: concurrently for different targets, so it
	// must be safe for concurrent use. Wait returns after the last call.
	OnAttempt func(Progress)
	// OnResult, if set, is called once per target as soon as its wait
	// ends, with its Result, on that target's goroutine (concurrently for
	// different targets): a target ready at once is told at once, not
	// when the last one is. Its Stopped and Deadline are not known yet
	// (false and 0): they depend on how the other targets end. Wait
	// returns after the last call.
	OnResult func(Result)
}

// DefaultPolicy is the schedule Wait's DefaultConfig uses: attempts until
// the deadline, 250 ms, 500 ms, 1 s, then every 2 s, each drawn with full
// jitter, so that the waiters of a fleet that failed together do not
// retry together, and capped at 2 s, so that a target that comes up is
// seen ready within 2 s.
func DefaultPolicy() backoff.Policy {
	return backoff.Policy{
		Initial:    250 * time.Millisecond,
		Multiplier: 2,
		Max:        2 * time.Second,
		Retries:    backoff.UntilDeadline,
		Jitter:     backoff.FullJitter,
	}
}

// Default deadline and attempt timeout of DefaultConfig.
const (
	DefaultDeadline       = time.Minute
	DefaultAttemptTimeout = 5 * time.Second
)

// DefaultConfig is DefaultPolicy, a one-minute deadline and five seconds
// per attempt.
func DefaultConfig() Config {
	return Config{Policy: DefaultPolicy(), Deadline: DefaultDeadline, AttemptTimeout: DefaultAttemptTimeout}
}

// ErrConfig is matched by the errors of Config.Validate.
var ErrConfig = errors.New("ready: invalid configuration")

// Validate reports a Config that Wait cannot use.
func (c Config) Validate() error {
	if c.Deadline <= 0 {
		return fmt.Errorf("%w: the deadline must be above zero, got %v", ErrConfig, c.Deadline)
	}
	if c.AttemptTimeout < 0 {
		return fmt.Errorf("%w: the attempt timeout must be 0 (none) or above, got %v", ErrConfig, c.AttemptTimeout)
	}
	if err := c.Policy.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}

// Progress is one attempt at one target, for Config.OnAttempt.
type Progress struct {
	// Index is the target's index in Wait's targets.
	Index int
	// Target is the target's String.
	Target string
	// Attempt is the number of the attempt, from 1.
	Attempt int
	// Elapsed is the time since the wait began.
	Elapsed time.Duration
	// Err is the attempt's error, nil if it found the target ready.
	Err error
}

// Result is how the wait for one target ended.
type Result struct {
	// Target is the target's String: its secrets masked.
	Target string
	// Ready reports that the target was found ready (with Invert: not
	// reachable).
	Ready bool
	// Permanent reports that the target failed permanently (Err says
	// why); Ready is false.
	Permanent bool
	// Stopped reports that the wait for the target was stopped before its
	// deadline: another target failed permanently, or Wait's context
	// ended.
	Stopped bool
	// Inverted repeats Config.Invert, for the wording of the result.
	Inverted bool
	// Deadline is Config.Deadline when it ended the wait for the target
	// (neither ready, nor failed, nor stopped), 0 otherwise.
	Deadline time.Duration
	// Attempts is how many checks ran.
	Attempts int
	// Elapsed is the time from the start of the wait to its end for this
	// target.
	Elapsed time.Duration
	// Err is the last check's error (nil when Ready): an *Error for a
	// Target, whose text masks its secrets.
	Err error
}

// stillReachable is the failure of an inverted check whose target answered.
var stillReachable = &Error{msg: "still reachable"}

// Wait checks every target at once, each on the schedule of cfg.Policy,
// until each is ready, one fails permanently (the others are then stopped
// at once), cfg.Deadline passes or ctx ends. It returns one Result per
// target, in the order of targets, and an error only for an invalid cfg
// (matching ErrConfig). It starts one goroutine per target and returns
// after they all end.
func Wait(ctx context.Context, targets []Checker, cfg Config) ([]Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, cfg.Deadline)
	defer cancel()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	begin := time.Now()
	results := make([]Result, len(targets))
	var wg sync.WaitGroup
	for i, c := range targets {
		wg.Go(func() {
			results[i] = waitOne(ctx, i, c, cfg, begin)
			if results[i].Permanent {
				stop()
			}
			if cfg.OnResult != nil {
				cfg.OnResult(results[i])
			}
		})
	}
	wg.Wait()
	// A target that is neither ready nor failed was stopped by the
	// deadline, unless another target failed permanently or the caller's
	// context ended first.
	stopped := parent.Err() != nil
	for _, r := range results {
		stopped = stopped || r.Permanent
	}
	for i := range results {
		r := &results[i]
		r.Stopped = stopped && !r.Ready && !r.Permanent
		if !r.Ready && !r.Permanent && !r.Stopped {
			r.Deadline = cfg.Deadline
		}
	}
	return results, nil
}

func waitOne(ctx context.Context, i int, c Checker, cfg Config, begin time.Time) Result {
	r := Result{Target: c.String(), Inverted: cfg.Invert}
	var last error // the last error of an attempt that the deadline did not cut
	err := retry.Run(ctx, cfg.Policy, func(ctx context.Context) error {
		r.Attempts++
		actx, cancel := ctx, context.CancelFunc(func() {})
		if cfg.AttemptTimeout > 0 {
			actx, cancel = context.WithTimeout(ctx, cfg.AttemptTimeout)
		}
		err := c.Check(actx)
		cancel()
		if cfg.Invert {
			err = invert(err)
		}
		if ctx.Err() == nil || last == nil {
			last = err
		}
		if cfg.OnAttempt != nil {
			cfg.OnAttempt(Progress{Index: i, Target: r.Target, Attempt: r.Attempts, Elapsed: time.Since(begin), Err: err})
		}
		var e *Error
		if errors.As(err, &e) && e.Permanent {
			return retry.Permanent(err)
		}
		return err
	})
	r.Elapsed = time.Since(begin)
	switch {
	case err == nil:
		r.Ready = true
	case errors.Is(err, retry.ErrPermanent):
		r.Permanent, r.Err = true, last
	default:
		r.Err = last
		if r.Err == nil {
			r.Err = err // no attempt ran
		}
	}
	return r
}

// invert turns a check's error into the inverted check's: a transient
// failure is what --invert waits for, and an answer is not.
func invert(err error) error {
	if err == nil {
		return stillReachable
	}
	var e *Error
	if errors.As(err, &e) && e.Permanent {
		return err
	}
	return nil
}
