package retrygrpc_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/again-go/again/fault"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retrygrpc"
	"github.com/again-go/again/retrygrpc/grpctest"
)

// faultSetup starts a loopback test server behind fi's interceptors and
// dials it through ic; calls counts the client's attempts of the last
// call.
func faultSetup(t *testing.T, fi *retrygrpc.FaultInjector, ic *retrygrpc.Interceptor) (*grpctest.Server, *grpc.ClientConn, *atomic.Int64) {
	t.Helper()
	if err := fi.Validate(); err != nil {
		t.Fatal(err)
	}
	var attempts atomic.Int64
	end := func(_ context.Context, e retrygrpc.Event) { attempts.Store(int64(e.Attempt)) }
	ic.OnSuccess, ic.OnGiveUp = end, end
	srv := grpctest.Start(t, fi.ServerOptions()...)
	return srv, srv.Dial(t, ic.DialOptions()...), &attempts
}

func TestFaultUnary(t *testing.T) {
	for _, tc := range []struct {
		name      string
		f         retrygrpc.Fault
		timeout   time.Duration // the AttemptTimeout
		wantCode  codes.Code
		wantN     int64         // the client's attempts
		wantCalls int           // the handler's runs
		wantWait  time.Duration // at least
	}{
		{"unavailable twice", retrygrpc.Fault{Fault: fault.Fault{Times: 2}}, 0, codes.OK, 3, 1, 0},
		{"pushback obeyed", retrygrpc.Fault{Fault: fault.Fault{Times: 1}, Code: codes.ResourceExhausted, Pushback: "300"}, 0, codes.OK, 2, 1, 300 * time.Millisecond},
		{"pushback from RetryAfter", retrygrpc.Fault{Fault: fault.Fault{Kind: fault.RateLimit, Limit: 1, Window: time.Hour, RetryAfter: 200 * time.Millisecond, Times: 1}}, 0, codes.OK, 1, 1, 0},
		{"negative pushback: not retried", retrygrpc.Fault{Fault: fault.Fault{Times: 1}, Pushback: "-1"}, 0, codes.Unavailable, 1, 0, 0},
		{"resource exhausted without pushback: not retried", retrygrpc.Fault{Fault: fault.Fault{Times: 1}, Code: codes.ResourceExhausted}, 0, codes.ResourceExhausted, 1, 0, 0},
		{"reset after the work: retried", retrygrpc.Fault{Fault: fault.Fault{Kind: fault.Reset, Times: 1}}, 0, codes.OK, 2, 2, 0},
		{"latency: cut by AttemptTimeout", retrygrpc.Fault{Fault: fault.Fault{Kind: fault.Latency, Delay: time.Hour, Times: 1}}, 300 * time.Millisecond, codes.OK, 2, 1, 300 * time.Millisecond},
		{"stall: cut by AttemptTimeout", retrygrpc.Fault{Fault: fault.Fault{Kind: fault.Stall, Times: 1}}, 300 * time.Millisecond, codes.OK, 2, 1, 300 * time.Millisecond},
		{"slow answer", retrygrpc.Fault{Fault: fault.Fault{Kind: fault.SlowFirstByte, Delay: 100 * time.Millisecond}}, 0, codes.OK, 1, 1, 100 * time.Millisecond},
		{"code not retried", retrygrpc.Fault{Fault: fault.Fault{Times: 1}, Code: codes.Internal}, 0, codes.Internal, 1, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fi := &retrygrpc.FaultInjector{Faults: []retrygrpc.Fault{tc.f}}
			srv, cc, attempts := faultSetup(t, fi, &retrygrpc.Interceptor{Policy: fast, AttemptTimeout: tc.timeout})
			ctx := t.Context()
			if tc.name == "pushback from RetryAfter" {
				// The window's one call passes; the second is limited
				// and retried after its pushback.
				if _, err := grpctest.CallUnary(ctx, cc, "first"); err != nil {
					t.Fatal(err)
				}
				tc.wantN, tc.wantCalls, tc.wantWait = 2, 2, 200*time.Millisecond
			}
			start := time.Now()
			_, err := grpctest.CallUnary(ctx, cc, "hello")
			took := time.Since(start)
			if status.Code(err) != tc.wantCode || attempts.Load() != tc.wantN {
				t.Errorf("got %v after %d attempts, want %v after %d", err, attempts.Load(), tc.wantCode, tc.wantN)
			}
			if n := srv.Calls(grpctest.Unary); n != tc.wantCalls {
				t.Errorf("the handler ran %d times, want %d", n, tc.wantCalls)
			}
			if took < tc.wantWait {
				t.Errorf("took %v, want at least %v", took, tc.wantWait)
			}
		})
	}
}

