package retrygrpc_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/again-go/again/hedge"
	"github.com/again-go/again/limiter"
	"github.com/again-go/again/retrygrpc"
	"github.com/again-go/again/retrygrpc/grpctest"
	"github.com/again-go/again/shed"
)

type zeroDraw struct{}

func (zeroDraw) Float64() float64 { return 0 }

// shedSetup starts a test server behind a ShedServer of one permit and no
// queue, whose Retry-After is 1s, and a call holding its permit (a stalled
// one) until the returned release is called.
func shedSetup(t *testing.T, method string) (srv *grpctest.Server, release func()) {
	t.Helper()
	s, err := shedNew(shed.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ss := &retrygrpc.ShedServer{Shedder: s}
	// entered is closed when the first call reaches the handler, past the
	// ShedServer.
	entered := make(chan struct{})
	var once sync.Once
	enter := func() { once.Do(func() { close(entered) }) }
	opts := append(ss.ServerOptions(),
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			enter()
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			enter()
			return h(srv, ss)
		}))
	srv = grpctest.Start(t, opts...)
	srv.Script(method, grpctest.Step{Stall: true})
	holder := srv.Dial(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if method == grpctest.Unary {
			_, _ = grpctest.CallUnary(ctx, holder, "hold")
		} else if cs, err := grpctest.OpenStream(ctx, holder, "hold"); err == nil {
			_, _ = grpctest.ReceiveAll(cs)
		}
	}()
	<-entered
	var rel sync.Once
	release = func() { rel.Do(func() { cancel(); <-done }) }
	t.Cleanup(release)
	return srv, release
}

func shedNew(cfg shed.Config) (*shed.Shedder, error) {
	cfg.Limit, cfg.MaxQueue, cfg.Rand = 1, -1, zeroDraw{}
	return shed.New(cfg)
}

func TestShedServerRefusesWithPushback(t *testing.T) {
	for _, method := range []string{grpctest.Unary, grpctest.Stream} {
		t.Run(method, func(t *testing.T) {
			srv, _ := shedSetup(t, method)
			cc := srv.Dial(t)
			var trailer metadata.MD
			ctx := metadata.AppendToOutgoingContext(t.Context(), retrygrpc.CriticalityKey, "SHEDDABLE")
			var err error
			if method == grpctest.Unary {
				_, err = grpctest.CallUnary(ctx, cc, "hello", grpc.Trailer(&trailer))
			} else {
				var cs grpc.ClientStream
				if cs, err = grpctest.OpenStream(ctx, cc, "hello"); err == nil {
					_, err = grpctest.ReceiveAll(cs)
					trailer = cs.Trailer()
				}
			}
			if status.Code(err) != codes.ResourceExhausted {
				t.Errorf("a call at the limit: %v, want RESOURCE_EXHAUSTED", err)
			}
			if got := trailer.Get(retrygrpc.PushbackKey); len(got) != 1 || got[0] != "1000" {
				t.Errorf("%s trailer = %q, want [\"1000\"]", retrygrpc.PushbackKey, got)
			}
		})
	}
}

// TestShedServerPushbackObeyed: retrygrpc's client waits the pushback a
// shed call gets, and its retry is served once the permit is free.
func TestShedServerPushbackObeyed(t *testing.T) {
	srv, release := shedSetup(t, grpctest.Unary)
	var events []retrygrpc.Event
	ic := &retrygrpc.Interceptor{Policy: fast, OnRetry: func(_ context.Context, e retrygrpc.Event) {
		events = append(events, e)
		release()
	}}
	cc := srv.Dial(t, ic.DialOptions()...)
	start := time.Now()
	_, err := grpctest.CallUnary(t.Context(), cc, "hello")
	took := time.Since(start)
	if err != nil {
		t.Fatalf("the call through retrygrpc: %v, want success after the pushback", err)
	}
	if len(events) != 1 || !events[0].Pushback.Present || events[0].Pushback.Wait != time.Second || events[0].Delay != time.Second {
		t.Fatalf("retries %+v, want one after a 1s pushback, waiting 1s", events)
	}
	if took < time.Second {
		t.Errorf("the call took %v, want at least the 1s pushback", took)
	}
}

// shedSeen records, for each call the server receives, the class and
// attempt metadata it carries, as "CLASS N".
type shedSeen struct {
	mu   sync.Mutex
	seen []string
}

