package retrygrpc_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/hedge"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retrygrpc"
	"github.com/again-go/again/retrygrpc/grpctest"
)

// TestUnaryCodes checks which answers are retried: UNAVAILABLE by default,
// RESOURCE_EXHAUSTED only with a pushback or when listed, nothing after a
// negative or malformed pushback, and what the caller sees when retrying
// stops.
func TestUnaryCodes(t *testing.T) {
	unavailable := grpctest.Step{Code: codes.Unavailable}
	tests := []struct {
		name      string
		codes     []codes.Code
		steps     []grpctest.Step
		wantCalls int
		wantCode  codes.Code
		wantWhy   error // the *retry.Error's reason; nil: the error is the attempt's own
	}{
		{"unavailable is retried", nil, []grpctest.Step{unavailable, unavailable}, 3, codes.OK, nil},
		{"retries exhausted", nil, []grpctest.Step{unavailable, unavailable, unavailable, unavailable, unavailable}, 4, codes.Unavailable, retry.ErrExhausted},
		{"internal is not retried", nil, []grpctest.Step{{Code: codes.Internal}}, 1, codes.Internal, nil},
		{"not found is not retried", nil, []grpctest.Step{{Code: codes.NotFound}}, 1, codes.NotFound, nil},
		{"resource exhausted without pushback is not retried", nil, []grpctest.Step{{Code: codes.ResourceExhausted}}, 1, codes.ResourceExhausted, nil},
		{"resource exhausted with pushback is retried", nil, []grpctest.Step{{Code: codes.ResourceExhausted, Pushback: []string{"1"}}}, 2, codes.OK, nil},
		{"resource exhausted when listed", []codes.Code{codes.ResourceExhausted}, []grpctest.Step{{Code: codes.ResourceExhausted}}, 2, codes.OK, nil},
		{"listed codes replace the default", []codes.Code{codes.Aborted}, []grpctest.Step{{Code: codes.Aborted}, unavailable}, 2, codes.Unavailable, retry.ErrPermanent},
		{"empty list retries nothing", []codes.Code{}, []grpctest.Step{unavailable}, 1, codes.Unavailable, nil},
		{"negative pushback stops", nil, []grpctest.Step{{Code: codes.Unavailable, Pushback: []string{"-1"}}}, 1, codes.Unavailable, nil},
		{"malformed pushback stops", nil, []grpctest.Step{{Code: codes.Unavailable, Pushback: []string{"soon"}}}, 1, codes.Unavailable, nil},
		{"zero pushback is retried after the first delay", nil, []grpctest.Step{{Code: codes.Unavailable, Pushback: []string{"0"}}}, 2, codes.OK, nil},
		{"pushback on a code not retried", nil, []grpctest.Step{{Code: codes.Internal, Pushback: []string{"1"}}}, 1, codes.Internal, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ic := &retrygrpc.Interceptor{Policy: fast, Codes: tt.codes}
			srv, cc := setup(t, ic)
			srv.Script(grpctest.Unary, tt.steps...)
			reply, err := grpctest.CallUnary(t.Context(), cc, "req")
			if got := status.Code(err); got != tt.wantCode {
				t.Fatalf("code %v, want %v (err %v)", got, tt.wantCode, err)
			}
			if got := srv.Calls(grpctest.Unary); got != tt.wantCalls {
				t.Errorf("server saw %d calls, want %d", got, tt.wantCalls)
			}
			var re *retry.Error
			switch {
			case err == nil:
				if want := "attempt " + string(rune('0'+tt.wantCalls)); reply != want {
					t.Errorf("reply %q, want %q", reply, want)
				}
			case tt.wantWhy == nil:
				if errors.As(err, &re) {
					t.Errorf("err %v is a *retry.Error, want the attempt's own status error", err)
				}
				if _, ok := status.FromError(err); !ok {
					t.Errorf("err %v is not a status error", err)
				}
			case !errors.Is(err, tt.wantWhy):
				t.Errorf("err %v, want reason %v", err, tt.wantWhy)
			case !errors.As(err, &re) || re.Attempts != tt.wantCalls:
				t.Errorf("err %v: want a *retry.Error with %d attempts", err, tt.wantCalls)
			}
		})
	}
}

