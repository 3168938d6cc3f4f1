package retrygrpc_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

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

// TestShedMetadataSent: a unary call whose context carries a criticality
// sends it, with the attempt number, on each attempt.
func TestShedMetadataSent(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	record := grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		mu.Lock()
		seen = append(seen, strings.Join(md.Get(retrygrpc.CriticalityKey), ",")+" "+strings.Join(md.Get(retrygrpc.AttemptKey), ","))
		mu.Unlock()
		return h(ctx, req)
	})
	srv := grpctest.Start(t, record)
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
	if !slices.Equal(seen, want) {
		t.Errorf("metadata of the attempts %q, want %q", seen, want)
	}
}
