package retrygrpc_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
	"github.com/again-go/again/hedge"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retrygrpc"
	"github.com/again-go/again/retrygrpc/grpctest"
)

var stall = grpctest.Step{Stall: true}

// hedged returns an Interceptor that hedges Unary only (no retries, as in
// A6's hedging policy), and counts the hedges sent.
func hedged(h *hedge.Hedger, sent *atomic.Int32) *retrygrpc.Interceptor {
	h.OnHedge = func(e hedge.Event) {
		if !e.Won {
			sent.Add(1)
		}
	}
	return &retrygrpc.Interceptor{
		Policy:     backoff.Policy{Retries: backoff.NoRetries},
		Hedger:     h,
		Idempotent: retrygrpc.Methods(grpctest.Unary),
	}
}

// TestHedge checks A6's rules for hedged unary calls against the server:
// the first success wins and the loser is canceled, a code that is retried
// sends the next hedge at once, a code that is not ends the call, and only
// idempotent methods are hedged.
func TestHedge(t *testing.T) {
	tests := []struct {
		name       string
		hedger     func() *hedge.Hedger
		idempotent bool
		timeout    time.Duration // of the call; 0: none
		steps      []grpctest.Step
		wantReply  string
		wantCode   codes.Code
		wantCalls  int
		wantHedges int32
		canceled   int // stalled copies that must see their cancellation
	}{
		{"a hedge wins over a stalled copy", func() *hedge.Hedger { return &hedge.Hedger{After: 10 * time.Millisecond} }, true, 0,
			[]grpctest.Step{stall, {}}, "attempt 2", codes.OK, 2, 1, 1},
		{"a retried code sends the next hedge at once", func() *hedge.Hedger { return &hedge.Hedger{After: time.Hour, MaxHedges: 2} }, true, 0,
			[]grpctest.Step{{Code: codes.Unavailable}, {}}, "attempt 2", codes.OK, 2, 1, 0},
		{"a code not retried ends the call", func() *hedge.Hedger { return &hedge.Hedger{After: 10 * time.Millisecond} }, true, 0,
			[]grpctest.Step{stall, {Code: codes.Internal}}, "", codes.Internal, 2, 1, 1},
		{"every copy fails", func() *hedge.Hedger { return &hedge.Hedger{After: time.Hour, MaxHedges: 2} }, true, 0,
			[]grpctest.Step{{Code: codes.Unavailable}, {Code: codes.Unavailable}, {Code: codes.Unavailable}}, "", codes.Unavailable, 3, 2, 0},
		{"a negative pushback stops hedging, not the copies in flight", func() *hedge.Hedger { return &hedge.Hedger{After: 100 * time.Millisecond, MaxHedges: 3} }, true, 500 * time.Millisecond,
			[]grpctest.Step{stall, {Code: codes.Unavailable, Pushback: []string{"-1"}}}, "", codes.DeadlineExceeded, 2, 1, 1},
		{"a malformed pushback stops hedging too", func() *hedge.Hedger { return &hedge.Hedger{After: 100 * time.Millisecond, MaxHedges: 3} }, true, 500 * time.Millisecond,
			[]grpctest.Step{stall, {Code: codes.Unavailable, Pushback: []string{"soon"}}}, "", codes.DeadlineExceeded, 2, 1, 1},
		// A6: the next hedge follows the pushback; the slow first copy is
		// not waited for.
		{"a positive pushback delays the next hedge", func() *hedge.Hedger { return &hedge.Hedger{After: 50 * time.Millisecond, MaxHedges: 3} }, true, 20 * time.Second,
			[]grpctest.Step{stall, {Code: codes.Unavailable, Pushback: []string{"300"}}, {}}, "attempt 3", codes.OK, 3, 2, 1},
		{"the hedge budget", func() *hedge.Hedger {
			return &hedge.Hedger{After: 5 * time.Millisecond, MaxHedges: 3, Budget: &retry.TokenBucket{MaxTokens: 4}}
		}, true, 300 * time.Millisecond,
			[]grpctest.Step{stall, stall, stall, stall}, "", codes.DeadlineExceeded, 2, 1, 2},
		{"not idempotent: not hedged", func() *hedge.Hedger { return &hedge.Hedger{After: 5 * time.Millisecond} }, false, 100 * time.Millisecond,
			[]grpctest.Step{stall, {}}, "", codes.DeadlineExceeded, 1, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sent atomic.Int32
			ic := hedged(tt.hedger(), &sent)
			if !tt.idempotent {
				ic.Idempotent = retrygrpc.Methods("/other.Service/")
			}
			srv, cc := setup(t, ic)
			srv.Script(grpctest.Unary, tt.steps...)
			ctx := t.Context()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			reply, err := grpctest.CallUnary(ctx, cc, "req")
			if status.Code(err) != tt.wantCode || reply != tt.wantReply {
				t.Fatalf("got %q, %v: want %q with code %v", reply, err, tt.wantReply, tt.wantCode)
			}
			if got := srv.Calls(grpctest.Unary); got != tt.wantCalls {
				t.Errorf("server saw %d calls, want %d", got, tt.wantCalls)
			}
			if got := sent.Load(); got != tt.wantHedges {
				t.Errorf("%d hedges sent, want %d", got, tt.wantHedges)
			}
			waitFor(t, func() bool { return srv.Canceled(grpctest.Unary) == tt.canceled })
		})
	}
}

