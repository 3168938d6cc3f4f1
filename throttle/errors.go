package throttle

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ErrRejected is matched with errors.Is by every error with which a
// Throttler or a Rate refuses an attempt: it was not sent. The concrete
// error is a *RejectedError (from a Throttler) or a *RateError (from a
// Rate).
var ErrRejected = errors.New("throttle: rejected locally")

// ErrInvalid is matched (errors.Is) by the error of Config.Validate and
// RateConfig.Validate, a *FieldError (the name every package of the module
// gives that error).
var ErrInvalid = errors.New("throttle: invalid configuration")

// FieldError reports a field whose value is outside its accepted range. It
// matches ErrInvalid with errors.Is. The zero FieldError names no field and
// is never returned.
type FieldError struct {
	Field    string // the field, e.g. "Config.K"
	Value    string // the rejected value, formatted
	Accepted string // what is accepted
}

// Error returns "throttle: FIELD must be ACCEPTED, got VALUE".
func (e *FieldError) Error() string {
	return fmt.Sprintf("throttle: %s must be %s, got %s", e.Field, e.Accepted, e.Value)
}

// Is reports whether target is ErrInvalid.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

// RejectedError is the error of an attempt that a Throttler refused: it
// was not sent. It matches ErrRejected, and reads as a rejection to
// package retry (Rejected() is true): a retry Budget neither spends nor
// refunds for it, and a retry loop retries it on its policy's schedule
// (it carries no wait hint: the next attempt is admitted with
// probability 1 − P). Each rejection returns a new one, safe to keep and
// to read from any goroutine; the zero RejectedError reads as a rejection
// at probability 0 and is never returned.
type RejectedError struct {
	// P is the probability of rejection at the time: the
	// fraction of attempts the Throttler was refusing.
	P float64
	// Requests and Accepts are the counts in the window it was judged on.
	Requests, Accepts int64
}

// Error returns a message such as "throttle: rejected locally (p = 0.67:
// 120 of 300 requests accepted)". The reason is stated once, so that a
// retry.Error whose Last it is reads "retry: retries exhausted after 3
// attempts in 1s: throttle: rejected locally (...)".
func (e *RejectedError) Error() string {
	return "throttle: rejected locally (p = " + strconv.FormatFloat(e.P, 'f', 2, 64) + ": " +
		strconv.FormatInt(e.Accepts, 10) + " of " + strconv.FormatInt(e.Requests, 10) + " requests accepted)"
}

// Is reports whether target is ErrRejected.
func (e *RejectedError) Is(target error) bool { return target == ErrRejected }

// Rejected returns true: the attempt never reached the dependency.
func (e *RejectedError) Rejected() bool { return true }

// RateError is the error of an attempt that a Rate refused: no token was
// available, and the caller asked not to wait (RateConfig.FailFast) or
// the wait would have ended after the context's deadline. It matches
// ErrRejected and reads as a rejection to package retry (Rejected() is
// true), with Wait as its wait hint (RetryAfter), so that a retry loop
// waits for the token instead of its policy's delay. Each rejection
// returns a new one; the zero RateError is never returned.
type RateError struct {
	// Wait is how long until a token is available, at the current rate.
	Wait time.Duration
	// Rate is the send rate learned, in requests per second.
	Rate float64
}

// Error returns a message such as "throttle: rejected locally (send rate
// 4.2/s, next token in 230ms)".
func (e *RateError) Error() string {
	return "throttle: rejected locally (send rate " + strconv.FormatFloat(e.Rate, 'g', 3, 64) +
		"/s, next token in " + e.Wait.String() + ")"
}

// Is reports whether target is ErrRejected.
func (e *RateError) Is(target error) bool { return target == ErrRejected }

// Rejected returns true: the attempt never reached the dependency.
func (e *RateError) Rejected() bool { return true }

// RetryAfter returns Wait: how long until the attempt would be admitted.
func (e *RateError) RetryAfter() time.Duration { return e.Wait }
