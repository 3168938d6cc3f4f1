package retrygrpc

import (
	"errors"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/again-go/again/breaker"
)

// breakerFor returns the breaker of a call in ic.Breakers, or nil without
// Breakers.
func (ic *Interceptor) breakerFor(cc *grpc.ClientConn, method string) (*breaker.Breaker, error) {
	if ic.Breakers == nil {
		return nil, nil
	}
	var key string
	switch {
	case ic.BreakerKey != nil:
		key = ic.BreakerKey(cc, method)
	case cc != nil:
		key = cc.Target()
	}
	return ic.Breakers.Get(key)
}

// OpenError is the error of a call that an open breaker refused: the
// *breaker.OpenError, which errors.Is matches with breaker.ErrOpen and
// errors.As finds, with the gRPC status UNAVAILABLE, so that code reading
// status.Code sees what grpc-go reports when no server is reachable. Its
// zero value is not returned; it is safe to keep and read from any
// goroutine.
type OpenError struct {
	*breaker.OpenError
}

// GRPCStatus returns the status UNAVAILABLE with the breaker's message.
func (e OpenError) GRPCStatus() *status.Status {
	return status.New(codes.Unavailable, e.Error())
}

// Unwrap returns the breaker's *breaker.OpenError.
func (e OpenError) Unwrap() error { return e.OpenError }

// openError wraps a breaker's rejection.
func openError(err error) error {
	var oe *breaker.OpenError
	if errors.As(err, &oe) {
		return OpenError{oe}
	}
	return err
}

// waitsFor reports whether a call waits for the breaker that refused it
// with err to admit a probe, rather than failing fast.
func (ic *Interceptor) waitsFor(err error) bool {
	var oe OpenError
	return ic.BreakerWait > 0 && errors.As(err, &oe) && oe.Wait <= ic.BreakerWait
}