// TestPushbackReplacesTheDelay checks that a pushback replaces the
// policy's delay, however long the policy's would be, but is never waited
// less than the policy's first delay: a server pushing back 0 ms on every
// call must not get a hot loop of retries.
func TestPushbackReplacesTheDelay(t *testing.T) {
	// Waits of 5 ms, then 5 s, then an hour: only the first is short.
	p := backoff.Policy{Initial: 5 * time.Millisecond, Multiplier: 1000, Max: time.Hour, Jitter: backoff.NoJitter}
	tests := []struct {
		name     string
		pushback string
		want     []time.Duration
	}{
		{"longer than the first delay", "15", []time.Duration{5 * time.Millisecond, 15 * time.Millisecond}},
		{"shorter than the first delay waits it", "1", []time.Duration{5 * time.Millisecond, 5 * time.Millisecond}},
		{"zero waits the first delay", "0", []time.Duration{5 * time.Millisecond, 5 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var delays []time.Duration
			var pushbacks []retrygrpc.Pushback
			ic := &retrygrpc.Interceptor{
				Policy: p,
				OnRetry: func(_ context.Context, e retrygrpc.Event) {
					delays = append(delays, e.Delay)
					pushbacks = append(pushbacks, e.Pushback)
				},
			}
			srv, cc := setup(t, ic)
			srv.Script(grpctest.Unary, grpctest.Step{Code: codes.Unavailable},
				grpctest.Step{Code: codes.Unavailable, Pushback: []string{tt.pushback}})
			if _, err := grpctest.CallUnary(t.Context(), cc, "req"); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(delays, tt.want) {
				t.Errorf("waits %v, want %v", delays, tt.want)
			}
			if len(pushbacks) != 2 || pushbacks[1] != retrygrpc.ParsePushback([]string{tt.pushback}) {
				t.Errorf("Event.Pushback %+v, want the server's %s ms as the second", pushbacks, tt.pushback)
			}
		})
	}
}

// TestPushbackLimits checks the two limits on a pushback: MaxRetryAfter
// and the call's deadline. Either ends the call at once, before the
// deadline passes, without a second attempt.
func TestPushbackLimits(t *testing.T) {
	tests := []struct {
		name          string
		maxRetryAfter time.Duration
		pushback      string
		wantHint      time.Duration
		want          error
	}{
		{"longer than MaxRetryAfter", 10 * time.Millisecond, "1000", time.Second, retry.ErrRetryAfterTooLong},
		{"no pushback honoured", -1, "1", time.Millisecond, retry.ErrRetryAfterTooLong},
		{"past the deadline", time.Hour, "600000", 10 * time.Minute, retry.ErrDeadline},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ic := &retrygrpc.Interceptor{Policy: fast, MaxRetryAfter: tt.maxRetryAfter}
			srv, cc := setup(t, ic)
			srv.Script(grpctest.Unary, grpctest.Step{Code: codes.Unavailable, Pushback: []string{tt.pushback}})
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			_, err := grpctest.CallUnary(ctx, cc, "req")
			if !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
			if ctx.Err() != nil {
				t.Errorf("the call returned after its deadline")
			}
			if d, ok := retry.RetryAfter(err); !ok || d != tt.wantHint {
				t.Errorf("RetryAfter(err) = %v, %v: want the server's pushback", d, ok)
			}
			if got := srv.Calls(grpctest.Unary); got != 1 {
				t.Errorf("server saw %d calls, want 1", got)
			}
		})
	}
}