func (s *shedSeen) record(ctx context.Context) {
	md, _ := metadata.FromIncomingContext(ctx)
	s.mu.Lock()
	s.seen = append(s.seen, strings.Join(md.Get(retrygrpc.CriticalityKey), ",")+" "+strings.Join(md.Get(retrygrpc.AttemptKey), ","))
	s.mu.Unlock()
}

func (s *shedSeen) get() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

// options returns server options that record the metadata of unary calls
// and streams.
func (s *shedSeen) options() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			s.record(ctx)
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			s.record(ss.Context())
			return h(srv, ss)
		}),
	}
}

// TestShedMetadataSent: a unary call whose context carries a criticality
// sends it, with the attempt number, on each attempt.
func TestShedMetadataSent(t *testing.T) {
	var rec shedSeen
	srv := grpctest.Start(t, rec.options()...)
	srv.Script(grpctest.Unary, grpctest.Step{Code: codes.Unavailable}, grpctest.Step{}, grpctest.Step{})
	ic := &retrygrpc.Interceptor{Policy: fast}
	cc := srv.Dial(t, ic.DialOptions()...)
	if _, err := grpctest.CallUnary(shed.WithCriticality(t.Context(), shed.SheddablePlus), cc, "hello"); err != nil {
		t.Fatal(err)
	}
	if _, err := grpctest.CallUnary(t.Context(), cc, "plain"); err != nil {
		t.Fatal(err)
	}
	want := []string{"SHEDDABLE_PLUS 1", "SHEDDABLE_PLUS 2", " "}
	if seen := rec.get(); !slices.Equal(seen, want) {
		t.Errorf("metadata of the attempts %q, want %q", seen, want)
	}
}

// TestShedMetadataSentByStreams: a stream whose context carries a
// criticality sends it and the attempt number each time it is opened, a
// retried one too, server-streaming or bidirectional; a stream without
// one sends neither.
func TestShedMetadataSentByStreams(t *testing.T) {
	for _, method := range []string{grpctest.Stream, grpctest.Bidi} {
		t.Run(method, func(t *testing.T) {
			var rec shedSeen
			srv := grpctest.Start(t, rec.options()...)
			srv.Script(method, grpctest.Step{Code: codes.Unavailable}, grpctest.Step{Messages: 1}, grpctest.Step{Messages: 1})
			ic := &retrygrpc.Interceptor{Policy: fast}
			cc := srv.Dial(t, ic.DialOptions()...)
			for _, ctx := range []context.Context{shed.WithCriticality(t.Context(), shed.Sheddable), t.Context()} {
				var cs grpc.ClientStream
				var err error
				if method == grpctest.Stream {
					cs, err = grpctest.OpenStream(ctx, cc, "hello")
				} else if cs, err = grpctest.OpenBidi(ctx, cc); err == nil {
					err = cs.CloseSend()
				}
				if err != nil {
					t.Fatal(err)
				}
				if got, err := grpctest.ReceiveAll(cs); err != nil || len(got) != 1 {
					t.Fatalf("the stream's messages %q, %v; want one after a retry", got, err)
				}
			}
			want := []string{"SHEDDABLE 1", "SHEDDABLE 2", " "}
			if seen := rec.get(); !slices.Equal(seen, want) {
				t.Errorf("metadata of the streams opened %q, want %q", seen, want)
			}
		})
	}
}

// TestShedMetadataSentByHedges: each copy of a hedged attempt sends the
// call's criticality and the retry loop's attempt number, as retryhttp's
// hedges do: a hedge is not a retry.
func TestShedMetadataSentByHedges(t *testing.T) {
	var rec shedSeen
	srv := grpctest.Start(t, rec.options()...)
	srv.Script(grpctest.Unary, grpctest.Step{Stall: true}, grpctest.Step{})
	ic := &retrygrpc.Interceptor{Policy: fast, Hedger: &hedge.Hedger{After: 10 * time.Millisecond},
		Idempotent: retrygrpc.Methods(grpctest.Unary)}
	cc := srv.Dial(t, ic.DialOptions()...)
	if _, err := grpctest.CallUnary(shed.WithCriticality(t.Context(), shed.CriticalPlus), cc, "hello"); err != nil {
		t.Fatal(err)
	}
	want := []string{"CRITICAL_PLUS 1", "CRITICAL_PLUS 1"}
	if seen := rec.get(); !slices.Equal(seen, want) {
		t.Errorf("metadata of the copies %q, want %q (the stalled copy and the hedge)", seen, want)
	}
}

