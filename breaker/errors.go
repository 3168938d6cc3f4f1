package breaker

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrOpen is matched with errors.Is by every error that rejects a call: the
// breaker is open, isolated, or half-open with all its probes in flight. The
// dependency was not called. The concrete error is an *OpenError.
var ErrOpen = errors.New("breaker: open")

// ErrIsolated narrows ErrOpen: the call was rejected because the breaker was
// isolated by hand (Breaker.Isolate), and only Breaker.Reset admits calls
// again. Errors that match it also match ErrOpen.
var ErrIsolated = errors.New("breaker: isolated")

// OpenError is the error returned for a rejected call. It matches ErrOpen
// with errors.Is. Each rejection returns a new one, safe to keep and to
// read from any goroutine; a zero OpenError reads as a Closed breaker that
// rejected with no wait, and is never returned.
//
// It implements the interfaces through which package retry reads hints
// without importing this package: RetryAfter (wait that long before the
// next attempt instead of the policy's delay, or stop at once if that is past
// the deadline or the longest hint allowed), Rejected (the dependency was
// never called, so the attempt neither spends nor refunds a retry budget)
// and Permanent (true for an isolated breaker: waiting cannot help, so a
// retry loop stops at once with retry.ErrPermanent rather than reporting a
// hint too long).
type OpenError struct {
	// State is the breaker's state when it rejected the call: Open,
	// HalfOpen (every probe slot busy) or Isolated.
	State State
	// Wait is how long until the breaker admits a call again, at the
	// earliest: the rest of the open period; when half-open, the time
	// until the oldest probe in flight times out; when isolated, the
	// largest time.Duration (only Reset admits calls again).
	Wait time.Duration
}

// Error returns a message such as "breaker: open, next probe in 4.2s".
func (e *OpenError) Error() string {
	switch e.State {
	case Isolated:
		return "breaker: isolated by hand, calls rejected until Reset"
	case HalfOpen:
		return fmt.Sprintf("breaker: half-open, all probes in flight, next slot within %v", e.Wait)
	}
	return fmt.Sprintf("breaker: %v, next probe in %v", e.State, e.Wait)
}

// Is reports whether target is ErrOpen, or ErrIsolated when State is
// Isolated.
func (e *OpenError) Is(target error) bool {
	return target == ErrOpen || (target == ErrIsolated && e.State == Isolated)
}

// RetryAfter returns Wait: how long a retry loop should wait before trying
// again.
func (e *OpenError) RetryAfter() time.Duration { return e.Wait }

// Rejected returns true: the call never reached the dependency.
func (e *OpenError) Rejected() bool { return true }

// Permanent reports whether retrying cannot help: the breaker is isolated,
// and only a Reset by hand admits calls again.
func (e *OpenError) Permanent() bool { return e.State == Isolated }

// forever is the Wait of an isolated breaker.
const forever = time.Duration(math.MaxInt64)

// errNeutral is matched (through neutralError.Is) by errors marked Neutral.
var errNeutral = errors.New("breaker: neutral")

type neutralError struct{ err error }

func (e *neutralError) Error() string        { return e.err.Error() }
func (e *neutralError) Unwrap() error        { return e.err }
func (e *neutralError) Is(target error) bool { return target == errNeutral }

// NotFault wraps err to say that it is not the dependency's fault (a request
// the caller built wrongly, a record that does not exist, a validation
// error): the default classification counts it as Neutral, neither success
// nor failure. The wrapper has err's message and is transparent to
// errors.Is and errors.As. NotFault(nil) is nil.
func NotFault(err error) error {
	if err == nil {
		return nil
	}
	return &neutralError{err}
}

// Classify is the default classification of a call's error, used when
// Config.Classify is nil:
//   - nil is a Success;
//   - context.Canceled anywhere in the chain is Neutral: a caller in this
//     process gave up, which says nothing about the dependency
//     (context.DeadlineExceeded is a Failure: the dependency was too slow);
//   - an error wrapped with NotFault is Neutral;
//   - every other error is a Failure.
//
// It does not allocate.
func Classify(err error) Outcome {
	switch {
	case err == nil:
		return Success
	case errors.Is(err, context.Canceled), errors.Is(err, errNeutral):
		return Neutral
	}
	return Failure
}