// A stream that sends K messages and then fails is not replayed: the
// caller has the K messages and the failure, and the server one call.
// Before anything reached the caller, the stream is retried.
func TestFaultStream(t *testing.T) {
	for _, tc := range []struct {
		name       string
		f          retrygrpc.Fault
		readHeader bool
		want       []string
		wantCode   codes.Code
		wantCalls  int
	}{
		{"fails after 2 messages: not replayed", retrygrpc.Fault{Fault: fault.Fault{Kind: fault.Reset, Stage: fault.MidBody, Times: 1}, Messages: 2}, false,
			[]string{"m0", "m1"}, codes.Unavailable, 1},
		{"fails before the headers: retried", retrygrpc.Fault{Fault: fault.Fault{Kind: fault.Reset, Times: 1}}, false,
			[]string{"m0", "m1", "m2", "m3", "m4"}, codes.OK, 2},
		{"pushback before the headers: retried", retrygrpc.Fault{Fault: fault.Fault{Times: 1}, Code: codes.ResourceExhausted, Pushback: "10"}, false,
			[]string{"m0", "m1", "m2", "m3", "m4"}, codes.OK, 1},
		{"pushback after the headers the caller read: committed", retrygrpc.Fault{Fault: fault.Fault{Times: 1, Stage: fault.AfterHeaders}, Code: codes.ResourceExhausted, Pushback: "10"}, true,
			nil, codes.ResourceExhausted, 0},
		{"reset after the headers the caller read: committed", retrygrpc.Fault{Fault: fault.Fault{Kind: fault.Reset, Stage: fault.AfterHeaders, Times: 1}}, true,
			nil, codes.Unavailable, 1},
		{"slow first message", retrygrpc.Fault{Fault: fault.Fault{Kind: fault.SlowBody, Delay: 50 * time.Millisecond}}, true,
			[]string{"m0", "m1", "m2", "m3", "m4"}, codes.OK, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fi := &retrygrpc.FaultInjector{Faults: []retrygrpc.Fault{tc.f}}
			srv, cc, _ := faultSetup(t, fi, &retrygrpc.Interceptor{Policy: fast})
			ctx := t.Context()
			srv.Script(grpctest.Stream, grpctest.Step{Messages: 5}, grpctest.Step{Messages: 5})
			cs, err := grpctest.OpenStream(ctx, cc, "req")
			if err != nil {
				t.Fatal(err)
			}
			if tc.readHeader {
				if _, err := cs.Header(); err != nil && status.Code(err) != tc.wantCode {
					t.Fatalf("Header: %v", err)
				}
			}
			got, err := grpctest.ReceiveAll(cs)
			if !slices.Equal(got, tc.want) || status.Code(err) != tc.wantCode {
				t.Errorf("received %q, %v; want %q, %v", got, err, tc.want, tc.wantCode)
			}
			if n := srv.Calls(grpctest.Stream); n != tc.wantCalls {
				t.Errorf("the handler ran %d times, want %d", n, tc.wantCalls)
			}
			var re *retry.Error
			if tc.wantCode != codes.OK && tc.wantCalls <= 1 && errors.As(err, &re) && re.Attempts > 1 {
				t.Errorf("a committed stream was retried: %v", err)
			}
		})
	}
}

func TestFaultInjectorValidate(t *testing.T) {
	for _, fi := range []*retrygrpc.FaultInjector{
		{Faults: []retrygrpc.Fault{{Messages: -1}}},
		{Faults: []retrygrpc.Fault{{Fault: fault.Fault{Rate: 2}}}},
	} {
		if err := fi.Validate(); !errors.Is(err, fault.ErrInvalid) {
			t.Errorf("Validate() = %v, want an error matching fault.ErrInvalid", err)
		}
	}
}
