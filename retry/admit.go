package retry

import (
	"context"
	"errors"
	"time"
)

// Admitter decides, before each attempt, whether it may be sent at all:
// the admission that client-side throttling (package throttle) and rate
// limiting need, with the outcome fed back so that it can learn what the
// dependency accepts. Do and Run consult the Admitter given with
// WithAdmitter; retryhttp.Transport and retrygrpc's Interceptor keep one
// per host, target or method. Implementations must be safe for concurrent
// use, as one Admitter is shared by every call to the same dependency.
type Admitter interface {
	// Admit is called before each attempt, on the calling goroutine. A
	// nil error admits the attempt, which is then made and reported with
	// Done. A non-nil error stands for the attempt, which is not made:
	// it should be a rejection (an error with Rejected() true), so that
	// the Budget neither spends nor refunds for it, and it may carry a
	// wait hint (RetryAfter) for the time until an attempt would be
	// admitted. Admit may wait for admission, but never past ctx's end.
	Admit(ctx context.Context) error
	// Done reports how an admitted attempt ended: overloaded is true for
	// an overload signal from the dependency (see IsOverload), false for
	// anything else, which counts as accepted.
	Done(overloaded bool)
}

// Releaser is an Admitter whose admission holds something the attempt must
// give back, such as a permit of a concurrency limit (package limiter),
// and that learns from how long the attempt took. Do and Run call Release,
// in place of Done, exactly once for each attempt admitted, even when op
// panics, so that the permit is never leaked: overloaded as for Done, and
// took the time op ran, or a negative duration when there is nothing to
// learn from it (op panicked, or ctx ended during it).
type Releaser interface {
	Admitter
	Release(overloaded bool, took time.Duration)
}

// IsOverload is the default classification of an attempt's error for an
// Admitter: true for an overload signal, false for anything else (a
// success, or a failure that is not the dependency refusing load). The
// overload signals are a rejection (IsRejected: a circuit breaker or a
// limiter of an inner layer refused it), a retry budget that ran out
// (ErrBudget, from an inner loop), and any error in the chain with a
// method Overload() bool that returns true, through which an error type
// says "the server is overloaded" (an HTTP 429 or 503, a gRPC
// RESOURCE_EXHAUSTED or UNAVAILABLE) without importing this package.
// It does not allocate.
func IsOverload(err error) bool {
	if err == nil {
		return false
	}
	if inspect(err).overload {
		return true
	}
	if errors.Is(err, ErrBudget) {
		return true
	}
	return hasOverload(err)
}

// hasOverload walks err's tree for a method Overload() bool that returns
// true.
func hasOverload(err error) bool {
	for err != nil {
		if o, ok := err.(interface{ Overload() bool }); ok && o.Overload() {
			return true
		}
		switch e := err.(type) {
		case inner:
			err = e.err
		case interface{ Unwrap() []error }:
			for _, in := range e.Unwrap() {
				if hasOverload(in) {
					return true
				}
			}
			return false
		case interface{ Unwrap() error }:
			err = e.Unwrap()
		default:
			return false
		}
	}
	return false
}

// WithAdmitter puts a before every attempt of Do and Run: an attempt a
// refuses is not made, and a's error counts as its failure (a rejection:
// it neither spends nor refunds the Budget, and is retried on the
// policy's schedule, or after its wait hint). After each admitted attempt,
// overload(err) says whether it was an overload signal, reported with
// a.Done (or, for a Releaser, with a.Release, also when op panics); a nil
// overload means IsOverload. A nil a means no admission,
// the default. NewLoop ignores it: code driving a Loop makes the attempts
// and calls Admit itself, as retryhttp.Transport does.
func WithAdmitter(a Admitter, overload func(error) bool) Option {
	if a == nil {
		return Option{kind: optAdmitter}
	}
	if overload == nil {
		overload = IsOverload
	}
	r, _ := a.(Releaser)
	return Option{kind: optAdmitter, v: admission{a, overload, r}}
}

// admission is an Admitter and its classification, as WithAdmitter keeps
// them.
type admission struct {
	a        Admitter
	overload func(error) bool
	r        Releaser // a, if it is one
}

// attempt makes one attempt of op through the admission, if any.
func attempt[T any](ctx context.Context, adm admission, op func(context.Context) (T, error)) (T, error) {
	if adm.a == nil {
		return op(ctx)
	}
	if err := adm.a.Admit(ctx); err != nil {
		var zero T
		return zero, err
	}
	if adm.r != nil {
		return held(ctx, adm, op)
	}
	v, err := op(ctx)
	adm.a.Done(err != nil && adm.overload(err))
	return v, err
}

// held makes an attempt admitted by a Releaser, and releases it however op
// returns.
func held[T any](ctx context.Context, adm admission, op func(context.Context) (T, error)) (v T, err error) {
	start := clock()
	took := time.Duration(-1)
	defer func() { adm.r.Release(err != nil && adm.overload(err), took) }()
	v, err = op(ctx)
	if ctx.Err() == nil {
		took = clock() - start
	}
	return v, err
}
