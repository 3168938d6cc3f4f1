package retrygrpc_test

import (
	"errors"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/again-go/again/retry"
	"github.com/again-go/again/retrygrpc"
	"github.com/again-go/again/retrygrpc/grpctest"
	"github.com/again-go/again/throttle"
)

// TestStreamThrottle checks that stream attempts are throttled as unary
// ones are: an overload before the stream commits throttles the retries
// locally (not sent, code UNAVAILABLE, matching throttle.ErrRejected, no
// budget spent), and a committed stream counts once, as accepted, however
// it ends.
func TestStreamThrottle(t *testing.T) {
	tests := []struct {
		name         string
		codes        []codes.Code // the Interceptor's Codes; nil: the default
		steps        []grpctest.Step
		header       bool // the caller reads the headers first
		wantCode     codes.Code
		wantRejected bool // the call ends with a local rejection
		wantCalls    int
		wantStats    throttle.Stats // P not compared; rejections with no accept in the window are not counted
	}{
		{"exhausted before the first message", []codes.Code{codes.ResourceExhausted, codes.Unavailable},
			[]grpctest.Step{{Code: codes.ResourceExhausted}, {Messages: 1}}, false,
			codes.Unavailable, true, 1, throttle.Stats{Requests: 1, Accepts: 0, Rejected: 3, Uncounted: 3}},
		{"unavailable before the first message", nil,
			[]grpctest.Step{{Code: codes.Unavailable}, {Messages: 1}}, false,
			codes.Unavailable, true, 1, throttle.Stats{Requests: 1, Accepts: 0, Rejected: 3, Uncounted: 3}},
		{"unavailable after messages: committed, accepted", nil,
			[]grpctest.Step{{Messages: 2, Code: codes.Unavailable}}, false,
			codes.Unavailable, false, 1, throttle.Stats{Requests: 1, Accepts: 1}},
		{"unavailable after headers the caller read: accepted", nil,
			[]grpctest.Step{{Header: true, Code: codes.Unavailable}}, true,
			codes.Unavailable, false, 1, throttle.Stats{Requests: 1, Accepts: 1}},
		{"an application's error before the first message: accepted", nil,
			[]grpctest.Step{{Code: codes.NotFound}}, false,
			codes.NotFound, false, 1, throttle.Stats{Requests: 1, Accepts: 1}},
		{"success", nil,
			[]grpctest.Step{{Messages: 3}}, false,
			codes.OK, false, 1, throttle.Stats{Requests: 1, Accepts: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			budget := &retry.TokenBucket{}
			g := &throttle.Group{New: func(string) (retry.Admitter, error) {
				return throttle.New(throttle.Config{Rand: zeroRand{}})
			}}
			ic := &retrygrpc.Interceptor{
				Policy:      fast,
				Budget:      budget,
				Codes:       tt.codes,
				Throttles:   g,
				ThrottleKey: func(_ *grpc.ClientConn, method string) string { return method },
			}
			srv, cc := setup(t, ic)
			srv.Script(grpctest.Stream, tt.steps...)
			cs, err := grpctest.OpenStream(t.Context(), cc, "req")
			if err != nil {
				t.Fatal(err)
			}
			if tt.header {
				if _, err := cs.Header(); err != nil {
					t.Fatalf("Header: %v", err)
				}
			}
			_, err = grpctest.ReceiveAll(cs)
			if status.Code(err) != tt.wantCode {
				t.Errorf("stream ended with %v, want %v", err, tt.wantCode)
			}
			var te *retrygrpc.ThrottledError
			if got := errors.Is(err, throttle.ErrRejected) && errors.As(err, &te); got != tt.wantRejected {
				t.Errorf("stream ended with %v: a local rejection %v, want %v", err, got, tt.wantRejected)
			}
			if got := srv.Calls(grpctest.Stream); got != tt.wantCalls {
				t.Errorf("server saw %d streams, want %d", got, tt.wantCalls)
			}
			if tt.wantRejected {
				if got := budget.Tokens(); got != retry.DefaultMaxTokens-1 {
					t.Errorf("budget has %v tokens, want %v: a local rejection spends none", got, retry.DefaultMaxTokens-1)
				}
			}
			a, err := g.Get(grpctest.Stream)
			if err != nil {
				t.Fatal(err)
			}
			s := a.(*throttle.Throttler).Snapshot()
			s.P = 0
			if s != tt.wantStats {
				t.Errorf("throttle of the method: %+v, want %+v", s, tt.wantStats)
			}
		})
	}
}

// TestStreamThrottleOpenRejected checks that a stream whose first attempt
// is refused locally is never opened: the caller's Stream call fails at
// once with the rejection.
func TestStreamThrottleOpenRejected(t *testing.T) {
	th, err := throttle.New(throttle.Config{Rand: zeroRand{}})
	if err != nil {
		t.Fatal(err)
	}
	// One overloaded request in the window: p = 1/2, and zeroRand rejects.
	if err := th.Admit(t.Context()); err != nil {
		t.Fatal(err)
	}
	th.Done(true)
	g := &throttle.Group{New: func(string) (retry.Admitter, error) { return th, nil }}
	ic := &retrygrpc.Interceptor{Policy: fast, Throttles: g}
	srv, cc := setup(t, ic)
	srv.Script(grpctest.Stream, grpctest.Step{Messages: 1})
	_, err = grpctest.OpenStream(t.Context(), cc, "req")
	if !errors.Is(err, throttle.ErrRejected) || status.Code(err) != codes.Unavailable {
		t.Fatalf("OpenStream: %v, want a local rejection with code UNAVAILABLE", err)
	}
	if got := srv.Calls(grpctest.Stream); got != 0 {
		t.Errorf("server saw %d streams, want 0", got)
	}
}
