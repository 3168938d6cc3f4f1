package retrygrpc_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"

	"github.com/again-go/again/retrygrpc"
	"github.com/again-go/again/retrygrpc/grpctest"
)

// BenchmarkUnary measures a successful unary call on a bare connection and
// through an Interceptor: the difference is what retrying adds to a call
// that needs no retry.
func BenchmarkUnary(b *testing.B) {
	srv := grpctest.Start(b)
	for _, c := range []struct {
		name string
		opts []grpc.DialOption
	}{
		{"bare", []grpc.DialOption{grpc.WithDisableRetry()}},
		{"interceptor", (&retrygrpc.Interceptor{}).DialOptions()},
	} {
		b.Run(c.name, func(b *testing.B) {
			cc := srv.Dial(b, c.opts...)
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
