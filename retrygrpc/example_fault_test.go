package retrygrpc_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/fault"
	"github.com/again-go/again/retrygrpc"
	"github.com/again-go/again/retrygrpc/grpctest"
)

// Server interceptors that fail a method's first two calls, one with a
// pushback, in front of a server that knows nothing of them.
func ExampleFaultInjector() {
	fi := &retrygrpc.FaultInjector{Faults: []retrygrpc.Fault{
		{Fault: fault.Fault{Times: 1, Match: fault.Match{Path: grpctest.Unary}}},
		{Fault: fault.Fault{Skip: 1, Times: 1}, Code: codes.ResourceExhausted, Pushback: "10"},
	}}
	srv, err := grpctest.NewServer(fi.ServerOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Stop()

	ic := &retrygrpc.Interceptor{
		Policy: backoff.Policy{Initial: 10 * time.Millisecond, Retries: 4},
		OnRetry: func(_ context.Context, e retrygrpc.Event) {
			fmt.Printf("attempt %d failed with %v, pushback %v\n", e.Attempt, e.Code, e.Pushback.Wait)
		},
	}
	conn, err := grpc.NewClient(srv.Addr, append(ic.DialOptions(),
		grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	reply, err := grpctest.CallUnary(context.Background(), conn, "hello")
	fmt.Println(reply, err, fi.Injector().Injected(fault.Status))
	// Output:
	// attempt 1 failed with Unavailable, pushback 0s
	// attempt 2 failed with ResourceExhausted, pushback 10ms
	// attempt 1 <nil> 2
}
