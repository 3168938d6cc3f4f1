package retrygrpc

import (
	"context"
	"errors"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/again-go/again/limiter"
)

// limiterFor returns the Limiter of a call in ic.Limits, or nil without
// Limits.
func (ic *Interceptor) limiterFor(cc *grpc.ClientConn, method string) (*limiter.Limiter, error) {
	if ic.Limits == nil {
		return nil, nil
	}
	var key string
	switch {
	case ic.LimitKey != nil:
		key = ic.LimitKey(cc, method)
	case cc != nil:
		key = cc.Target()
	}
	return ic.Limits.Get(key)
}

// limitedAttempt makes a unary attempt holding a permit of lim, if not
// nil: held, a hedge's, taken by limitHedges, or one it takes itself. The
// permit is given back when the attempt returns, or panics.
func (ic *Interceptor) limitedAttempt(ctx context.Context, lim *limiter.Limiter, held *limiter.Permit, do func(context.Context) outcome) outcome {
	if lim == nil {
		return do(ctx)
	}
	var p limiter.Permit
	if held != nil {
		p, *held = *held, limiter.Permit{}
	} else {
		var err error
		if p, err = lim.Acquire(ctx); err != nil {
			return limitRefusal(err)
		}
	}
	defer p.Release()
	o := do(ctx)
	p.Record(limitOutcome(ctx, o))
	return o
}

// limitRefusal is the outcome of an attempt the limit refused, or whose
// context ended while it waited for a permit.
func limitRefusal(err error) outcome {
	var le *limiter.LimitError
	if errors.As(err, &le) {
		return outcome{err: &LimitedError{err}, final: true}
	}
	return outcome{err: status.FromContextError(err).Err()}
}

// limitOutcome is what an attempt teaches an adaptive limit: a loss for
// its own timeout, the call's deadline, DEADLINE_EXCEEDED,
// RESOURCE_EXHAUSTED or UNAVAILABLE, nothing when the caller canceled or
// a breaker or throttle refused it, and an RTT for any other answer of the
// server.
func limitOutcome(ctx context.Context, o outcome) limiter.Outcome {
	var te *ThrottledError
	switch {
	case o.err == nil:
		return limiter.Success
	case ctx.Err() == context.DeadlineExceeded:
		return limiter.Dropped
	case ctx.Err() != nil || o.rejected || errors.As(o.err, &te):
		return limiter.Ignored
	case o.timedOut:
		return limiter.Dropped
	}
	switch status.Code(o.err) {
	case codes.ResourceExhausted, codes.Unavailable, codes.DeadlineExceeded:
		return limiter.Dropped
	}
	return limiter.Success
}

// limitHedges returns the Prepare of a hedged call under lim: hedge k
// takes its permit into permits[k] before it is sent, without waiting, so
// that a hedge that finds none is not sent (hedge.Call.Prepare) and the
// copies already sent go on.
func limitHedges(lim *limiter.Limiter, permits []limiter.Permit) func(int) error {
	return func(k int) error {
		p, ok := lim.TryAcquire()
		if !ok {
			return errNoPermit
		}
		permits[k] = p
		return nil
	}
}

var errNoPermit = errors.New("retrygrpc: no permit for the hedge")

// LimitedError is the error of an attempt that the call's Limiter in
// Interceptor.Limits refused: the attempt was not sent. It wraps the
// *limiter.LimitError (errors.Is(err, limiter.ErrLimited) holds, and
// retry reads it as a local rejection that ends the call at once, with no
// Budget spent) with the gRPC status UNAVAILABLE, as Netflix
// concurrency-limits' client interceptor answers. Its zero value is not
// returned.
type LimitedError struct {
	Err error
}

// Error returns the limiter's message.
func (e *LimitedError) Error() string { return e.Err.Error() }

// Unwrap returns the limiter's error.
func (e *LimitedError) Unwrap() error { return e.Err }

// GRPCStatus returns the status UNAVAILABLE with the refusal's message.
func (e *LimitedError) GRPCStatus() *status.Status {
	return status.New(codes.Unavailable, e.Err.Error())
}
