package retry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinels for the reasons retrying stops. Every *Error matches exactly one
// of them with errors.Is (ErrDeadline additionally matches
// context.DeadlineExceeded).
var (
	// ErrExhausted: every attempt the policy allows (Policy.MaxAttempts)
	// failed.
	ErrExhausted = errors.New("retry: retries exhausted")
	// ErrPermanent: the operation returned an error that must not be retried:
	// one wrapped with Permanent (or a rejection whose Permanent method
	// returns true, see IsPermanent), or one the WithClassifier classifier
	// rejected.
	ErrPermanent = errors.New("retry: permanent error")
	// ErrDeadline: the context's deadline leaves no time for another
	// attempt: no more than the reserve is left (see WithDeadlineReserve
	// and backoff.FitDeadline), or a wait hint ends at or after the
	// deadline. Retrying stopped at once instead of sleeping into certain
	// failure.
	ErrDeadline = errors.New("retry: the deadline leaves no time for another attempt")
	// ErrCanceled: the caller's context was canceled or its deadline passed
	// (before an attempt, during a wait, or the operation returned the
	// context's own error). The context's cause is in the error chain too.
	ErrCanceled = errors.New("retry: canceled")
	// ErrRetryAfterTooLong: the operation asked, with a wait hint (see After),
	// for a wait longer than the limit set with WithMaxRetryAfter (default 1
	// minute; a negative limit refuses every hint). The hint stays readable
	// with RetryAfter so that the caller can reschedule.
	ErrRetryAfterTooLong = errors.New("retry: retry-after hint too long")
	// ErrRejected: an attempt was refused before it ran (its error has a
	// method Rejected() bool that returns true: an open circuit breaker,
	// a rate limiter), and its wait hint, the time until it would be
	// admitted, is longer than the limit of WithMaxRejectedWait (or, when
	// that is zero, of WithMaxRetryAfter). The rejection stays in the
	// chain (errors.Is(err, breaker.ErrOpen)), and RetryAfter reads its
	// hint, so that the caller can fall back or reschedule.
	ErrRejected = errors.New("retry: attempt rejected, and admission is too far off")
	// ErrBudget: the shared retry Budget refused the retry.
	ErrBudget = errors.New("retry: retry budget exhausted")
)

// ErrNoDeadline is returned by Do, Run and NewLoop, before the first
// attempt, for a policy whose Retries is backoff.UntilDeadline and a
// context without a deadline: such a loop would never stop on its own. It
// is not an *Error, as no attempt was made; give the context a deadline
// (context.WithTimeout) or the policy a number of retries.
var ErrNoDeadline = errors.New("retry: Retries is backoff.UntilDeadline but the context has no deadline")

// Error is returned by Do, Run and Loop when retrying stops without success. It
// says why (Reason, one of the Err* sentinels), how many attempts ran, how
// long it took, and carries the last error of the operation.
//
// errors.Is(err, ErrExhausted) (or another sentinel) tests the reason, and
// exactly one sentinel matches, even when Last holds the *Error of an inner
// loop (see Unwrap and the package's "Loops inside loops");
// errors.Is and errors.As also see through to Last and, when the context
// ended the run, to the context's cause (context.Cause), so both
// errors.Is(err, io.EOF) and errors.Is(err, context.Canceled) work.
//
// Because Error unwraps to several errors (Unwrap() []error),
// errors.Unwrap(err) returns nil, as for errors.Join: read Last for the
// last attempt's error, and use errors.Is and errors.As to search.
type Error struct {
	// Reason is one of ErrExhausted, ErrPermanent, ErrDeadline, ErrCanceled,
	// ErrRetryAfterTooLong, ErrRejected or ErrBudget.
	Reason error
	// Attempts is how many times the operation ran (0 if the context was
	// done before the first attempt).
	Attempts int
	// Elapsed is the time the call took until it stopped, on the
	// monotonic clock: since Do or Run began, the first attempt included,
	// or since NewLoop for a Loop.
	Elapsed time.Duration
	// Last is the error the last attempt returned, exactly as the operation
	// returned it (still wrapped by Permanent or After, whose hint
	// RetryAfter reads). Nil only when no attempt ran.
	Last error
	// Cause is context.Cause of the caller's context when Reason is
	// ErrCanceled; nil otherwise.
	Cause error

	ctxErr error // ctx.Err() when Reason is ErrCanceled and it differs from Cause
}

