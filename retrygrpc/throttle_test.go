package retrygrpc_test

import (
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retrygrpc"
	"github.com/again-go/again/retrygrpc/grpctest"
	"github.com/again-go/again/throttle"
)

type zeroRand struct{}

func (zeroRand) Float64() float64 { return 0 }

// TestThrottleRejectsLocally checks that once a target answers
// RESOURCE_EXHAUSTED, its throttle rejects the retries locally: not sent,
// no budget spent, code UNAVAILABLE, matching throttle.ErrRejected.
func TestThrottleRejectsLocally(t *testing.T) {
	for _, code := range []codes.Code{codes.ResourceExhausted, codes.Unavailable} {
		t.Run(code.String(), func(t *testing.T) {
			budget := &retry.TokenBucket{}
			g := &throttle.Group{New: func(string) (retry.Admitter, error) {
				return throttle.New(throttle.Config{Rand: zeroRand{}})
			}}
			ic := &retrygrpc.Interceptor{
				Policy:      backoff.Policy{Initial: time.Millisecond, Retries: 3},
				Budget:      budget,
				Codes:       []codes.Code{codes.Unavailable, codes.ResourceExhausted},
				Throttles:   g,
				ThrottleKey: func(_ *grpc.ClientConn, method string) string { return method },
			}
			srv, cc := setup(t, ic)
			srv.Script(grpctest.Unary, grpctest.Step{Code: code})
			_, err := grpctest.CallUnary(t.Context(), cc, "req")
			if !errors.Is(err, throttle.ErrRejected) || status.Code(err) != codes.Unavailable {
				t.Fatalf("err %v, want a local rejection with code UNAVAILABLE", err)
			}
			var te *retrygrpc.ThrottledError
			if !errors.As(err, &te) {
				t.Errorf("err %v: want a *retrygrpc.ThrottledError", err)
			}
			if got := srv.Calls(grpctest.Unary); got != 1 {
				t.Errorf("server saw %d calls, want 1: the retries are rejected locally", got)
			}
			if got := budget.Tokens(); got != retry.DefaultMaxTokens-1 {
				t.Errorf("budget has %v tokens, want %v", got, retry.DefaultMaxTokens-1)
			}
			a, _ := g.Get(grpctest.Unary)
			if s := a.(*throttle.Throttler).Snapshot(); s.Requests != 1 || s.Accepts != 0 || s.Rejected != 3 {
				t.Errorf("throttle of the method: %+v, want 1 request and 3 rejected (not counted: no accept in the window), none accepted", s)
			}
		})
	}
}

// TestThrottleCountsAnswersAsAccepted: an application's error is no
// overload signal.
func TestThrottleCountsAnswersAsAccepted(t *testing.T) {
	g := &throttle.Group{}
	ic := &retrygrpc.Interceptor{Throttles: g}
	srv, cc := setup(t, ic)
	srv.Script(grpctest.Unary, grpctest.Step{Code: codes.NotFound})
	if _, err := grpctest.CallUnary(t.Context(), cc, "req"); status.Code(err) != codes.NotFound {
		t.Fatalf("err %v, want NOT_FOUND", err)
	}
	var n int
	g.Range(func(_ string, a retry.Admitter) bool {
		n++
		if s := a.(*throttle.Throttler).Snapshot(); s.Requests != 1 || s.Accepts != 1 {
			t.Errorf("throttle: %+v, want 1 request, accepted", s)
		}
		return true
	})
	if n != 1 {
		t.Errorf("Group holds %d keys, want 1 (the target)", n)
	}
}
