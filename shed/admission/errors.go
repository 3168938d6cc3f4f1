package admission

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrInvalid is matched (errors.Is) by the error of Config.Validate, a
// *FieldError (the name every package of the module gives that error).
// Its text names package shed, whose Config.Validate returns it too.
var ErrInvalid = errors.New("shed: invalid configuration")

// ErrLimited is what Fixed.Admit returns when its limit is reached. A
// Core (and a Shedder) reads any error of its Limit's Admit so; it never reaches the
// client.
var ErrLimited = errors.New("shed: concurrency limit reached")

// FieldError reports a field whose value is outside its accepted range. It
// matches ErrInvalid with errors.Is. The zero FieldError names no field and
// is never returned.
type FieldError struct {
	Field    string // the field, e.g. "Config.Target"
	Value    string // the rejected value, formatted
	Accepted string // what is accepted
}

// Error returns "shed: FIELD must be ACCEPTED, got VALUE".
func (e *FieldError) Error() string {
	return fmt.Sprintf("shed: %s must be %s, got %s", e.Field, e.Accepted, e.Value)
}

// Is reports whether target is ErrInvalid.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

// Reason is why a request was shed. The zero Reason is Admitted: the
// request was not shed.
type Reason uint8

const (
	// Admitted: not shed.
	Admitted Reason = iota
	// QueueFull: the limit was reached and the queue held MaxQueue
	// requests of the same or a higher priority (or the request's class
	// is Unknown, which never waits).
	QueueFull
	// Overload: CoDel found the queue overloaded (its minimum delay over
	// an Interval above Target) and the request had waited longer than
	// twice Target; or a request of a higher priority took its place in a
	// full queue.
	Overload
	// Deadline: the request's deadline (from HeaderTimeout) passed while
	// it waited.
	Deadline
	// Timeout: the request waited MaxWait without a permit.
	Timeout
	// Canceled: the request's context ended while it waited (the client
	// went away).
	Canceled
	// Quota: Config.Quota refused the client (HTTP 429, not 503).
	Quota
)

var reasonNames = [...]string{"admitted", "queue_full", "overload", "deadline", "timeout", "canceled", "quota"}

// String returns the reason in snake case: "queue_full", "overload",
// "deadline", ..., as metrics label it.
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "reason(" + strconv.Itoa(int(r)) + ")"
}
