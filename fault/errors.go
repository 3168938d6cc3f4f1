package fault

import (
	"errors"
	"net"
	"os"
	"syscall"
)

// ErrInjected is matched (errors.Is) by every error a fault makes, so that
// a test can tell an injected failure from a real one.
var ErrInjected = errors.New("fault: injected")

// Error is the error of an injected network failure (a Reset, a CutBody,
// a Stall) on the client side. It wraps the error a real failure of the
// kind would give, such as a *net.OpError for a connection reset by peer,
// so that clients classify it as they would the real one; it also matches
// ErrInjected.
type Error struct {
	Kind Kind
	Err  error
}

// Error returns "fault: injected KIND: ERR".
func (e *Error) Error() string { return "fault: injected " + e.Kind.String() + ": " + e.Err.Error() }

// Unwrap returns the error the fault imitates.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is ErrInjected.
func (e *Error) Is(target error) bool { return target == ErrInjected }

// resetError returns what a connection reset by the peer looks like to a
// client reading from it.
func resetError(k Kind) error {
	return &Error{k, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}}
}

// errStopped is what Next's writes return once a fault has taken the
// response over.
var errStopped = &Error{Reset, errors.New("response stopped")}
