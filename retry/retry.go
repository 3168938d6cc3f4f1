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
// The first attempt runs at once; there are at most p.Retries+1 attempts,
// and the wait before retry n is p.Sample(n, ...) (jittered), or the hint of
// an error made with After. Do stops, returning the zero T and an *Error
// whose Reason says why, when:
//
//   - every attempt failed (ErrExhausted);
//   - op returned an error wrapped with Permanent, or one the RetryIf
//     classifier rejects (ErrPermanent);
//   - ctx was done before the first attempt, when an attempt failed
//     (whatever op returned: its own context error or a consequence of
//     it), or during a wait, which then ends at once (ErrCanceled; the
//     *Error also matches context.Cause(ctx) and ctx.Err());
//   - ctx has a deadline and the next wait would end after it (ErrDeadline):
//     Do never sleeps into certain failure;
//   - an After hint exceeds MaxRetryAfter (ErrRetryAfterTooLong);
//   - the Budget given with WithBudget allows no more retries (ErrBudget).
//
// Do never waits after the last attempt. If p is invalid (see
// backoff.Policy.Validate), Do returns its *backoff.FieldError without
// calling op.
//
// On success Do allocates nothing; a failed attempt costs no allocation
// beyond op's own error, except one timer for the first non-zero wait of
// the call.
func Do[T any](ctx context.Context, p backoff.Policy, op func(context.Context) (T, error), opts ...Option) (T, error) {
	if err := p.Validate(); err != nil {
		var zero T
		return zero, err
	}
	if ctx.Err() != nil {
		var zero T
		return zero, canceled(ctx, 0, 0, nil)
	}
	v, err := op(ctx)
	if err == nil {
		// The common case returns before the options are even read.
		if len(opts) != 0 {
			succeed(opts)
		}
		return v, nil
	}
	// The clock is read only now, so that success costs no clock read
	// (tens of nanoseconds on some machines, more than the rest of Do).
	l := loop{p: p, cfg: newConfig(opts), start: time.Now()}
	defer l.stop()
	for {
		if err = l.failed(ctx, err); err != nil {
			var zero T
			return zero, err
		}
		v, err = op(ctx)
		if err == nil {
			if l.cfg.budget != nil {
				l.cfg.budget.success()
			}
			return v, nil
		}
	}
}

// Run is Do for an operation that returns only an error.
func Run(ctx context.Context, p backoff.Policy, op func(context.Context) error, opts ...Option) error {
	_, err := Do(ctx, p, func(ctx context.Context) (struct{}, error) { return struct{}{}, op(ctx) }, opts...)
	return err
}

// succeed records a first-attempt success in the budget, if any, without
// building the whole configuration.
func succeed(opts []Option) {
	for _, o := range opts {
		if o.kind == optBudget {
			if b, _ := o.v.(*Budget); b != nil {
				b.success()
			}
		}
	}
}

// loop is the state of a call after its first failure.
type loop struct {
	p        backoff.Policy
	cfg      config
	start    time.Time     // the end of the first attempt
	attempts int           // attempts made so far
	prev     time.Duration // the previous wait, for decorrelated jitter
	timer    *time.Timer   // created at the first non-zero wait, then reused
}

func (l *loop) stop() {
	if l.timer != nil {
		l.timer.Stop()
	}
}

// failed handles the failure err of the latest attempt: it decides whether
// to retry, and if so waits. It returns nil to make the next attempt, or the
// *Error that ends the call.
func (l *loop) failed(ctx context.Context, err error) error {
	l.attempts++
	if ctx.Err() != nil {
		// The failure is ctx's error, or a consequence of ctx ending: either
		// way no retry can succeed.
		return canceled(ctx, l.attempts, time.Since(l.start), err)
	}
	hint, hinted, permanent := inspect(err)
	if permanent || (l.cfg.retryIf != nil && !l.cfg.retryIf(err)) {
		return l.give(ErrPermanent, err)
	}
	if l.cfg.budget != nil {
		l.cfg.budget.failure()
	}
	if l.attempts > l.p.Retries { // attempts = Retries+1, without overflow
		return l.give(ErrExhausted, err)
	}
	if l.cfg.budget != nil && !l.cfg.budget.allow() {
		return l.give(ErrBudget, err)
	}
	var d time.Duration
	if hinted {
		if hint > l.cfg.maxRetryAfter {
			return l.give(ErrRetryAfterTooLong, err)
		}
		d = hint
	} else {
		d = l.p.Sample(l.attempts, l.prev, l.cfg.rand)
	}
	l.prev = d
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) <= d {
		// A wait ending at the deadline leaves no time for the attempt.
		return l.give(ErrDeadline, err)
	}
	if l.cfg.onRetry != nil || l.cfg.logger != nil {
		l.notify(ctx, Event{Attempt: l.attempts, MaxAttempts: maxAttempts(l.p), Delay: d, Err: err})
	}
	if d <= 0 {
		if ctx.Err() != nil {
			return canceled(ctx, l.attempts, time.Since(l.start), err)
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
		return canceled(ctx, l.attempts, time.Since(l.start), err)
	}
}

func (l *loop) notify(ctx context.Context, e Event) {
	if l.cfg.onRetry != nil {
		l.cfg.onRetry(e)
	}
	if lg := l.cfg.logger; lg != nil && lg.Enabled(ctx, slog.LevelWarn) {
		lg.LogAttrs(ctx, slog.LevelWarn, "retry: attempt failed; retrying",
			slog.Int("attempt", e.Attempt),
			slog.Int("max_attempts", e.MaxAttempts),
			slog.Duration("delay", e.Delay),
			slog.Any("error", e.Err))
	}
}

func (l *loop) give(reason, last error) error {
	return &Error{Reason: reason, Attempts: l.attempts, Elapsed: time.Since(l.start), Last: last}
}

// canceled returns the error for a run ended by ctx.
func canceled(ctx context.Context, attempts int, elapsed time.Duration, last error) error {
	e := &Error{Reason: ErrCanceled, Attempts: attempts, Elapsed: elapsed, Last: last, Cause: context.Cause(ctx)}
	if err := ctx.Err(); err != e.Cause {
		e.ctxErr = err
	}
	return e
}

// maxAttempts returns Retries+1, saturating instead of overflowing.
func maxAttempts(p backoff.Policy) int {
	if p.Retries == int(^uint(0)>>1) {
		return p.Retries
	}
	return p.Retries + 1
}
