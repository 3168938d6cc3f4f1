package retry

import (
	"context"
	"log/slog"
	"time"

	"github.com/again-go/again/backoff"
)

// Do calls op until it succeeds, retrying failures on the schedule of p, and
// returns op's value. It is synchronous: op, the hooks and the waits all run
// on the calling goroutine, and Do starts no goroutine.
//
// The first attempt runs at once; there are at most p.MaxAttempts()
// attempts, and the wait before retry n is p.Sample(n, ...) (jittered), or
// the wait hint of the error (see After), which replaces it but is never
// shorter than p.Delay(1), the policy's first delay, unless the attempt
// was rejected (see below). Zero fields of p take their defaults
// (backoff.Policy{} is backoff.Default()); a negative Initial, Max or
// Retries means no wait, no cap or no retries (see backoff.Policy). Do
// stops, returning the zero T and an *Error whose Reason says why, when:
//
//   - every attempt failed (ErrExhausted);
//   - op returned an error wrapped with Permanent (see IsPermanent), or one
//     the classifier of WithClassifier rejects (ErrPermanent);
//   - ctx was done before the first attempt, when an attempt failed
//     (whatever op returned: its own context error or a consequence of
//     it), or during a wait, which then ends at once (ErrCanceled; the
//     *Error also matches context.Cause(ctx) and ctx.Err());
//   - ctx has a deadline and no more than the reserve is left before it,
//     or a wait hint would end at or after it (ErrDeadline): Do never
//     sleeps into certain failure. A wait drawn from p that would end
//     later than the reserve before the deadline is shortened to end then,
//     so that the last attempt starts within the reserve before the
//     deadline (see backoff.FitDeadline and WithDeadlineReserve; the
//     reserve is backoff.DeadlineReserve, 100 ms, by default);
//   - a wait hint exceeds the limit of WithMaxRetryAfter
//     (ErrRetryAfterTooLong), or for a rejected attempt that of
//     WithMaxRejectedWait (ErrRejected);
//   - the Budget given with WithBudget allows no more retries (ErrBudget).
//
// With WithClasses, a failure of a class waits on the class's schedule
// (hints floored at its first delay), counts against its cap as well as
// p's, and costs the Budget the class's Cost; see Class.
//
// An error whose chain holds an error with a method Rejected() bool that
// returns true (a circuit breaker or a limiter refused the attempt, so the
// dependency was never called) counts as an attempt and is retried like
// any other, waiting its RetryAfter hint as it is if it has one (the time
// until the attempt would be admitted, even if shorter than the policy's
// first delay), but it neither spends nor refunds the Budget.
//
// With WithAdmitter, each attempt first asks the Admitter (a client-side
// throttle, a learned send rate: package throttle); an attempt it refuses
// is not made, and its error, a rejection, counts as the attempt's.
//
// To retry until ctx's deadline rather than a number of times, set
// p.Retries to backoff.UntilDeadline: Do then stops with ErrDeadline (or
// ErrCanceled, if the deadline passes during an attempt), and returns
// ErrNoDeadline without calling op if ctx has no deadline.
//
// Do never waits after the last attempt. If the Budget is invalid (see
// TokenBucket.Validate), Do returns that error without calling op. If p is
// invalid (see backoff.Policy.Validate), Do returns that error, which
// matches backoff.ErrInvalid, in place of the first retry: the first
// attempt runs, and its success is returned as under any policy, but no
// failed call goes on with a policy that means nothing. Validating the
// policy where it is built (as the command does) reports it sooner;
// NewLoop validates it before the first attempt.
//
// On success Do allocates nothing and validates nothing but the context:
// it reads the monotonic clock once (Error.Elapsed counts the whole call,
// the first attempt included), and the policy is validated and the
// options applied only once the first attempt has failed. A first-try
// success is the common case: without options it costs ctx.Err, a clock
// read and the call of op; options add one pass over them, for a Budget,
// an Observer and an Admitter, and their calls. A failed attempt costs no allocation beyond op's own error,
// except one timer for the first non-zero wait of the call.
func Do[T any](ctx context.Context, p backoff.Policy, op func(context.Context) (T, error), opts ...Option) (T, error) {
	// A call without options, on a live context, has nothing to check
	// before its first attempt: it pays for ctx.Err, the clock read that
	// Error.Elapsed needs and op, in a frame that holds little more than
	// its arguments. Anything else takes doWith, the same call with the
	// options' checks and hooks around the first attempt.
	if len(opts) > 0 || p.Retries == backoff.UntilDeadline || ctx.Err() != nil {
		return doWith(ctx, &p, op, opts)
	}
	start := clock()
	v, err := op(ctx)
	if err != nil {
		return retryFailed(ctx, &p, op, nil, admission{}, start, err)
	}
	return v, nil
}

