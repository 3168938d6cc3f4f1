package retrygrpc_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/hedge"
	"github.com/again-go/again/limiter"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retrygrpc"
	"github.com/again-go/again/retrygrpc/grpctest"
)

// byMethod keys the limits by method, so that a test can reach them.
func byMethod(_ *grpc.ClientConn, method string) string { return method }

func inFlight(t *testing.T, g *limiter.Group, key string) int {
	t.Helper()
	l, err := g.Get(key)
	if err != nil {
		t.Fatal(err)
	}
	return l.Snapshot().InFlight
}

// TestLimitRefusesLocally: an attempt over the limit is not sent and ends
// the call at once with code UNAVAILABLE, matching limiter.ErrLimited,
// with no budget spent.
func TestLimitRefusesLocally(t *testing.T) {
	budget := &retry.TokenBucket{}
	g := &limiter.Group{Config: limiter.Config{Limit: 1}}
	ic := &retrygrpc.Interceptor{Policy: backoff.Policy{Initial: time.Millisecond, Retries: 3},
		Budget: budget, Limits: g, LimitKey: byMethod}
	srv, cc := setup(t, ic)
	l, _ := g.Get(grpctest.Unary)
	p, _ := l.Acquire(t.Context())
	tokens := budget.Tokens()
	_, err := grpctest.CallUnary(t.Context(), cc, "req")
	var le *retrygrpc.LimitedError
	if !errors.Is(err, limiter.ErrLimited) || !errors.As(err, &le) || status.Code(err) != codes.Unavailable {
		t.Fatalf("call over the limit: err %v, want a *LimitedError, code UNAVAILABLE, matching limiter.ErrLimited", err)
	}
	if srv.Calls(grpctest.Unary) != 0 || budget.Tokens() != tokens {
		t.Errorf("server saw %d calls, budget %v → %v; want 0, unchanged", srv.Calls(grpctest.Unary), tokens, budget.Tokens())
	}
	p.Release()
	if _, err := grpctest.CallUnary(t.Context(), cc, "req"); err != nil {
		t.Fatalf("call under the limit: %v", err)
	}
	if n := inFlight(t, g, grpctest.Unary); n != 0 {
		t.Errorf("after the call: %d permits out, want 0", n)
	}
}

// TestLimitRetriesTakeTheirOwn: under a limit of 1, a retry gets a permit
// because the failed attempt gave its own back, and an adaptive limit
// learns UNAVAILABLE as a loss.
func TestLimitRetriesTakeTheirOwn(t *testing.T) {
	g := &limiter.Group{Config: limiter.Config{Algorithm: limiter.AIMD{Min: 1, Initial: 1}}}
	ic := &retrygrpc.Interceptor{Policy: backoff.Policy{Initial: time.Millisecond, Retries: 2},
		Limits: g, LimitKey: byMethod}
	srv, cc := setup(t, ic)
	srv.Script(grpctest.Unary, grpctest.Step{Code: codes.Unavailable}, grpctest.Step{})
	if _, err := grpctest.CallUnary(t.Context(), cc, "req"); err != nil {
		t.Fatalf("call: %v, want the retry's success", err)
	}
	l, _ := g.Get(grpctest.Unary)
	// 1 → ⌊0.9⌋, kept at Min 1, then + 1 for the success at 1 in flight.
	if s := l.Snapshot(); s.Limit != 2 || s.InFlight != 0 {
		t.Errorf("after UNAVAILABLE then OK: %+v, want limit 2, none in flight", s)
	}
}

