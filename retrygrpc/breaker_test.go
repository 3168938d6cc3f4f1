package retrygrpc_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retrygrpc"
	"github.com/again-go/again/retrygrpc/grpctest"
)

// tripAfterTwo trips after two failures in a row and stays open for an
// hour: long enough that no test sees it admit a probe by itself.
var tripAfterTwo = breaker.Config{FailureRatio: -1, ConsecutiveFailures: 2, Open: backoff.Policy{Initial: time.Hour, Max: time.Hour}}

// TestBreakerFailsFast checks that once a target's breaker is open, a call
// fails at once with an error matching breaker.ErrOpen and the status
// UNAVAILABLE, without reaching the server and without spending budget.
func TestBreakerFailsFast(t *testing.T) {
	budget := &retry.TokenBucket{}
	ic := &retrygrpc.Interceptor{
		Policy:   backoff.Policy{Initial: time.Millisecond, Retries: backoff.NoRetries},
		Budget:   budget,
		Breakers: &breaker.Group{Config: tripAfterTwo},
	}
	srv, cc := setup(t, ic)
	srv.Script(grpctest.Unary, grpctest.Step{Code: codes.Unavailable}, grpctest.Step{Code: codes.Unavailable})
	for range 2 {
		if _, err := grpctest.CallUnary(t.Context(), cc, "req"); status.Code(err) != codes.Unavailable {
			t.Fatalf("err %v, want the server's UNAVAILABLE", err)
		}
	}
	tokens := budget.Tokens()
	_, err := grpctest.CallUnary(t.Context(), cc, "req")
	if !errors.Is(err, breaker.ErrOpen) || status.Code(err) != codes.Unavailable {
		t.Fatalf("err %v, want one matching breaker.ErrOpen with code UNAVAILABLE", err)
	}
	var oe retrygrpc.OpenError
	if !errors.As(err, &oe) || oe.Wait <= 0 {
		t.Errorf("err %v: want a retrygrpc.OpenError saying how long until a probe", err)
	}
	if got := srv.Calls(grpctest.Unary); got != 2 {
		t.Errorf("server saw %d calls, want 2: the open breaker must not let the third through", got)
	}
	if budget.Tokens() != tokens {
		t.Errorf("the rejected call changed the budget from %v to %v tokens", tokens, budget.Tokens())
	}
}

// TestBreakerTripsDuringRetries checks that retries stop at a breaker that
// the call's own failures opened, failing fast rather than waiting.
func TestBreakerTripsDuringRetries(t *testing.T) {
	ic := &retrygrpc.Interceptor{Policy: fast, Breakers: &breaker.Group{Config: tripAfterTwo}}
	srv, cc := setup(t, ic)
	srv.Script(grpctest.Unary, grpctest.Step{Code: codes.Unavailable}, grpctest.Step{Code: codes.Unavailable})
	_, err := grpctest.CallUnary(t.Context(), cc, "req")
	if !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("err %v, want breaker.ErrOpen", err)
	}
	if got := srv.Calls(grpctest.Unary); got != 2 {
		t.Errorf("server saw %d calls, want 2", got)
	}
}

// TestBreakerKey checks per-method breakers: an open breaker of one method
// leaves the others' calls alone.
func TestBreakerKey(t *testing.T) {
	ic := &retrygrpc.Interceptor{
		Policy:     backoff.Policy{Retries: backoff.NoRetries},
		Breakers:   &breaker.Group{Config: tripAfterTwo},
		BreakerKey: func(_ *grpc.ClientConn, method string) string { return method },
	}
	srv, cc := setup(t, ic)
	srv.Script(grpctest.Unary, grpctest.Step{Code: codes.Unavailable}, grpctest.Step{Code: codes.Unavailable})
	for range 3 {
		_, _ = grpctest.CallUnary(t.Context(), cc, "req")
	}
	if got := srv.Calls(grpctest.Unary); got != 2 {
		t.Fatalf("server saw %d unary calls, want 2 before the breaker opened", got)
	}
	cs, err := grpctest.OpenStream(t.Context(), cc, "req")
	if err != nil {
		t.Fatalf("stream on another method: %v", err)
	}
	if _, err := grpctest.ReceiveAll(cs); err != nil {
		t.Errorf("stream on another method: %v", err)
	}
	var keys []string
	ic.Breakers.Range(func(key string, _ *breaker.Breaker) bool { keys = append(keys, key); return true })
	if len(keys) != 2 {
		t.Errorf("breakers for %q, want one per method", keys)
	}
}