// Error describes the reason, the attempts, the elapsed time and the last
// error, e.g. "retry: retries exhausted after 4 attempts in 1.5s: connection
// refused" (the time of a single attempt is the operation's own, so it is
// left out of the message; Elapsed has it).
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Reason.Error())
	if e.Attempts == 0 {
		b.WriteString(" before the first attempt")
	} else {
		fmt.Fprintf(&b, " after %d attempt", e.Attempts)
		if e.Attempts != 1 {
			fmt.Fprintf(&b, "s in %v", readable(e.Elapsed))
		}
	}
	if e.Cause != nil {
		fmt.Fprintf(&b, " (%v)", e.Cause)
	}
	if e.Last != nil {
		b.WriteString(": ")
		b.WriteString(e.Last.Error())
	}
	return b.String()
}

// readable rounds d to three or four significant digits for a message:
// "2.526s", not "2.526127972s". Elapsed itself keeps full precision.
func readable(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Microsecond)
	}
	return d
}

// Is reports whether target is the Reason. ErrDeadline also matches
// context.DeadlineExceeded: the run fails for the reason the deadline would
// have made it fail, only earlier.
func (e *Error) Is(target error) bool {
	return target == e.Reason || (e.Reason == ErrDeadline && target == context.DeadlineExceeded)
}

