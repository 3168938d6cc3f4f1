package retrygrpc_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retrygrpc"
	"github.com/again-go/again/retrygrpc/grpctest"
)

// retryInfo is a google.rpc.RetryInfo detail asking for d.
func retryInfo(d time.Duration) *errdetails.RetryInfo {
	return &errdetails.RetryInfo{RetryDelay: durationpb.New(d)}
}

// TestRetryInfo checks that a google.rpc.RetryInfo status detail is
// honoured as the grpc-retry-pushback-ms trailer is, in a unary call
// against a grpc-go server that sends it: a lower bound on the wait,
// floored at the policy's first delay, limited by MaxRetryAfter; it makes
// RESOURCE_EXHAUSTED retryable; with a trailer too, the longer wait counts
// and a trailer asking not to retry wins.
func TestRetryInfo(t *testing.T) {
	// Waits of 5 ms, then 5 s: a second wait of 15 ms is the server's.
	p := backoff.Policy{Initial: 5 * time.Millisecond, Multiplier: 1000, Max: time.Hour, Jitter: backoff.NoJitter}
	bad := &errdetails.RetryInfo{RetryDelay: &durationpb.Duration{Seconds: -1}}
	tests := []struct {
		name      string
		step      grpctest.Step // the second attempt's answer; the third succeeds
		maxAfter  time.Duration
		want      []time.Duration // the waits
		wantPB    retrygrpc.Pushback
		wantErr   error // nil: success on the third attempt
		wantCalls int
	}{
		{"unavailable", grpctest.Step{Code: codes.Unavailable, RetryInfo: retryInfo(15 * time.Millisecond)}, 0,
			[]time.Duration{5 * time.Millisecond, 15 * time.Millisecond}, retrygrpc.Pushback{Present: true, Retry: true, Wait: 15 * time.Millisecond, RetryInfo: true}, nil, 3},
		{"resource exhausted is retried", grpctest.Step{Code: codes.ResourceExhausted, RetryInfo: retryInfo(15 * time.Millisecond)}, 0,
			[]time.Duration{5 * time.Millisecond, 15 * time.Millisecond}, retrygrpc.Pushback{Present: true, Retry: true, Wait: 15 * time.Millisecond, RetryInfo: true}, nil, 3},
		{"shorter than the first delay waits it", grpctest.Step{Code: codes.Unavailable, RetryInfo: retryInfo(time.Millisecond)}, 0,
			[]time.Duration{5 * time.Millisecond, 5 * time.Millisecond}, retrygrpc.Pushback{Present: true, Retry: true, Wait: time.Millisecond, RetryInfo: true}, nil, 3},
		{"the longer of trailer and RetryInfo", grpctest.Step{Code: codes.Unavailable, Pushback: []string{"15"}, RetryInfo: retryInfo(time.Millisecond)}, 0,
			[]time.Duration{5 * time.Millisecond, 15 * time.Millisecond}, retrygrpc.Pushback{Present: true, Retry: true, Wait: 15 * time.Millisecond, RetryInfo: true}, nil, 3},
		{"a trailer asking not to retry wins", grpctest.Step{Code: codes.Unavailable, Pushback: []string{"-1"}, RetryInfo: retryInfo(time.Millisecond)}, 0,
			[]time.Duration{5 * time.Millisecond}, retrygrpc.Pushback{}, retry.ErrPermanent, 2},
		{"longer than MaxRetryAfter", grpctest.Step{Code: codes.Unavailable, RetryInfo: retryInfo(time.Second)}, 100 * time.Millisecond,
			[]time.Duration{5 * time.Millisecond}, retrygrpc.Pushback{}, retry.ErrRetryAfterTooLong, 2},
		{"a negative delay is no hint", grpctest.Step{Code: codes.ResourceExhausted, RetryInfo: bad}, 0,
			[]time.Duration{5 * time.Millisecond}, retrygrpc.Pushback{}, retry.ErrPermanent, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var delays []time.Duration
			var pbs []retrygrpc.Pushback
			ic := &retrygrpc.Interceptor{Policy: p, MaxRetryAfter: tt.maxAfter, OnRetry: func(_ context.Context, e retrygrpc.Event) {
				delays = append(delays, e.Delay)
				pbs = append(pbs, e.Pushback)
			}}
			srv, cc := setup(t, ic)
			srv.Script(grpctest.Unary, grpctest.Step{Code: codes.Unavailable}, tt.step)
			reply, err := grpctest.CallUnary(t.Context(), cc, "req")
			if tt.wantErr == nil {
				if err != nil || reply != "attempt 3" {
					t.Fatalf("CallUnary = %q, %v; want attempt 3", reply, err)
				}
				if len(pbs) != 2 || pbs[1] != tt.wantPB {
					t.Errorf("Event.Pushback %+v, want %+v second", pbs, tt.wantPB)
				}
			} else if !errors.Is(err, tt.wantErr) {
				t.Fatalf("CallUnary: %v, want %v", err, tt.wantErr)
			}
			if !slices.Equal(delays, tt.want) {
				t.Errorf("waits %v, want %v", delays, tt.want)
			}
			if got := srv.Calls(grpctest.Unary); got != tt.wantCalls {
				t.Errorf("server saw %d calls, want %d", got, tt.wantCalls)
			}
		})
	}
}