// A call whose client went away while it was served is a drop for an
// adaptive limit (Gradient2 halves); one served to the end, or that
// panicked, is not.
func TestShedServerAbandoned(t *testing.T) {
	l, s, srv := adaptiveShedServer(t)
	info := &grpc.UnaryServerInfo{FullMethod: "/test.Svc/Call"}
	served := func(context.Context, any) (any, error) { return "ok", nil }
	if _, err := srv.Unary(context.Background(), nil, info, served); err != nil || l.Limit() != 8 {
		t.Fatalf("a call served: %v, limit %d; want nil, 8", err, l.Limit())
	}
	func() {
		defer func() { _ = recover() }()
		_, _ = srv.Unary(context.Background(), nil, info, func(context.Context, any) (any, error) { panic("handler bug") })
	}()
	if got := l.Limit(); got != 8 {
		t.Errorf("limit after a panic = %d, want 8 (no sample)", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, _ = srv.Unary(ctx, nil, info, func(context.Context, any) (any, error) { cancel(); return nil, ctx.Err() })
	if got := l.Limit(); got != 4 {
		t.Errorf("limit after a client gone = %d, want 4 (halved)", got)
	}
	if st := s.Snapshot(); st.InFlight != 0 {
		t.Errorf("%d in flight at the end, want 0", st.InFlight)
	}
}

// A call canceled by its client well before its deadline (grpc-timeout,
// the incoming context's deadline), as a hedge's losing copy is, is no
// drop: the limit stays. One whose deadline passed while it was served
// is a drop as before: the limit halves.
func TestShedServerCanceledBeforeItsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, s, srv := adaptiveShedServer(t)
		info := &grpc.UnaryServerInfo{FullMethod: "/test.Svc/Call"}
		untilGone := func(ctx context.Context, _ any) (any, error) { <-ctx.Done(); return nil, ctx.Err() }

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		time.AfterFunc(10*time.Millisecond, cancel) // the other copy answered
		_, _ = srv.Unary(ctx, nil, info, untilGone)
		if got := l.Limit(); got != 8 {
			t.Errorf("limit after a call canceled at 10ms of its 1s = %d, want 8 (no drop)", got)
		}

		ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, _ = srv.Unary(ctx, nil, info, untilGone)
		if got := l.Limit(); got != 4 {
			t.Errorf("limit after a call whose 100ms deadline passed = %d, want 4 (halved)", got)
		}
		if st := s.Snapshot(); st.InFlight != 0 {
			t.Errorf("%d in flight at the end, want 0", st.InFlight)
		}
	})
}

// adaptiveShedServer returns a ShedServer whose Shedder's limit is a
// Gradient2 starting at 8.
func adaptiveShedServer(t *testing.T) (*limiter.Limiter, *shed.Shedder, *retrygrpc.ShedServer) {
	t.Helper()
	l, err := limiter.New(limiter.Config{Algorithm: limiter.Gradient2{Initial: 8, Min: 1}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := shed.New(shed.Config{Adaptive: l})
	if err != nil {
		t.Fatal(err)
	}
	return l, s, &retrygrpc.ShedServer{Shedder: s}
}

// TestShedDeadlineSentByHedges: each copy of a hedged call carries the
// caller's deadline (grpc-timeout), so that a ShedServer tells the losing
// copy's cancel from a timeout.
func TestShedDeadlineSentByHedges(t *testing.T) {
	var mu sync.Mutex
	var left []time.Duration
	srv := grpctest.Start(t, grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		var d time.Duration // none: 0
		if dl, ok := ctx.Deadline(); ok {
			d = time.Until(dl)
		}
		mu.Lock()
		left = append(left, d)
		mu.Unlock()
		return h(ctx, req)
	}))
	srv.Script(grpctest.Unary, grpctest.Step{Stall: true}, grpctest.Step{})
	ic := &retrygrpc.Interceptor{Policy: fast, Hedger: &hedge.Hedger{After: 10 * time.Millisecond},
		Idempotent: retrygrpc.Methods(grpctest.Unary)}
	cc := srv.Dial(t, ic.DialOptions()...)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := grpctest.CallUnary(ctx, cc, "hello"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(left) != 2 {
		t.Fatalf("copies = %d, want 2 (the stalled copy and the hedge)", len(left))
	}
	for i, d := range left {
		if d <= 0 || d > time.Minute {
			t.Errorf("copy %d: time left before its deadline at the server = %v, want up to a minute", i+1, d)
		}
	}
}