// TestDeadline checks that a call never outlives its deadline: a server
// that stalls is abandoned at the deadline and not retried, and a stalled
// attempt bounded by AttemptTimeout is retried within it.
func TestDeadline(t *testing.T) {
	t.Run("stall until the deadline", func(t *testing.T) {
		ic := &retrygrpc.Interceptor{Policy: fast}
		srv, cc := setup(t, ic)
		srv.Script(grpctest.Unary, grpctest.Step{Stall: true})
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		_, err := grpctest.CallUnary(ctx, cc, "req")
		if status.Code(err) != codes.DeadlineExceeded {
			t.Fatalf("err %v, want DEADLINE_EXCEEDED", err)
		}
		if got := srv.Calls(grpctest.Unary); got != 1 {
			t.Errorf("server saw %d calls, want 1", got)
		}
	})
	t.Run("attempt timeout", func(t *testing.T) {
		// Long enough for the second attempt to answer on a loaded machine.
		ic := &retrygrpc.Interceptor{Policy: fast, AttemptTimeout: 250 * time.Millisecond}
		srv, cc := setup(t, ic)
		srv.Script(grpctest.Unary, grpctest.Step{Stall: true})
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		reply, err := grpctest.CallUnary(ctx, cc, "req")
		if err != nil || reply != "attempt 2" {
			t.Fatalf("got %q, %v: want the second attempt's reply", reply, err)
		}
		waitFor(t, func() bool { return srv.Canceled(grpctest.Unary) == 1 })
	})
}

// waitFor polls cond until it holds, failing the test after 10 s: the
// server sees a cancellation a moment after the client sent it.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestBudget checks that a shared budget stops retrying when too many
// attempts fail.
func TestBudget(t *testing.T) {
	// Four tokens allow a retry while more than two remain: the first
	// failure leaves three, the second two.
	budget := &retry.TokenBucket{MaxTokens: 4}
	ic := &retrygrpc.Interceptor{Policy: backoff.Policy{Initial: time.Millisecond, Retries: 10}, Budget: budget}
	srv, cc := setup(t, ic)
	for range 10 {
		srv.Script(grpctest.Unary, grpctest.Step{Code: codes.Unavailable})
	}
	_, err := grpctest.CallUnary(t.Context(), cc, "req")
	if !errors.Is(err, retry.ErrBudget) || status.Code(err) != codes.Unavailable {
		t.Fatalf("err %v, want ErrBudget with code UNAVAILABLE", err)
	}
	if got := srv.Calls(grpctest.Unary); got != 2 {
		t.Errorf("server saw %d calls, want 2", got)
	}
}