// TestLimitStreams: a stream holds its permit until it ends (read to its
// end, or its context ends early), and a stream over the limit is refused.
func TestLimitStreams(t *testing.T) {
	g := &limiter.Group{Config: limiter.Config{Limit: 1}}
	ic := &retrygrpc.Interceptor{Limits: g, LimitKey: byMethod}
	srv, cc := setup(t, ic)
	srv.Script(grpctest.Stream, grpctest.Step{Messages: 2}, grpctest.Step{Messages: 5})
	cs, err := grpctest.OpenStream(t.Context(), cc, "req")
	if err != nil {
		t.Fatal(err)
	}
	if n := inFlight(t, g, grpctest.Stream); n != 1 {
		t.Errorf("open stream: %d permits out, want 1", n)
	}
	if _, err := grpctest.OpenStream(t.Context(), cc, "req"); !errors.Is(err, limiter.ErrLimited) {
		t.Errorf("a second stream over the limit: %v, want limiter.ErrLimited", err)
	}
	if got, err := grpctest.ReceiveAll(cs); err != nil || len(got) != 2 {
		t.Fatalf("ReceiveAll = %v, %v; want 2 messages", got, err)
	}
	if n := inFlight(t, g, grpctest.Stream); n != 0 {
		t.Errorf("stream read to its end: %d permits out, want 0", n)
	}
	// A stream whose caller stops after one message and cancels.
	ctx, cancel := context.WithCancel(t.Context())
	cs, err = grpctest.OpenStream(ctx, cc, "req")
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.RecvMsg(new(wrapperspb.StringValue)); err != nil {
		t.Fatal(err)
	}
	cancel()
	waitFor(t, func() bool { return inFlight(t, g, grpctest.Stream) == 0 })
}

// TestLimitHedges: a hedge takes a permit of its own; under a limit of 1
// it finds none and is not sent, and the first copy goes on; under 2 it
// is sent and wins, and the loser's permit comes back.
func TestLimitHedges(t *testing.T) {
	for _, c := range []struct {
		limit int
		calls int
		err   codes.Code
	}{{1, 1, codes.DeadlineExceeded}, {2, 2, codes.OK}} {
		g := &limiter.Group{Config: limiter.Config{Limit: c.limit}}
		ic := &retrygrpc.Interceptor{Policy: backoff.Policy{Retries: backoff.NoRetries},
			Hedger: &hedge.Hedger{After: 10 * time.Millisecond}, Idempotent: retrygrpc.Methods(grpctest.Unary),
			Limits: g, LimitKey: byMethod}
		srv, cc := setup(t, ic)
		srv.Script(grpctest.Unary, stall, grpctest.Step{})
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		_, err := grpctest.CallUnary(ctx, cc, "req")
		cancel()
		if status.Code(err) != c.err || srv.Calls(grpctest.Unary) != c.calls {
			t.Errorf("limit %d: err %v, %d calls; want code %v, %d calls", c.limit, err, srv.Calls(grpctest.Unary), c.err, c.calls)
		}
		waitFor(t, func() bool { return inFlight(t, g, grpctest.Unary) == 0 })
	}
}

// TestLimitsObservable: the Interceptor's Limits, a limiter.Group, shows
// each target's calls as they happen, which is what a metrics reader such
// as otelagain's Telemetry.Limits reports (per key, from Group.Range and
// Limiter.Snapshot): the call in flight while the server holds it, the
// call refused beside it, and nothing in flight once it ended.
func TestLimitsObservable(t *testing.T) {
	g := &limiter.Group{Config: limiter.Config{Limit: 1}}
	ic := &retrygrpc.Interceptor{Limits: g}
	entered := make(chan struct{})
	srv := grpctest.Start(t, grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		close(entered)
		return h(ctx, req)
	}))
	srv.Script(grpctest.Unary, grpctest.Step{Stall: true})
	cc := srv.Dial(t, ic.DialOptions()...)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { _, err := grpctest.CallUnary(ctx, cc, "held"); done <- err }()
	<-entered
	if _, err := grpctest.CallUnary(t.Context(), cc, "refused"); !errors.Is(err, limiter.ErrLimited) {
		t.Errorf("a second call beside the held one: %v, want a refusal matching limiter.ErrLimited", err)
	}
	snapshots := func() map[string]limiter.Stats {
		m := map[string]limiter.Stats{}
		g.Range(func(key string, l *limiter.Limiter) bool { m[key] = l.Snapshot(); return true })
		return m
	}
	want := limiter.Stats{Limit: 1, InFlight: 1, Refused: 1}
	if got := snapshots(); len(got) != 1 || got[cc.Target()] != want {
		t.Errorf("Limits while a call is held: %+v, want {%s: %+v}", got, cc.Target(), want)
	}
	cancel()
	<-done
	want.InFlight = 0
	if got := snapshots(); got[cc.Target()] != want {
		t.Errorf("Limits after the held call ended: %+v, want {%s: %+v}", got, cc.Target(), want)
	}
}
