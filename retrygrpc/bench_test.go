package retrygrpc_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/again-go/again/hedge"
	"github.com/again-go/again/retrygrpc"
	"github.com/again-go/again/retrygrpc/grpctest"
)

// BenchmarkUnary measures a successful unary call on a bare connection,
// through an Interceptor, and hedged by one whose first copy answers long
// before the hedge delay: the differences are what retrying and hedging
// add to a call that needs neither.
func BenchmarkUnary(b *testing.B) {
	srv := grpctest.Start(b)
	for _, c := range []struct {
		name string
		opts []grpc.DialOption
	}{
		{"bare", []grpc.DialOption{grpc.WithDisableRetry()}},
		{"interceptor", (&retrygrpc.Interceptor{}).DialOptions()},
		{"hedged", (&retrygrpc.Interceptor{
			Hedger:     &hedge.Hedger{After: time.Hour},
			Idempotent: retrygrpc.Methods(grpctest.Unary),
		}).DialOptions()},
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