// TestHooks checks what the hooks receive: the method, the target, the
// attempt, the status code and why the call stopped.
func TestHooks(t *testing.T) {
	var got []retrygrpc.Event
	record := func(_ context.Context, e retrygrpc.Event) { got = append(got, e) }
	ic := &retrygrpc.Interceptor{Policy: fast, OnRetry: record, OnGiveUp: record, OnSuccess: record}
	srv, cc := setup(t, ic)
	srv.Script(grpctest.Unary,
		grpctest.Step{Code: codes.Unavailable, Pushback: []string{"1"}},
		grpctest.Step{}, // the first call succeeds on its second attempt
		grpctest.Step{Code: codes.Unavailable, Pushback: []string{"-1"}},
	)
	if _, err := grpctest.CallUnary(t.Context(), cc, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := grpctest.CallUnary(t.Context(), cc, "b"); err == nil {
		t.Fatal("second call succeeded; want it to stop on the negative pushback")
	}
	if len(got) != 3 {
		t.Fatalf("%d events, want 3 (retry, success, give up): %+v", len(got), got)
	}
	for _, e := range got {
		if e.Method != grpctest.Unary || e.Target != srv.Addr {
			t.Errorf("event names %q on %q, want %q on %q", e.Method, e.Target, grpctest.Unary, srv.Addr)
		}
	}
	retried, succeeded, gaveUp := got[0], got[1], got[2]
	if retried.Attempt != 1 || retried.Code != codes.Unavailable || retried.Delay != time.Millisecond || !retried.Pushback.Present {
		t.Errorf("OnRetry got %+v", retried)
	}
	if succeeded.Attempt != 2 || succeeded.Code != codes.OK || succeeded.Err != nil {
		t.Errorf("OnSuccess got %+v", succeeded)
	}
	if gaveUp.Attempt != 1 || gaveUp.Code != codes.Unavailable || !errors.Is(gaveUp.Reason, retry.ErrPermanent) {
		t.Errorf("OnGiveUp got %+v", gaveUp)
	}
	if s, ok := status.FromError(gaveUp.Err); !ok || s.Code() != codes.Unavailable {
		t.Errorf("OnGiveUp's Err %v carries no UNAVAILABLE status", gaveUp.Err)
	}
}

// TestInvalidPolicy checks that a bad Policy fails each call with its
// error, before any attempt.
func TestInvalidPolicy(t *testing.T) {
	ic := &retrygrpc.Interceptor{Policy: backoff.Policy{Multiplier: 0.5}}
	srv, cc := setup(t, ic)
	_, err := grpctest.CallUnary(t.Context(), cc, "req")
	var fe *backoff.FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("err %v, want a *backoff.FieldError", err)
	}
	if got := srv.Calls(grpctest.Unary); got != 0 {
		t.Errorf("server saw %d calls, want 0", got)
	}
}

// TestBuiltinRetryMultiplies checks what the package documentation says
// of grpc-go's own retries: a service config's retryPolicy runs inside
// each of the Interceptor's attempts, so the attempts multiply, unless
// grpc.WithDisableRetry (which DialOptions passes) turns it off.
func TestBuiltinRetryMultiplies(t *testing.T) {
	const serviceConfig = `{"methodConfig": [{"name": [{"service": "grpctest.Test"}], "retryPolicy": {
		"maxAttempts": 3, "initialBackoff": "0.001s", "maxBackoff": "0.001s",
		"backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE"]}}]}`
	ic := &retrygrpc.Interceptor{Policy: backoff.Policy{Initial: time.Millisecond, Retries: 1}}
	tests := []struct {
		name      string
		opts      []grpc.DialOption
		wantCalls int
	}{
		{"both retry", []grpc.DialOption{grpc.WithChainUnaryInterceptor(ic.Unary), grpc.WithDefaultServiceConfig(serviceConfig)}, 6},
		{"recommended setup", append(ic.DialOptions(), grpc.WithDefaultServiceConfig(serviceConfig)), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := grpctest.Start(t)
			for range 10 {
				srv.Script(grpctest.Unary, grpctest.Step{Code: codes.Unavailable})
			}
			cc := srv.Dial(t, tt.opts...)
			if _, err := grpctest.CallUnary(t.Context(), cc, "req"); status.Code(err) != codes.Unavailable {
				t.Fatalf("err %v, want UNAVAILABLE", err)
			}
			if got := srv.Calls(grpctest.Unary); got != tt.wantCalls {
				t.Errorf("server saw %d calls, want %d", got, tt.wantCalls)
			}
		})
	}
}