// TestRetryInfoStream checks a stream that fails before its first message
// with RESOURCE_EXHAUSTED and a RetryInfo: retried after retry_delay.
func TestRetryInfoStream(t *testing.T) {
	var delays []time.Duration
	ic := &retrygrpc.Interceptor{Policy: fast, OnRetry: func(_ context.Context, e retrygrpc.Event) { delays = append(delays, e.Delay) }}
	srv, cc := setup(t, ic)
	srv.Script(grpctest.Stream, grpctest.Step{Code: codes.ResourceExhausted, RetryInfo: retryInfo(20 * time.Millisecond)}, grpctest.Step{Messages: 1})
	cs, err := grpctest.OpenStream(t.Context(), cc, "req")
	if err != nil {
		t.Fatal(err)
	}
	got, err := grpctest.ReceiveAll(cs)
	if err != nil || !slices.Equal(got, []string{"m0"}) {
		t.Fatalf("received %q, %v; want [m0] from the retry", got, err)
	}
	if !slices.Equal(delays, []time.Duration{20 * time.Millisecond}) {
		t.Errorf("waits %v, want the RetryInfo's [20ms]", delays)
	}
}

// asks are the two ways a server asks for a wait, for tests that must
// hold for both: the grpc-retry-pushback-ms trailer and a
// google.rpc.RetryInfo status detail.
var asks = []struct {
	name string
	ask  func(st grpctest.Step, d time.Duration) grpctest.Step
}{
	{"trailer", func(st grpctest.Step, d time.Duration) grpctest.Step {
		st.Pushback = []string{strconv.FormatInt(d.Milliseconds(), 10)}
		return st
	}},
	{"RetryInfo", func(st grpctest.Step, d time.Duration) grpctest.Step {
		st.RetryInfo = retryInfo(d)
		return st
	}},
}

