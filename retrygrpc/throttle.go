package retrygrpc

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/again-go/again/retry"
)

// admit asks the Admitter of a call in ic.Throttles for one attempt. It
// returns the Admitter (nil without Throttles) and true if the attempt may
// be sent, or the attempt's outcome and false if it may not.
func (ic *Interceptor) admit(ctx context.Context, cc *grpc.ClientConn, method string) (retry.Admitter, outcome, bool) {
	if ic.Throttles == nil {
		return nil, outcome{}, true
	}
	var key string
	switch {
	case ic.ThrottleKey != nil:
		key = ic.ThrottleKey(cc, method)
	case cc != nil:
		key = cc.Target()
	}
	adm, err := ic.Throttles.Get(key)
	if err != nil {
		return nil, outcome{err: err, final: true}, false
	}
	if err := adm.Admit(ctx); err != nil {
		return nil, outcome{err: &ThrottledError{err}}, false
	}
	return adm, outcome{}, true
}

// settle reports to adm, if not nil, how an admitted attempt ended, and
// returns its outcome.
func settle(adm retry.Admitter, o outcome) outcome {
	if adm != nil {
		adm.Done(o.rejected || overloadCode(status.Code(o.err)))
	}
	return o
}

// overloadCode reports whether code is an overload signal.
func overloadCode(code codes.Code) bool {
	return code == codes.ResourceExhausted || code == codes.Unavailable
}

// ThrottledError is the error of an attempt that the call's Admitter in
// Interceptor.Throttles refused: the attempt was not sent. It wraps the
// Admitter's error (errors.Is(err, throttle.ErrRejected) holds, and
// retry reads it as a rejection, so no Budget is spent) with the gRPC
// status UNAVAILABLE. Its zero value is not returned.
type ThrottledError struct {
	Err error
}

// Error returns the Admitter's message.
func (e *ThrottledError) Error() string { return e.Err.Error() }

// Unwrap returns the Admitter's error.
func (e *ThrottledError) Unwrap() error { return e.Err }

// GRPCStatus returns the status UNAVAILABLE with the rejection's message.
func (e *ThrottledError) GRPCStatus() *status.Status {
	return status.New(codes.Unavailable, e.Err.Error())
}
