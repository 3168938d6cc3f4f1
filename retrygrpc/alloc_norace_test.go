//go:build !race

// The race detector's sync.Pool drops some of what it is given, on
// purpose, so pooled objects are allocated again now and then: these
// counts hold only without it. scripts/test runs them in a step of their
// own (go test -run Alloc, without -race).

package retrygrpc_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"

	"github.com/again-go/again/breaker"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retrygrpc"
)

// TestAllocs checks that the Interceptor's own code allocates nothing on
// the success path, with a budget and a breaker too: the invoker here
// stands for the connection, whose allocations BenchmarkUnary measures.
func TestAllocs(t *testing.T) {
	ok := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil }
	tests := []struct {
		name string
		ic   *retrygrpc.Interceptor
	}{
		{"zero", &retrygrpc.Interceptor{}},
		{"budget and breaker", &retrygrpc.Interceptor{Budget: &retry.TokenBucket{}, Breakers: &breaker.Group{}}},
		{"hooks", &retrygrpc.Interceptor{OnSuccess: func(context.Context, retrygrpc.Event) {}}},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := func() {
				if err := tt.ic.Unary(ctx, "/a.B/C", nil, nil, nil, ok); err != nil {
					t.Fatal(err)
				}
			}
			call() // the first call fills the pool and makes the breaker
			if n := testing.AllocsPerRun(100, call); n != 0 {
				t.Errorf("%v allocations per successful call, want 0", n)
			}
		})
	}
}