// TestBreakerWait checks the opt-in wait: with BreakerWait, a call meeting
// an open breaker waits for its probe and succeeds.
func TestBreakerWait(t *testing.T) {
	cfg := tripAfterTwo
	cfg.Open = backoff.Policy{Initial: 20 * time.Millisecond, Max: 20 * time.Millisecond}
	ic := &retrygrpc.Interceptor{
		Policy:      backoff.Policy{Initial: time.Millisecond, Retries: 1},
		Breakers:    &breaker.Group{Config: cfg},
		BreakerWait: time.Minute,
	}
	srv, cc := setup(t, ic)
	srv.Script(grpctest.Unary, grpctest.Step{Code: codes.Unavailable}, grpctest.Step{Code: codes.Unavailable})
	if _, err := grpctest.CallUnary(t.Context(), cc, "req"); status.Code(err) != codes.Unavailable {
		t.Fatalf("first call: %v, want UNAVAILABLE", err)
	}
	// The breaker is open now; this call waits for its probe.
	if _, err := grpctest.CallUnary(t.Context(), cc, "req"); err != nil {
		t.Fatalf("second call: %v, want it to wait for the probe and succeed", err)
	}
	if got := srv.Calls(grpctest.Unary); got != 3 {
		t.Errorf("server saw %d calls, want 3", got)
	}
}

// TestBreakerWaitTooShort checks a BreakerWait shorter than the breaker's
// open period: the call ends at once, without a wait, as without
// BreakerWait, and OnGiveUp says the breaker was open, not that a server
// asked for too long a wait.
func TestBreakerWaitTooShort(t *testing.T) {
	cfg := tripAfterTwo
	cfg.Open = backoff.Policy{Initial: time.Hour, Max: time.Hour}
	var gaveUp []retrygrpc.Event
	ic := &retrygrpc.Interceptor{
		Policy:      backoff.Policy{Initial: time.Millisecond, Retries: 1},
		Breakers:    &breaker.Group{Config: cfg},
		BreakerWait: time.Minute,
		OnGiveUp:    func(_ context.Context, e retrygrpc.Event) { gaveUp = append(gaveUp, e) },
	}
	srv, cc := setup(t, ic)
	srv.Script(grpctest.Unary, grpctest.Step{Code: codes.Unavailable}, grpctest.Step{Code: codes.Unavailable})
	if _, err := grpctest.CallUnary(t.Context(), cc, "req"); status.Code(err) != codes.Unavailable {
		t.Fatalf("first call: %v, want UNAVAILABLE", err)
	}
	gaveUp = nil
	_, err := grpctest.CallUnary(t.Context(), cc, "req")
	if !errors.Is(err, breaker.ErrOpen) || status.Code(err) != codes.Unavailable {
		t.Fatalf("second call: %v, want an error matching breaker.ErrOpen with code UNAVAILABLE", err)
	}
	if len(gaveUp) != 1 || gaveUp[0].Reason != breaker.ErrOpen {
		t.Errorf("OnGiveUp events %+v, want one with Reason breaker.ErrOpen", gaveUp)
	}
	if got := srv.Calls(grpctest.Unary); got != 2 {
		t.Errorf("server saw %d calls, want 2: the rejected call must not reach it", got)
	}
}

// TestBreakerStreamFailsFast checks that streams meet the breaker too.
func TestBreakerStreamFailsFast(t *testing.T) {
	ic := &retrygrpc.Interceptor{Policy: fast, Breakers: &breaker.Group{Config: tripAfterTwo}}
	srv, cc := setup(t, ic)
	srv.Script(grpctest.Stream, grpctest.Step{Code: codes.Unavailable}, grpctest.Step{Code: codes.Unavailable})
	cs, err := grpctest.OpenStream(t.Context(), cc, "req")
	if err == nil {
		_, err = grpctest.ReceiveAll(cs)
	}
	if !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("err %v, want breaker.ErrOpen once the stream's failures opened it", err)
	}
	if _, err := grpctest.OpenStream(t.Context(), cc, "req"); !errors.Is(err, breaker.ErrOpen) {
		t.Errorf("opening a stream at an open breaker: %v, want breaker.ErrOpen", err)
	}
	if got := srv.Calls(grpctest.Stream); got != 2 {
		t.Errorf("server saw %d streams, want 2", got)
	}
}