// Unwrap returns Last and, when the context ended the run, Cause and the
// context's error (context.Canceled or context.DeadlineExceeded, if it
// differs from Cause), so that errors.Is and errors.As search them all.
// (errors.Unwrap, which knows only Unwrap() error, returns nil for an
// *Error: use Last.)
//
// Last is returned behind a wrapper that hides the Reason of any *Error
// inside it (the error of an inner loop) from errors.Is, so that an *Error
// matches exactly one of the reason sentinels, its own. Everything else in
// Last, the inner *Error included, stays visible to errors.Is and
// errors.As.
func (e *Error) Unwrap() []error {
	errs := make([]error, 0, 3)
	if e.Last != nil {
		errs = append(errs, inner{e.Last})
	}
	for _, err := range [...]error{e.Cause, e.ctxErr} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// isReason reports whether err is one of the reason sentinels.
func isReason(err error) bool {
	switch err {
	case ErrExhausted, ErrPermanent, ErrDeadline, ErrCanceled, ErrRetryAfterTooLong, ErrRejected, ErrBudget:
		return true
	}
	return false
}

// inner is the Last error of an *Error as Unwrap returns it: errors.Is
// sees through it to everything but the reason sentinels, which only the
// outermost *Error answers for. It has no Unwrap method, so that errors.Is
// asks it rather than walking past it; errors.As and this package's own
// inspection see through it.
type inner struct{ err error }

func (w inner) Error() string { return w.err.Error() }

func (w inner) Is(target error) bool {
	return !isReason(target) && errors.Is(w.err, target)
}

func (w inner) As(target any) bool { return errors.As(w.err, target) }

// permanentError marks an error that must not be retried.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent wraps err so that Do and Run stop at once and return it, without
// retrying; the *Error they return has Reason ErrPermanent. The wrapper is
// transparent to errors.Is/As and has err's message. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

// IsPermanent reports whether err, or any error it wraps, was marked with
// Permanent, or is a rejection (see IsRejected) whose method Permanent()
// bool returns true: a rejecter can say that retrying cannot help without
// importing this package (an isolated circuit breaker does).
func IsPermanent(err error) bool {
	return inspect(err).permanent
}

// afterError carries a "retry no sooner than d" hint.
type afterError struct {
	d   time.Duration
	err error
}

func (e *afterError) Error() string { return e.err.Error() }
func (e *afterError) Unwrap() error { return e.err }

// RetryAfter returns the hint: the error is a wait hint for Do and Run.
func (e *afterError) RetryAfter() time.Duration { return e.d }

// After wraps err with a hint that the operation must not be retried sooner
// than d from now, typically a server's Retry-After. Do and Run then wait d
// before the next attempt instead of the policy's delay, but never less
// than the policy's first delay (backoff.Policy.Delay(1): Initial with the
// defaults applied, capped by Max; 0 for a policy without waits): a server
// that answered every request with Retry-After: 0 would otherwise be
// retried in a hot loop until the deadline. The hint is a lower bound, so
// the wait is never less than asked; the retry still counts as an attempt,
// and the hooks (WithOnRetry, WithObserver, WithLogger) report the wait
// made. If d exceeds the limit set with WithMaxRetryAfter, or the wait
// would end at or after the context's deadline (a hint is never shortened
// to fit it), they stop at once with
// ErrRetryAfterTooLong or ErrDeadline, and RetryAfter still reads the hint,
// as given, from the returned error. A negative d counts as 0. The wrapper
// is transparent to errors.Is/As and has err's message. After(d, nil) is
// nil.
//
// Any error type can carry a hint without importing this package: Do and
// Run read it from the first error in the chain that has a method
// RetryAfter() time.Duration (a circuit breaker's rejection, for example).
// The hint of a rejection (see IsRejected) is waited as it is, without the
// floor: nothing was sent, and it is the time until the attempt would be
// admitted.
func After(d time.Duration, err error) error {
	if err == nil {
		return nil
	}
	return &afterError{max(d, 0), err}
}

// RetryAfter returns the wait hint of the first error in err's chain that
// has a method RetryAfter() time.Duration (such as those made by After), and
// whether there was one. A negative hint reads as 0.
func RetryAfter(err error) (time.Duration, bool) {
	m := inspect(err)
	return m.hint, m.hinted
}

// IsRejected reports whether err, or any error it wraps, has a method
// Rejected() bool that returns true: the attempt was refused before it
// reached the dependency (by a circuit breaker or a limiter), so Do and Run
// neither spend nor refund the Budget for it.
func IsRejected(err error) bool {
	return inspect(err).rejected
}

// marks are the control signals found in an error's tree.
type marks struct {
	hint      time.Duration
	hinted    bool
	permanent bool
	rejected  bool
	overload  bool // a rejection that is not a local one (see IsOverload)
}

// inspect walks err's tree depth-first, as errors.As does, and reports the
// first wait hint and whether any error was marked Permanent or Rejected.
// It does not allocate, unlike errors.As with a pointer target, so the loop
// can call it on every failure.
func inspect(err error) (m marks) {
	for err != nil {
		if _, ok := err.(*permanentError); ok {
			m.permanent = true
		}
		if h, ok := err.(interface{ RetryAfter() time.Duration }); ok && !m.hinted {
			m.hint, m.hinted = max(h.RetryAfter(), 0), true
		}
		if r, ok := err.(interface{ Rejected() bool }); ok && r.Rejected() {
			m.rejected = true
			if o, ok := err.(interface{ Overload() bool }); !ok || o.Overload() {
				m.overload = true // see IsOverload
			}
			// Only rejections are asked, so that other failures pay for no
			// more type assertions than before.
			if p, ok := err.(interface{ Permanent() bool }); ok && p.Permanent() {
				m.permanent = true
			}
		}
		switch e := err.(type) {
		case inner:
			err = e.err
		case interface{ Unwrap() []error }:
			for _, inner := range e.Unwrap() {
				im := inspect(inner)
				if im.hinted && !m.hinted {
					m.hint, m.hinted = im.hint, true
				}
				m.permanent = m.permanent || im.permanent
				m.rejected = m.rejected || im.rejected
				m.overload = m.overload || im.overload
			}
			return m
		case interface{ Unwrap() error }:
			err = e.Unwrap()
		default:
			return m
		}
	}
	return m
}
