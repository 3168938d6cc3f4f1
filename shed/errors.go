package shed

import (
	"errors"
	"time"
)

// ErrShed is matched (errors.Is) by every error with which a Shedder
// refuses a request: a *ShedError.
var ErrShed = errors.New("shed: request shed")

// ShedError is the error of Shedder.Admit for a request it refused. It
// matches ErrShed. Each refusal returns a new one, safe to keep and to read
// from any goroutine. The zero ShedError is never returned.
type ShedError struct {
	Reason      Reason
	Criticality Criticality
	// RetryAfter is the jittered delay the client is told to wait
	// (HTTP Retry-After, rounded to whole seconds, at least 1; gRPC
	// grpc-retry-pushback-ms).
	RetryAfter time.Duration
}

// Error returns a message such as "shed: request shed (overload, class
// SHEDDABLE, retry after 2s)".
func (e *ShedError) Error() string {
	return "shed: request shed (" + e.Reason.String() + ", class " + e.Criticality.String() +
		", retry after " + e.RetryAfter.String() + ")"
}

// Is reports whether target is ErrShed.
func (e *ShedError) Is(target error) bool { return target == ErrShed }
