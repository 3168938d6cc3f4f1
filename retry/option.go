package retry

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/again-go/again/backoff"
)

// DefaultMaxRetryAfter is the longest wait hint honoured when
// WithMaxRetryAfter is not given (or given 0): a server asking for more is
// better rescheduled by the caller than waited for inside one call.
const DefaultMaxRetryAfter = time.Minute

// Option changes how Do, Run and NewLoop retry. Every option is made by a function
// named WithX. Options are small values: passing them costs no allocation.
// The zero Option does nothing; of two options of the same kind, the later
// wins.
type Option struct {
	kind optionKind
	d    time.Duration
	v    any // func(error) bool, func(Event), Budget, *slog.Logger, backoff.Rand or Observer
}

type optionKind uint8

const (
	optNone optionKind = iota
	optClassifier
	optMaxRetryAfter
	optBudget
	optOnRetry
	optLogger
	optRand
	optObserver
	optMaxRejectedWait
	optAdmitter
	optRestartAfterHint
	optDeadlineReserve
	optClasses
)

// Event describes a failed attempt that is about to be retried. It is passed
// to the WithOnRetry hook and logged by WithLogger.
type Event struct {
	// Attempt is the number of the attempt that just failed, from 1.
	Attempt int
	// MaxAttempts is the most attempts the policy allows:
	// Policy.MaxAttempts().
	MaxAttempts int
	// Delay is the wait before the next attempt, the one actually made: the
	// policy's jittered delay, or the error's wait hint floored at the
	// policy's first delay (see After). RetryAfter(Err) reads the hint as
	// given.
	Delay time.Duration
	// Err is the error the attempt returned.
	Err error
	// Class is the Name of the failure's class (see WithClasses), or ""
	// when no class matched it and the call's policy set the wait.
	Class string
}

// WithClassifier sets the classifier: an error for which retryable returns
// false stops retrying at once with ErrPermanent. It is consulted only for
// errors that are retryable by the default rules (not Permanent, not the
// caller's context error). A nil function restores the default, which
// retries every other error. retryable runs on the calling goroutine.
func WithClassifier(retryable func(error) bool) Option {
	return Option{kind: optClassifier, v: retryable}
}

// WithMaxRetryAfter sets the longest wait hint (see After) to honour; a
// longer hint stops retrying at once with ErrRetryAfterTooLong. Zero means
// DefaultMaxRetryAfter (1 minute); a negative d honours no hint at all:
// any error carrying one stops retrying with ErrRetryAfterTooLong, so that
// the caller can reschedule the work itself.
func WithMaxRetryAfter(d time.Duration) Option {
	return Option{kind: optMaxRetryAfter, d: d}
}

// WithMaxRejectedWait sets the longest wait hint to honour from a rejected
// attempt (an error whose Rejected method returns true, such as a circuit
// breaker's *breaker.OpenError, whose hint is the time until it admits a
// probe) in place of the limit of WithMaxRetryAfter, which is about
// servers' hints; a longer hint stops retrying at once with ErrRejected,
// and the returned *Error still matches the rejection. Zero, the default,
// means the limit of WithMaxRetryAfter, so that a loop around a breaker
// waits for its probe; a negative d honours no rejection's hint: the
// first rejection that carries one ends the call, which is how
// retryhttp.Transport fails fast on an open breaker.
func WithMaxRejectedWait(d time.Duration) Option {
	return Option{kind: optMaxRejectedWait, d: d}
}

// WithRestartAfterHint makes a server's wait hint restart the policy's
// schedule: the next wait that no hint sets is the policy's first delay
// (Policy.Delay(1), jittered), then the second, and so on, as gRPC's A6
// and grpc-go reset their backoff after a pushback ("the backoff ... is
// reset to the initial backoff"). By default a hint replaces one wait and
// the schedule goes on from the attempt's number. A breaker's rejection
// is not a server's hint and restarts nothing. With WithClasses, the hint
// restarts the schedule of the class whose failure carried it (the call's
// policy if no class matched it) and no other: each other class's next
// wait is the one it would have had, and every class's failures still
// count against its cap.
func WithRestartAfterHint() Option {
	return Option{kind: optRestartAfterHint}
}

// WithDeadlineReserve sets the time the loop keeps for an attempt before
// ctx's deadline: d, the attempts' own timeout where the caller sets one
// (as retryhttp.Transport and retrygrpc.Interceptor do for their
// AttemptTimeout). A wait that would end later than d before the deadline
// is shortened to end then, and the loop stops with ErrDeadline only once
// no more than d is left (see backoff.FitDeadline). Zero or a negative d
// means backoff.DeadlineReserve (100 ms), the default. The option does not
// bound the attempts: op must do that itself.
func WithDeadlineReserve(d time.Duration) Option {
	return Option{kind: optDeadlineReserve, d: d}
}

// WithBudget makes retries draw on b, which may be shared by many calls
// (see Budget and TokenBucket). A nil b means no budget, the default. If b
// has a Validate() error method (as *TokenBucket has), Do, Run and NewLoop
// call it before the first attempt and return its error.
func WithBudget(b Budget) Option {
	if tb, ok := b.(*TokenBucket); ok && tb == nil {
		b = nil
	}
	return Option{kind: optBudget, v: b}
}

