package shed

import (
	"context"
	"time"

	"github.com/again-go/again/shed/admission"
)

// The decisions, in package admission, which does not link net/http so
// that a simulator compiled to WebAssembly runs them. These are the same
// types: a shed.Criticality is an admission.Criticality.
type (
	// Core is a Shedder's decisions without a clock, goroutines or
	// blocking (see admission.Core); NewCore makes one from a Config.
	Core = admission.Core
	// Waiter is a request waiting in a Core's queue (admission.Waiter).
	Waiter = admission.Waiter
	// Request is what a Shedder knows of a request before it admits it
	// (admission.Request).
	Request = admission.Request
	// Stats is a Shedder's state, as Snapshot returns it (admission.Stats).
	Stats = admission.Stats
	// Reason is why a request was shed; its zero is Admitted
	// (admission.Reason).
	Reason = admission.Reason
	// Criticality is a request's class, the SRE book's
	// (admission.Criticality).
	Criticality = admission.Criticality
	// Limit is the concurrency limit a Shedder admits requests under
	// (admission.Limit).
	Limit = admission.Limit
	// Fixed is a fixed concurrency limit (admission.Fixed).
	Fixed = admission.Fixed
	// FieldError reports a field of Config outside its accepted range; it
	// matches ErrInvalid (admission.FieldError).
	FieldError = admission.FieldError
)

// Reasons a request was shed (see admission.Reason).
const (
	Admitted  = admission.Admitted
	QueueFull = admission.QueueFull
	Overload  = admission.Overload
	Deadline  = admission.Deadline
	Timeout   = admission.Timeout
	Canceled  = admission.Canceled
	Quota     = admission.Quota
)

// Classes of requests, from least to most critical (see
// admission.Criticality).
const (
	Unspecified   = admission.Unspecified
	Unknown       = admission.Unknown
	Sheddable     = admission.Sheddable
	SheddablePlus = admission.SheddablePlus
	Critical      = admission.Critical
	CriticalPlus  = admission.CriticalPlus
)

// Names of the headers a request carries its class, its attempt number and
// its remaining time in (see admission.HeaderCriticality).
const (
	HeaderCriticality = admission.HeaderCriticality
	HeaderAttempt     = admission.HeaderAttempt
	HeaderTimeout     = admission.HeaderTimeout
)

// Defaults of Config's zero fields (see admission.DefaultLimit).
const (
	DefaultLimit        = admission.DefaultLimit
	DefaultMaxQueue     = admission.DefaultMaxQueue
	DefaultMaxWait      = admission.DefaultMaxWait
	DefaultTarget       = admission.DefaultTarget
	DefaultInterval     = admission.DefaultInterval
	DefaultDropFraction = admission.DefaultDropFraction
	DefaultDropWindow   = admission.DefaultDropWindow
	DefaultRetryAfter   = admission.DefaultRetryAfter
)

// ErrInvalid is matched (errors.Is) by the error of Config.Validate, a
// *FieldError (admission.ErrInvalid: the same error).
var ErrInvalid = admission.ErrInvalid

// ErrLimited is what Fixed.Admit returns when its limit is reached
// (admission.ErrLimited: the same error).
var ErrLimited = admission.ErrLimited

// NewFixed returns a limit of n permits. n below 1 is 1.
func NewFixed(n int) *Fixed { return admission.NewFixed(n) }

// ParseCriticality reads a HeaderCriticality value (admission.ParseCriticality).
func ParseCriticality(v string) Criticality { return admission.ParseCriticality(v) }

// ParseAttempt reads a HeaderAttempt value (admission.ParseAttempt).
func ParseAttempt(v string) int { return admission.ParseAttempt(v) }

// ParseTimeout reads a HeaderTimeout value (admission.ParseTimeout).
func ParseTimeout(v string) (time.Duration, bool) { return admission.ParseTimeout(v) }

// WithCriticality returns a copy of ctx that carries c
// (admission.WithCriticality).
func WithCriticality(ctx context.Context, c Criticality) context.Context {
	return admission.WithCriticality(ctx, c)
}

// CriticalityFrom returns the class ctx carries (WithCriticality), or
// Unspecified.
func CriticalityFrom(ctx context.Context) Criticality { return admission.CriticalityFrom(ctx) }

// RetryAfterSeconds returns the whole seconds of the Retry-After header
// that tells a client to wait wait (admission.RetryAfterSeconds).
func RetryAfterSeconds(wait time.Duration) int64 { return admission.RetryAfterSeconds(wait) }

// NewCore returns a Core configured by cfg (its HTTP fields, Classify and
// Quota, and its callbacks, OnShed and OnQueued, are not read): see
// admission.NewCore. It returns cfg.Validate's error.
func NewCore(cfg Config, origin time.Time, decide func(w *Waiter, r Reason)) (*Core, error) {
	return admission.NewCore(cfg.core(), origin, decide)
}