// TestClasses checks an Interceptor's classes: UNAVAILABLE and
// RESOURCE_EXHAUSTED (IsOverload) wait the overload class's schedule, a
// code no class matches the Policy's.
func TestClasses(t *testing.T) {
	var delays []time.Duration
	ic := &retrygrpc.Interceptor{
		Policy: backoff.Policy{Initial: time.Millisecond, Retries: 5, Jitter: backoff.NoJitter},
		Codes:  []codes.Code{codes.Unavailable, codes.Aborted},
		Classes: []retry.Class{{Name: "overload", Match: retrygrpc.IsOverload,
			Policy: backoff.Policy{Initial: 20 * time.Millisecond, Max: time.Second, Jitter: backoff.NoJitter}}},
		OnRetry: func(_ context.Context, e retrygrpc.Event) { delays = append(delays, e.Delay) },
	}
	srv, cc := setup(t, ic)
	srv.Script(grpctest.Unary, grpctest.Step{Code: codes.Unavailable}, grpctest.Step{Code: codes.Aborted}, grpctest.Step{Code: codes.Unavailable})
	if reply, err := grpctest.CallUnary(t.Context(), cc, "req"); err != nil || reply != "attempt 4" {
		t.Fatalf("CallUnary = %q, %v; want attempt 4", reply, err)
	}
	// Overload 20 ms, Aborted the Policy's second wait 2 ms, overload 40 ms.
	if want := []time.Duration{20 * time.Millisecond, 2 * time.Millisecond, 40 * time.Millisecond}; !slices.Equal(delays, want) {
		t.Errorf("waits %v, want %v", delays, want)
	}
}

// TestEventClass checks Event.Class against a grpc-go server on loopback,
// in unary and streaming calls: each hook is told the class of the
// failure (the class before the success in OnSuccess), and "" without
// classes, when no class matched, and for a code that is not retried.
func TestEventClass(t *testing.T) {
	noWait := func(name string, match func(error) bool, retries int) retry.Class {
		return retry.Class{Name: name, Match: match, Policy: backoff.Policy{Initial: -1, Retries: retries}}
	}
	overload := noWait("overload", retrygrpc.IsOverload, 5)
	transient := noWait("transient", nil, 5)
	unavailable, aborted := grpctest.Step{Code: codes.Unavailable}, grpctest.Step{Code: codes.Aborted}
	tests := []struct {
		name    string
		classes []retry.Class
		steps   []grpctest.Step // the last one, if it fails, ends the call
		events  []string        // "hook class" of each event, in order
	}{
		{"an overload, then another failure", []retry.Class{overload, transient}, []grpctest.Step{unavailable, aborted, {}},
			[]string{"retry overload", "retry transient", "success transient"}},
		{"no classes", nil, []grpctest.Step{unavailable, aborted, {}},
			[]string{"retry ", "retry ", "success "}},
		{"no class matched", []retry.Class{overload}, []grpctest.Step{unavailable, aborted, {}},
			[]string{"retry overload", "retry ", "success "}},
		{"a class's cap ends the call", []retry.Class{overload, noWait("transient", nil, 1)}, []grpctest.Step{unavailable, aborted, aborted},
			[]string{"retry overload", "retry transient", "give up transient"}},
		{"a code not retried", []retry.Class{overload, transient}, []grpctest.Step{unavailable, {Code: codes.InvalidArgument}},
			[]string{"retry overload", "give up "}},
		{"first-try success", []retry.Class{overload, transient}, []grpctest.Step{{}}, []string{"success "}},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(tt.name+" stream="+strconv.FormatBool(stream), func(t *testing.T) {
				var events []string
				record := func(hook string) func(context.Context, retrygrpc.Event) {
					return func(_ context.Context, e retrygrpc.Event) { events = append(events, hook+" "+e.Class) }
				}
				ic := &retrygrpc.Interceptor{Policy: backoff.Policy{Initial: -1, Retries: 5},
					Codes: []codes.Code{codes.Unavailable, codes.Aborted}, Classes: tt.classes,
					OnRetry: record("retry"), OnGiveUp: record("give up"), OnSuccess: record("success")}
				srv, cc := setup(t, ic)
				if stream {
					srv.Script(grpctest.Stream, tt.steps...)
					if cs, err := grpctest.OpenStream(t.Context(), cc, "req"); err == nil {
						_, _ = grpctest.ReceiveAll(cs)
					}
				} else {
					srv.Script(grpctest.Unary, tt.steps...)
					_, _ = grpctest.CallUnary(t.Context(), cc, "req")
				}
				if !slices.Equal(events, tt.events) {
					t.Errorf("events %q, want %q", events, tt.events)
				}
			})
		}
	}
}