// WithOnRetry sets a hook called after each failed attempt that will be
// retried, before the wait, on the goroutine that called Do or Run. It is
// not called when retrying stops. The wait starts when the hook returns.
func WithOnRetry(hook func(Event)) Option {
	return Option{kind: optOnRetry, v: hook}
}

// WithLogger logs on l each retry at level Info, with the message
// "retry: attempt failed; retrying" and the attributes attempt,
// max_attempts, delay and error (the Event's fields), and the end of a
// call that failed at level Warn, with the message "retry: giving up" and
// the attributes attempt, max_attempts, reason (the *Error's Reason) and
// error (its Last); a call ended by the caller's own context
// (ErrCanceled) is logged at Info. A retry is routine, a failed call is
// what an operator looks for. A nil l logs nothing, the default.
func WithLogger(l *slog.Logger) Option {
	return Option{kind: optLogger, v: l}
}

// WithRand sets the source of the jitter. The default is math/rand/v2's
// goroutine-safe global generator; tests inject a fixed source to get a
// reproducible schedule. r is only used on the calling goroutine. A nil r
// restores the default.
func WithRand(r backoff.Rand) Option {
	return Option{kind: optRand, v: r}
}

// Observer is told how each call goes, for metrics and traces (the
// otelagain module implements it for OpenTelemetry). Its methods run on
// the goroutine that drives the call, with the call's context; they must
// not block, and should not allocate if the success path is to stay
// allocation-free.
type Observer interface {
	// OnRetry is called where the WithOnRetry hook is: after a failed
	// attempt that will be retried, before the wait.
	OnRetry(ctx context.Context, e Event)
	// OnEnd is called once when the call ends: err is nil after a
	// success, with attempts the attempts it took, or else the *Error that
	// Do returns (attempts is then its Attempts; 0 when ctx was done
	// before the first attempt). It is not called when the budget is
	// invalid (no call was made) nor when Do returns the error of an
	// invalid policy after the first attempt (see Do).
	OnEnd(ctx context.Context, attempts int, err error)
}

// WithObserver sets an Observer that is told of every retry and of the end
// of every call. A nil o observes nothing, the default. Do, Run and a Loop
// (from NewLoop, when its call ends with Succeeded or an *Error) call it.
func WithObserver(o Observer) Option {
	return Option{kind: optObserver, v: o}
}

// config is the options, applied.
type config struct {
	classifier    func(error) bool
	maxRetryAfter time.Duration // < 0: no hint is honoured
	maxRejected   time.Duration // for a rejection's hint; 0: maxRetryAfter, < 0: none
	budget        Budget
	onRetry       func(Event)
	logger        *slog.Logger
	rand          backoff.Rand
	observer      Observer
	restart       bool          // a server's hint restarts the schedule
	reserve       time.Duration // kept for an attempt before the deadline; <= 0: backoff.DeadlineReserve
	classes       []Class
}

func newConfig(opts []Option) config {
	c := config{maxRetryAfter: DefaultMaxRetryAfter, rand: globalRand{}}
	for _, o := range opts {
		switch o.kind {
		case optClassifier:
			c.classifier, _ = o.v.(func(error) bool)
		case optMaxRetryAfter:
			c.maxRetryAfter = o.d
			if c.maxRetryAfter == 0 {
				c.maxRetryAfter = DefaultMaxRetryAfter
			}
		case optMaxRejectedWait:
			c.maxRejected = o.d
		case optRestartAfterHint:
			c.restart = true
		case optDeadlineReserve:
			c.reserve = o.d
		case optClasses:
			c.classes, _ = o.v.([]Class)
		case optBudget:
			c.budget, _ = o.v.(Budget)
		case optOnRetry:
			c.onRetry, _ = o.v.(func(Event))
		case optLogger:
			c.logger, _ = o.v.(*slog.Logger)
		case optObserver:
			c.observer, _ = o.v.(Observer)
		case optRand:
			c.rand, _ = o.v.(backoff.Rand)
			if c.rand == nil {
				c.rand = globalRand{}
			}
		}
	}
	return c
}

// globalRand draws from math/rand/v2's top-level generator: per-thread
// state, no lock, no allocation, safe from any goroutine.
type globalRand struct{}

func (globalRand) Float64() float64 { return rand.Float64() }

// scan returns the Budget, the Observer and the admission among opts
// (the last of each given) in one pass, without applying the other
// options: all that the first attempt of a call needs.
func scan(opts []Option) (Budget, Observer, admission) {
	var b Budget
	var ob Observer
	var adm admission
	for _, o := range opts {
		switch o.kind {
		case optBudget:
			b, _ = o.v.(Budget)
		case optObserver:
			ob, _ = o.v.(Observer)
		case optAdmitter:
			adm, _ = o.v.(admission)
		}
	}
	return b, ob, adm
}

// Retryable reports whether a Loop made with opts would retry err, judging
// by the error alone: false for an error wrapped with Permanent and for one
// that the classifier of WithClassifier rejects, true for any other non-nil
// error. It does not look at the attempts, the Budget or a context. Code
// that runs attempts concurrently (package hedge) calls it to decide, as
// the loop would, whether a failed attempt is worth another one at once.
func Retryable(err error, opts ...Option) bool {
	if err == nil || inspect(err).permanent {
		return false
	}
	var classifier func(error) bool
	for _, o := range opts {
		if o.kind == optClassifier {
			classifier, _ = o.v.(func(error) bool)
		}
	}
	return classifier == nil || classifier(err)
}
