package limiter

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ErrLimited is matched with errors.Is by the error with which a Limiter
// refuses a call: it was not made. The concrete error is a *LimitError.
var ErrLimited = errors.New("limiter: concurrency limit reached")

// ErrInvalid is matched (errors.Is) by the error of Config.Validate, a
// *FieldError (the name every package of the module gives that error).
var ErrInvalid = errors.New("limiter: invalid configuration")

// FieldError reports a field whose value is outside its accepted range. It
// matches ErrInvalid with errors.Is. The zero FieldError names no field and
// is never returned.
type FieldError struct {
	Field    string // the field, e.g. "Config.Limit"
	Value    string // the rejected value, formatted
	Accepted string // what is accepted
}

// Error returns "limiter: FIELD must be ACCEPTED, got VALUE".
func (e *FieldError) Error() string {
	return fmt.Sprintf("limiter: %s must be %s, got %s", e.Field, e.Accepted, e.Value)
}

// Is reports whether target is ErrInvalid.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

// LimitError is the error of a call that a Limiter refused: as many calls
// as its limit allows were in flight, and the call could not wait for one
// of them to end (Config.MaxWait is zero, MaxWaiting calls were waiting
// already, or the wait ran out). It matches ErrLimited.
//
// To package retry it reads as a local rejection that ends retrying at
// once: Rejected() is true, so that a retry Budget neither spends nor
// refunds for it; Permanent() is true, so that the caller sees it at once
// (retrying into a full limit only adds to the load that filled it); and
// Overload() is false, so that retry.IsOverload, and through it a
// Throttler or a breaker of an outer layer, does not count it as the
// dependency's overload. Each refusal returns a new one, safe to keep and
// to read from any goroutine; the zero LimitError is never returned.
type LimitError struct {
	// Limit and InFlight are the limit and the calls in flight when the
	// call was refused.
	Limit, InFlight int
	// Waited is how long the call waited for a permit before it was
	// refused: zero when it could not wait.
	Waited time.Duration
}

// Error returns a message such as "limiter: concurrency limit reached
// (8 of 8 in flight, waited 100ms)". The reason is stated once, so that a
// retry.Error whose Last it is reads "retry: permanent error after 1
// attempt in 0s: limiter: concurrency limit reached (...)".
func (e *LimitError) Error() string {
	s := "limiter: concurrency limit reached (" + strconv.Itoa(e.InFlight) + " of " + strconv.Itoa(e.Limit) + " in flight"
	if e.Waited > 0 {
		s += ", waited " + e.Waited.String()
	}
	return s + ")"
}

// Is reports whether target is ErrLimited.
func (e *LimitError) Is(target error) bool { return target == ErrLimited }

// Rejected returns true: the call never reached the dependency.
func (e *LimitError) Rejected() bool { return true }

// Permanent returns true: a retry loop gives up at once (see LimitError).
func (e *LimitError) Permanent() bool { return true }

// Overload returns false: the refusal is this client's own, not a signal
// that the dependency is overloaded (see retry.IsOverload).
func (e *LimitError) Overload() bool { return false }