// TestHedgePushbackAppliesToAll checks that a pushback on a copy stops the
// attempt's hedging, and that the retry loop then waits what the server
// asked before the next hedged attempt (longer than the policy's first
// delay, which it replaces).
func TestHedgePushbackAppliesToAll(t *testing.T) {
	for _, a := range asks {
		t.Run(a.name, func(t *testing.T) {
			var sent atomic.Int32
			ic := hedged(&hedge.Hedger{After: time.Hour, MaxHedges: 3}, &sent)
			ic.Policy = backoff.Policy{Initial: time.Millisecond, Max: time.Hour, Retries: 1}
			var delays []time.Duration
			ic.OnRetry = func(_ context.Context, e retrygrpc.Event) { delays = append(delays, e.Delay) }
			srv, cc := setup(t, ic)
			srv.Script(grpctest.Unary, a.ask(grpctest.Step{Code: codes.Unavailable}, 5*time.Millisecond))
			reply, err := grpctest.CallUnary(t.Context(), cc, "req")
			if err != nil || reply != "attempt 2" {
				t.Fatalf("got %q, %v: want the retry's reply", reply, err)
			}
			if sent.Load() != 0 {
				t.Errorf("%d hedges sent after the pushback, want 0", sent.Load())
			}
			if len(delays) != 1 || delays[0] != 5*time.Millisecond {
				t.Errorf("waits %v, want the pushback's [5ms]", delays)
			}
		})
	}
}

// TestHedgeBreaker checks that a hedged call meeting an open breaker fails
// fast, as an unhedged one does.
func TestHedgeBreaker(t *testing.T) {
	var sent atomic.Int32
	ic := hedged(&hedge.Hedger{After: time.Hour}, &sent)
	ic.Breakers = &breaker.Group{Config: tripAfterTwo}
	srv, cc := setup(t, ic)
	srv.Script(grpctest.Unary, grpctest.Step{Code: codes.Internal}, grpctest.Step{Code: codes.Unavailable}, grpctest.Step{Code: codes.Unavailable})
	for range 2 {
		_, _ = grpctest.CallUnary(t.Context(), cc, "req")
	}
	_, err := grpctest.CallUnary(t.Context(), cc, "req")
	if !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("err %v, want breaker.ErrOpen", err)
	}
	if got := srv.Calls(grpctest.Unary); got != 3 {
		t.Errorf("server saw %d calls, want 3", got)
	}
}

// TestHedgeCallOptions checks that the caller's Trailer and Peer options
// receive the answer's, without the copies writing them at once (run with
// -race).
func TestHedgeCallOptions(t *testing.T) {
	var sent atomic.Int32
	// The second call's only copy must answer within the delay.
	ic := hedged(&hedge.Hedger{After: 100 * time.Millisecond}, &sent)
	srv, cc := setup(t, ic)
	srv.Script(grpctest.Unary, stall, grpctest.Step{}, grpctest.Step{Code: codes.Unavailable, Pushback: []string{"-1"}})

	var p peer.Peer
	var trailer metadata.MD
	reply, err := grpctest.CallUnary(t.Context(), cc, "req", grpc.Peer(&p), grpc.Trailer(&trailer))
	if err != nil || reply != "attempt 2" {
		t.Fatalf("got %q, %v: want the hedge's reply", reply, err)
	}
	if p.Addr == nil || p.Addr.String() != srv.Addr {
		t.Errorf("peer %v, want %s", p.Addr, srv.Addr)
	}

	_, err = grpctest.CallUnary(t.Context(), cc, "req", grpc.Trailer(&trailer))
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("err %v, want UNAVAILABLE", err)
	}
	if got := trailer.Get(retrygrpc.PushbackKey); len(got) != 1 || got[0] != "-1" {
		t.Errorf("trailer %v, want the failed copy's pushback", trailer)
	}
}

// TestHedgePushbackDelaysTheNextHedge checks A6's timing: a hedge that
// fails with a positive pushback is followed by the next hedge that long
// after, not at once, and not never (the call does not wait for its slow
// first copy).
func TestHedgePushbackDelaysTheNextHedge(t *testing.T) {
	for _, a := range asks {
		t.Run(a.name, func(t *testing.T) {
			var sent atomic.Int32
			h := &hedge.Hedger{After: 50 * time.Millisecond, MaxHedges: 3}
			ic := hedged(h, &sent)
			var at []time.Duration // when each hedge was sent, since the call began
			onHedge := h.OnHedge
			h.OnHedge = func(e hedge.Event) {
				onHedge(e)
				if !e.Won {
					at = append(at, e.Delay)
				}
			}
			srv, cc := setup(t, ic)
			srv.Script(grpctest.Unary, stall, a.ask(grpctest.Step{Code: codes.Unavailable}, 300*time.Millisecond), grpctest.Step{})
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			start := time.Now()
			reply, err := grpctest.CallUnary(ctx, cc, "req")
			took := time.Since(start)
			if err != nil || reply != "attempt 3" {
				t.Fatalf("got %q, %v after %v: want the second hedge's reply", reply, err, took)
			}
			// The first hedge is sent after 50 ms and fails at once; the second
			// must wait its 300 ms.
			if len(at) != 2 || at[1]-at[0] < 300*time.Millisecond {
				t.Errorf("hedges sent at %v; want two, the second at least 300 ms after the first", at)
			}
			if took > 10*time.Second {
				t.Errorf("the call took %v; want it to end with the second hedge, not with the stalled first copy", took)
			}
		})
	}
}
