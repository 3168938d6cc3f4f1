package bench

import (
	"context"
	"slices"
	"testing"

	grpcretry "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/retry"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retrygrpc"
	"github.com/again-go/again/retrygrpc/grpctest"
)

// grpcClient is one way of making gRPC calls: a bare connection, or one
// retrying with retrygrpc, go-grpc-middleware v2's retry interceptor or
// grpc-go's own retry policy. Each retries UNAVAILABLE up to 3 times
// without waiting, so that the benchmarks measure the libraries rather
// than sleeping.
type grpcClient struct {
	name string
	opts func() []grpc.DialOption
}

// builtinRetry is grpc-go's retry policy with the same limits; its
// backoff must be positive, so it is a microsecond.
const builtinRetry = `{"methodConfig": [{"name": [{"service": "grpctest.Test"}], "retryPolicy": {
	"maxAttempts": 4, "initialBackoff": "0.000001s", "maxBackoff": "0.000001s",
	"backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE"]}}]}`

var grpcClients = []grpcClient{
	{"grpc", func() []grpc.DialOption { return []grpc.DialOption{grpc.WithDisableRetry()} }},
	{"again", func() []grpc.DialOption {
		ic := &retrygrpc.Interceptor{Policy: backoff.Policy{Initial: -1, Retries: 3, Jitter: backoff.NoJitter}}
		return ic.DialOptions()
	}},
	{"grpcmw", func() []grpc.DialOption {
		// WithMax counts attempts, not retries: 4 is 3 retries.
		opts := []grpcretry.CallOption{grpcretry.WithMax(4), grpcretry.WithCodes(codes.Unavailable), grpcretry.WithBackoff(grpcretry.BackoffLinear(0))}
		return []grpc.DialOption{
			grpc.WithDisableRetry(),
			grpc.WithChainUnaryInterceptor(grpcretry.UnaryClientInterceptor(opts...)),
			grpc.WithChainStreamInterceptor(grpcretry.StreamClientInterceptor(opts...)),
		}
	}},
	{"grpc-builtin", func() []grpc.DialOption { return []grpc.DialOption{grpc.WithDefaultServiceConfig(builtinRetry)} }},
}

// BenchmarkGRPCUnary is the success path: a unary call to a loopback
// server that answers at once. The difference from "grpc" is what each
// retrying client adds to a call.
func BenchmarkGRPCUnary(b *testing.B) {
	srv := grpctest.Start(b)
	for _, c := range grpcClients {
		b.Run(c.name, func(b *testing.B) {
			cc := srv.Dial(b, c.opts()...)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := grpctest.CallUnary(ctx, cc, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGRPCFailTwice is a unary call answered UNAVAILABLE twice, then
// OK: three attempts per call. The bare connection is not measured: it
// does not retry.
func BenchmarkGRPCFailTwice(b *testing.B) {
	srv := grpctest.Start(b)
	fail := grpctest.Step{Code: codes.Unavailable}
	for _, c := range grpcClients[1:] {
		b.Run(c.name, func(b *testing.B) {
			cc := srv.Dial(b, c.opts()...)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				srv.Script(grpctest.Unary, fail, fail)
				if _, err := grpctest.CallUnary(ctx, cc, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestGRPCStreamDuplicates is go-grpc-middleware's known bug (its issue
// 497): a server stream that fails after sending messages is retried from
// the start, so the caller receives those messages twice. retrygrpc and
// grpc-go's own retry stop retrying once a response reached the caller and
// return the failure instead. The test records go-grpc-middleware v2.3.4's
// behaviour as it is: if a later version fixes it, the test says so.
func TestGRPCStreamDuplicates(t *testing.T) {
	tests := map[string]struct {
		wantDuplicates bool
		wantCode       codes.Code
	}{
		"again":        {false, codes.Unavailable},
		"grpc-builtin": {false, codes.Unavailable},
		"grpcmw":       {true, codes.OK},
	}
	for _, c := range grpcClients[1:] {
		t.Run(c.name, func(t *testing.T) {
			want := tests[c.name]
			srv := grpctest.Start(t)
			srv.Script(grpctest.Stream, grpctest.Step{Messages: 3, Code: codes.Unavailable}, grpctest.Step{Messages: 3})
			cc := srv.Dial(t, c.opts()...)
			cs, err := grpctest.OpenStream(t.Context(), cc, "req")
			if err != nil {
				t.Fatal(err)
			}
			got, err := grpctest.ReceiveAll(cs)
			if status.Code(err) != want.wantCode {
				t.Errorf("stream ended with %v, want code %v", err, want.wantCode)
			}
			dup := hasDuplicates(got)
			if dup != want.wantDuplicates {
				t.Errorf("received %q: duplicates %v, want %v", got, dup, want.wantDuplicates)
			}
			if !dup && !slices.Equal(got, []string{"m0", "m1", "m2"}) {
				t.Errorf("received %q, want the first stream's m0, m1, m2", got)
			}
		})
	}
}

// hasDuplicates reports whether a message was received twice: each
// message of the test stream is distinct.
func hasDuplicates(msgs []string) bool {
	seen := map[string]bool{}
	for _, m := range msgs {
		if seen[m] {
			return true
		}
		seen[m] = true
	}
	return false
}