// doWith is Do for a call with options, with backoff.UntilDeadline or on
// a context already done: the checks of begin, then the first attempt
// through the Admitter, if any, and a success reported to the Budget and
// the Observer.
func doWith[T any](ctx context.Context, p *backoff.Policy, op func(context.Context) (T, error), opts []Option) (T, error) {
	var zero T
	b, ob, adm := scan(opts)
	if err := begin(ctx, *p, b, ob); err != nil {
		return zero, err
	}
	// The one clock read of a success: what a retry.Error reports as
	// Elapsed is the whole call, as it has always been.
	start := clock()
	v, err := attempt(ctx, adm, op)
	if err != nil {
		return retryFailed(ctx, p, op, opts, adm, start, err)
	}
	if b != nil {
		b.Success()
	}
	if ob != nil {
		ob.OnEnd(ctx, 1, nil)
	}
	return v, nil
}

// retryFailed is Do after a failed first attempt, which began at start
// and failed with err: it validates the policy and the classes, applies
// the options and retries. It is a function of its own so that Do's frame
// stays small: the Loop and its wait are set up only for a call that
// needs them, and p comes by pointer, so that calling it costs Do no
// copy of the policy.
func retryFailed[T any](ctx context.Context, p *backoff.Policy, op func(context.Context) (T, error), opts []Option, adm admission, start time.Duration, err error) (T, error) {
	var zero T
	if err := validate(*p, opts); err != nil {
		return zero, err
	}
	l := Loop{p: *p, cfg: newConfig(opts), start: start, ctx: ctx, class: -1}
	for {
		if err = l.Failed(ctx, err); err != nil {
			return zero, err
		}
		var v T
		if v, err = attempt(ctx, adm, op); err == nil {
			l.Succeeded()
			return v, nil
		}
	}
}

// Run is Do for an operation that returns only an error.
func Run(ctx context.Context, p backoff.Policy, op func(context.Context) error, opts ...Option) error {
	_, err := Do(ctx, p, func(ctx context.Context) (struct{}, error) { return struct{}{}, op(ctx) }, opts...)
	return err
}

// Loop is the retry loop of Do, for code that makes the attempts itself:
// after each failed attempt, Failed decides whether to retry and waits
// (or Next decides and Wait waits); after a success, Succeeded records it. retryhttp.Transport is built on it, and
// everything Do's documentation says holds for a Loop driven this way:
//
//	l, err := retry.NewLoop(ctx, p, opts...)
//	if err != nil {
//		return err
//	}
//	for {
//		err := attempt(ctx)
//		if err == nil {
//			l.Succeeded()
//			return nil
//		}
//		if err = l.Failed(ctx, err); err != nil {
//			return err // an *Error saying why retrying stopped
//		}
//	}
//
// A Loop serves one call, on one goroutine; it holds no resource that needs
// releasing. The zero Loop is not usable: make one with NewLoop.
type Loop struct {
	p        backoff.Policy
	cfg      config
	start    time.Duration   // on clock(): when NewLoop or Do began the call
	attempts int             // attempts made so far
	prev     time.Duration   // the policy's previous wait, for decorrelated jitter
	hintedAt int             // attempts when a hint last set the wait, under WithRestartAfterHint
	last     error           // the latest attempt's error
	timer    *time.Timer     // created at the first non-zero wait, then reused
	ctx      context.Context // the call's, for the Observer (which needs it in Succeeded)
	class    int             // the latest failure's class, an index of cfg.classes, or -1

	classFails  [maxClasses]int           // failures of each class so far
	classPrev   [maxClasses]time.Duration // each class's previous wait, for decorrelated jitter
	classHinted [maxClasses]int           // classFails when a hint last set the class's wait, under WithRestartAfterHint
}

// NewLoop begins a call with the policy p and the options opts. It returns
// the error of p.Validate or of the Budget's Validate method if either is
// invalid, ErrNoDeadline if p.Retries is backoff.UntilDeadline and ctx has
// no deadline, and an *Error with Reason ErrCanceled and no attempt if ctx is
// already done.
func NewLoop(ctx context.Context, p backoff.Policy, opts ...Option) (Loop, error) {
	if err := validate(p, opts); err != nil {
		return Loop{}, err
	}
	b, ob, _ := scan(opts)
	if err := begin(ctx, p, b, ob); err != nil {
		return Loop{}, err
	}
	// The Loop keeps the options applied, not opts itself: a Loop that
	// referred to the caller's slice would make it escape to the heap.
	return Loop{p: p, cfg: newConfig(opts), start: clock(), ctx: ctx, class: -1}, nil
}

// validate checks the call's policy and the classes of opts.
func validate(p backoff.Policy, opts []Option) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return validClasses(opts)
}