// TestBackoffRestartsAfterPushback checks A6's rule, which grpc-go
// follows: after a retry that a pushback drove, the next retry without a
// pushback waits the policy's first delay again, not the delay of its
// attempt's number.
func TestBackoffRestartsAfterPushback(t *testing.T) {
	// Waits of 5 ms, then 5 s, then an hour: only the first is short.
	p := backoff.Policy{Initial: 5 * time.Millisecond, Multiplier: 1000, Max: time.Hour, Retries: 3, Jitter: backoff.NoJitter}
	var delays []time.Duration
	ic := &retrygrpc.Interceptor{Policy: p, OnRetry: func(_ context.Context, e retrygrpc.Event) { delays = append(delays, e.Delay) }}
	srv, cc := setup(t, ic)
	unavailable := grpctest.Step{Code: codes.Unavailable}
	srv.Script(grpctest.Unary, unavailable, grpctest.Step{Code: codes.Unavailable, Pushback: []string{"15"}}, unavailable)
	// Without the restart the third wait would be an hour: the deadline
	// ends the call at once instead.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := grpctest.CallUnary(ctx, cc, "req"); err != nil {
		t.Fatalf("call: %v (waits %v)", err, delays)
	}
	if want := []time.Duration{5 * time.Millisecond, 15 * time.Millisecond, 5 * time.Millisecond}; !slices.Equal(delays, want) {
		t.Errorf("waits %v, want %v: the first delay again after the pushback's", delays, want)
	}
}

// TestCanceledCall checks that a call its caller cancels ends with
// CANCELED, as grpc-go's own calls do, not with the UNAVAILABLE of the
// attempt whose retry it was waiting for; a call whose deadline passes
// during an attempt ends with DEADLINE_EXCEEDED.
func TestCanceledCall(t *testing.T) {
	for _, hedged := range []bool{false, true} {
		t.Run(map[bool]string{false: "unary", true: "hedged"}[hedged], func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			ic := &retrygrpc.Interceptor{
				Policy: backoff.Policy{Initial: time.Hour, Max: time.Hour, Retries: 3},
				// The caller gives up while the retry waits.
				OnRetry: func(context.Context, retrygrpc.Event) { cancel() },
			}
			if hedged {
				ic.Hedger = &hedge.Hedger{After: time.Hour}
				ic.Idempotent = retrygrpc.Methods(grpctest.Unary)
			}
			srv, cc := setup(t, ic)
			// Both copies of a hedged attempt fail (the second is sent at
			// once after the first's failure).
			srv.Script(grpctest.Unary, grpctest.Step{Code: codes.Unavailable}, grpctest.Step{Code: codes.Unavailable})
			_, err := grpctest.CallUnary(ctx, cc, "req")
			if status.Code(err) != codes.Canceled || !errors.Is(err, retry.ErrCanceled) || !errors.Is(err, context.Canceled) {
				t.Errorf("err %v with code %v; want CANCELED, matching retry.ErrCanceled and context.Canceled", err, status.Code(err))
			}
		})
	}
}

// TestDeadlineShortensWait checks that a policy's wait that would end after
// the call's deadline is shortened so that one more attempt starts before
// it, with AttemptTimeout (or backoff.DeadlineReserve without one) left,
// rather than the call giving up a whole wait early.
func TestDeadlineShortensWait(t *testing.T) {
	for _, timeout := range []time.Duration{0, 400 * time.Millisecond} {
		t.Run(fmt.Sprint("AttemptTimeout ", timeout), func(t *testing.T) {
			// A first wait of 10 s, far past the 1 s deadline.
			p := backoff.Policy{Initial: 10 * time.Second, Retries: backoff.UntilDeadline, Jitter: backoff.NoJitter}
			ic := &retrygrpc.Interceptor{Policy: p, AttemptTimeout: timeout}
			srv, cc := setup(t, ic)
			srv.Script(grpctest.Unary, grpctest.Step{Code: codes.Unavailable}, grpctest.Step{})
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			dl, _ := ctx.Deadline()
			reserve := timeout
			if reserve == 0 {
				reserve = backoff.DeadlineReserve
			}
			reply, err := grpctest.CallUnary(ctx, cc, "req")
			if err != nil || reply != "attempt 2" {
				t.Fatalf("got %q, %v: want the second attempt's reply, before the deadline", reply, err)
			}
			// The second attempt started at the deadline minus the reserve,
			// not earlier (the wait was shortened no more than needed).
			if left := time.Until(dl); left > reserve {
				t.Errorf("returned %v before the deadline, want at most the reserve, %v", left, reserve)
			}
		})
	}
}
