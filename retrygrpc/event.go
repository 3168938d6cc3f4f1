package retrygrpc

import (
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/again-go/again/retry"
)

// System is the value of the OpenTelemetry attribute rpc.system for gRPC
// calls.
const System = "grpc"

// Event describes an attempt of a call, for the OnRetry, OnGiveUp and
// OnSuccess hooks. It embeds the retry package's Event (Attempt,
// MaxAttempts, Delay, Err, Class), so that a hook written for
// retry.WithOnRetry takes e.Event as it is, and adds what gRPC telemetry
// names: the attributes rpc.system (System), rpc.method (Method) and
// rpc.grpc.status_code (int(Code)). The zero Event describes nothing; it is
// a plain value, safe to copy and keep.
//
// Class is the Name of the class (see Interceptor.Classes) of the failure
// the event is about: the class whose policy set Delay (OnRetry) or whose
// cap may have ended the call (OnGiveUp); in OnSuccess, that of the
// failure before the successful attempt, whose policy set the wait
// before it (see retry.Loop.Class). It is "" when Interceptor.Classes is
// empty, when no class matched the failure (Policy set the wait), after a
// first-try success, and for a failure that ended the call before it was
// classed: a code that is not retried, the context's end, an open breaker
// failing the call fast.
type Event struct {
	retry.Event
	// Method is the full method name, "/package.Service/Method".
	Method string
	// Target is the connection's target (grpc.ClientConn.Target).
	Target string
	// Code is the attempt's status code: status.Code(Err), OK in
	// OnSuccess, UNAVAILABLE for an attempt an open breaker refused.
	Code codes.Code
	// Pushback is the attempt's grpc-retry-pushback-ms trailer, if it had
	// one, as the server sent it, or its google.rpc.RetryInfo (then
	// Pushback.RetryInfo is true): in OnRetry, Delay is then
	// Pushback.Wait, or the policy's first delay if that is longer.
	Pushback Pushback
	// Hedges is the number of hedged attempts the call sent besides the
	// first (hedged calls only; 0 otherwise).
	Hedges int
	// Stream reports a streaming call.
	Stream bool
	// Reason is why the call stopped (OnGiveUp only): a retry reason
	// (retry.ErrExhausted, retry.ErrPermanent for a code that is not
	// retried, retry.ErrBudget, retry.ErrDeadline,
	// retry.ErrRetryAfterTooLong, retry.ErrCanceled) or breaker.ErrOpen
	// for a call that failed fast at an open breaker. Test it with
	// errors.Is.
	Reason error
}

// SplitMethod splits a full method name "/package.Service/Method" into
// its service ("package.Service") and method ("Method"), the attributes
// rpc.service and rpc.method of OpenTelemetry's older RPC conventions.
// A name without that shape is returned whole as the method.
func SplitMethod(full string) (service, method string) {
	s := strings.TrimPrefix(full, "/")
	if i := strings.LastIndexByte(s, '/'); i > 0 && i < len(s)-1 {
		return s[:i], s[i+1:]
	}
	return "", full
}