// begin checks what must hold before a call's first attempt besides a
// valid policy: a valid budget b, a deadline for backoff.UntilDeadline,
// and a context not done yet (ob is told if it is).
// It reads no clock unless the context is done.
func begin(ctx context.Context, p backoff.Policy, b Budget, ob Observer) error {
	if v, ok := b.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	if p.Retries == backoff.UntilDeadline {
		if _, ok := ctx.Deadline(); !ok {
			return ErrNoDeadline
		}
	}
	if ctx.Err() != nil {
		return canceledBefore(ctx, &p, ob)
	}
	return nil
}

// canceledBefore returns the *Error of a call whose context was done
// before its first attempt, and tells ob. Its Loop lives in its own frame,
// not in begin's, which every call runs.
func canceledBefore(ctx context.Context, p *backoff.Policy, ob Observer) error {
	l := Loop{p: *p, start: clock(), cfg: config{observer: ob}, class: -1}
	return l.canceled(ctx, nil)
}

// Attempts returns the number of attempts recorded so far with Failed and
// Succeeded.
func (l *Loop) Attempts() int { return l.attempts }

// Class returns the Name of the class (see WithClasses) of the latest
// failure recorded with Next or Failed: the class whose policy set the
// wait after it (Event.Class), or whose cap ended the call. After
// Succeeded it is still the class of the failure before the successful
// attempt, whose policy set the wait before it. It is "" before any
// failure, when the call has no classes, when no class matched the
// failure, and when the failure ended the call before it was classed (a
// Permanent error, one the classifier rejects, or ctx's end).
func (l *Loop) Class() string { return l.className() }

// Succeeded records that the latest attempt succeeded: it refunds the
// Budget, if any.
func (l *Loop) Succeeded() {
	l.attempts++
	if l.cfg.budget != nil {
		l.cfg.budget.Success()
	}
	if l.cfg.observer != nil {
		l.cfg.observer.OnEnd(l.ctx, l.attempts, nil)
	}
}

// Failed records that the latest attempt failed with err. It returns nil
// once the next attempt may be made, after waiting for it, or the *Error
// that ends the call (see Do for the reasons). It must not be called with a
// nil err. Failed is Next, then the WithOnRetry hook, the Observer's OnRetry
// and the WithLogger record, then Wait; when retrying stops, it logs that
// too (see WithLogger).
func (l *Loop) Failed(ctx context.Context, err error) error {
	d, err := l.Next(ctx, err)
	if err != nil {
		return l.stopped(ctx, err)
	}
	if l.cfg.onRetry != nil || l.cfg.logger != nil || l.cfg.observer != nil {
		l.notify(ctx, Event{Attempt: l.attempts, MaxAttempts: l.p.MaxAttempts(), Delay: d, Err: l.last, Class: l.className()})
	}
	if err := l.Wait(ctx, d); err != nil {
		return l.stopped(ctx, err)
	}
	return nil
}

// stopped returns err, the *Error that ends the call, after logging it if
// WithLogger asked for that.
func (l *Loop) stopped(ctx context.Context, err error) error {
	if l.cfg.logger != nil {
		l.logStop(ctx, err)
	}
	return err
}

// Next records that the latest attempt failed with err and decides, without
// waiting, what follows: the wait before the next attempt (shortened, if
// it is the policy's, to end the reserve before ctx's deadline: see Do),
// or the *Error that ends the call. Callers that report a retry in their own words (as
// retryhttp.Transport does) call Next, report, then Wait; others call
// Failed. Next calls no hook.
func (l *Loop) Next(ctx context.Context, err error) (time.Duration, error) {
	l.attempts++
	l.last = err
	l.class = -1 // until err is classed: a permanent error or ctx's end has no class
	if ctx.Err() != nil {
		// The failure is ctx's error, or a consequence of ctx ending: either
		// way no retry can succeed.
		return 0, l.canceled(ctx, err)
	}
	m := inspect(err)
	if m.permanent || (l.cfg.classifier != nil && !l.cfg.classifier(err)) {
		return 0, l.give(ErrPermanent, err)
	}
	l.class = l.classOf(err)
	allowed := true
	if l.cfg.budget != nil && !m.rejected {
		allowed = l.spend(l.class)
	}
	if classDone := l.failClass(l.class); l.attempts >= l.p.MaxAttempts() || classDone {
		return 0, l.give(ErrExhausted, err)
	}
	if !allowed {
		return 0, l.give(ErrBudget, err)
	}
	var d time.Duration
	hinted := m.hinted
	if hinted {
		limit := l.cfg.maxRetryAfter
		if m.rejected && l.cfg.maxRejected != 0 {
			limit = l.cfg.maxRejected
		}
		if limit < 0 || m.hint > limit {
			if m.rejected {
				return 0, l.give(ErrRejected, err)
			}
			return 0, l.give(ErrRetryAfterTooLong, err)
		}
		d = m.hint
		if !m.rejected {
			// A server's hint is a lower bound, floored at the policy's
			// first delay: a server answering every attempt with
			// Retry-After: 0 (or a gRPC pushback of 0 ms) would
			// otherwise be retried in a hot loop until the deadline, the
			// storm retrying exists to avoid. A rejection's hint is kept as
			// is: nothing was sent, and it is the time until the
			// breaker admits a probe.
			d = max(d, l.firstDelay(l.class))
			if l.cfg.restart {
				l.restart(l.class)
			}
		}
	} else if l.class >= 0 {
		d = l.classWait(l.class)
	} else {
		// A hint replaces one wait, not the schedule: decorrelated jitter
		// grows from the policy's own previous wait, not the server's.
		// Under WithRestartAfterHint the schedule starts over after it.
		d = l.p.Sample(l.attempts-l.hintedAt, l.prev, l.cfg.rand)
		l.prev = d
	}
	if deadline, ok := ctx.Deadline(); ok {
		// The schedule's wait is shortened to leave the next attempt its
		// reserve; a hint is not, and one ending after the deadline stops
		// the loop, as does a deadline less than the reserve away.
		if d, ok = backoff.FitDeadline(d, time.Until(deadline), l.cfg.reserve, hinted); !ok {
			return 0, l.give(ErrDeadline, err)
		}
	}
	return d, nil
}

// Wait waits d, the wait Next returned, and returns nil, or the *Error with
// Reason ErrCanceled if ctx ends first (at once if it has ended already).
func (l *Loop) Wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		if ctx.Err() != nil {
			return l.canceled(ctx, l.last)
		}
		return nil
	}
	if l.timer == nil {
		l.timer = time.NewTimer(d)
	} else {
		l.timer.Reset(d)
	}
	select {
	case <-l.timer.C:
		return nil
	case <-ctx.Done():
		l.timer.Stop()
		return l.canceled(ctx, l.last)
	}
}

func (l *Loop) notify(ctx context.Context, e Event) {
	if l.cfg.onRetry != nil {
		l.cfg.onRetry(e)
	}
	if l.cfg.observer != nil {
		l.cfg.observer.OnRetry(ctx, e)
	}
	if lg := l.cfg.logger; lg != nil && lg.Enabled(ctx, slog.LevelInfo) {
		lg.LogAttrs(ctx, slog.LevelInfo, "retry: attempt failed; retrying",
			slog.Int("attempt", e.Attempt),
			slog.Int("max_attempts", e.MaxAttempts),
			slog.Duration("delay", e.Delay),
			slog.Any("error", e.Err))
	}
}

// logStop records the end of a call on err, the *Error that ends it: at
// Warn, as something the caller's program did not get, except when the
// caller's own context ended it (Info: the caller chose to stop).
func (l *Loop) logStop(ctx context.Context, err error) {
	e, ok := err.(*Error)
	if !ok {
		return
	}
	level := slog.LevelWarn
	if e.Reason == ErrCanceled {
		level = slog.LevelInfo
	}
	// The caller's context may have ended: the record is about it, not
	// governed by it.
	ctx = context.WithoutCancel(ctx)
	if lg := l.cfg.logger; lg.Enabled(ctx, level) {
		lg.LogAttrs(ctx, level, "retry: giving up",
			slog.Int("attempt", e.Attempts),
			slog.Int("max_attempts", l.p.MaxAttempts()),
			slog.String("reason", e.Reason.Error()),
			slog.Any("error", e.Last))
	}
}

func (l *Loop) give(reason, last error) error {
	e := &Error{Reason: reason, Attempts: l.attempts, Elapsed: clock() - l.start, Last: last}
	l.ended(l.ctx, e)
	return e
}

// ended tells the Observer, if any, that the call ends with e.
func (l *Loop) ended(ctx context.Context, e *Error) {
	if l.cfg.observer != nil {
		l.cfg.observer.OnEnd(ctx, e.Attempts, e)
	}
}

// canceled returns the error for a call ended by ctx.
func (l *Loop) canceled(ctx context.Context, last error) error {
	e := &Error{Reason: ErrCanceled, Attempts: l.attempts, Elapsed: clock() - l.start, Last: last, Cause: context.Cause(ctx)}
	if err := ctx.Err(); err != e.Cause {
		e.ctxErr = err
	}
	l.ended(ctx, e)
	return e
}

// epoch is the fixed origin of clock. It is set once, at package
// initialisation, and never changed.
var epoch = time.Now()

// clock returns the time elapsed since epoch. time.Since reads only the
// monotonic clock, where time.Now reads the wall clock too, at half the
// cost.
func clock() time.Duration { return time.Since(epoch) }
