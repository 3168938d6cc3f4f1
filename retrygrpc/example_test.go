package retrygrpc_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
	"github.com/again-go/again/hedge"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retrygrpc"
	"github.com/again-go/again/retrygrpc/grpctest"
)

// The recommended setup: one Interceptor per dependency, installed with
// its DialOptions, which also turn grpc-go's own retries off.
func Example() {
	srv, err := grpctest.NewServer() // a real gRPC server on loopback
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Stop()
	srv.Script(grpctest.Unary,
		grpctest.Step{Code: codes.Unavailable},
		grpctest.Step{Code: codes.ResourceExhausted, Pushback: []string{"10"}},
	)

	ic := &retrygrpc.Interceptor{
		Policy:   backoff.Policy{Initial: 10 * time.Millisecond, Retries: 4},
		Budget:   &retry.TokenBucket{},
		Breakers: &breaker.Group{},
		OnRetry: func(_ context.Context, e retrygrpc.Event) {
			fmt.Printf("attempt %d of %s failed with %v; retrying\n", e.Attempt, e.Method, e.Code)
		},
	}
	conn, err := grpc.NewClient(srv.Addr, append(ic.DialOptions(),
		grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reply, err := grpctest.CallUnary(ctx, conn, "hello")
	fmt.Println(reply, err)
	// Output:
	// attempt 1 of /grpctest.Test/Unary failed with Unavailable; retrying
	// attempt 2 of /grpctest.Test/Unary failed with ResourceExhausted; retrying
	// attempt 3 <nil>
}

// A call whose retries ran out returns a *retry.Error saying why, which
// still carries the last status code.
func Example_errors() {
	srv, err := grpctest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Stop()
	for range 3 {
		srv.Script(grpctest.Unary, grpctest.Step{Code: codes.Unavailable})
	}

	ic := &retrygrpc.Interceptor{Policy: backoff.Policy{Initial: time.Millisecond, Retries: 2}}
	conn, err := grpc.NewClient(srv.Addr, append(ic.DialOptions(),
		grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	_, err = grpctest.CallUnary(context.Background(), conn, "hello")
	var re *retry.Error
	fmt.Println(status.Code(err), errors.Is(err, retry.ErrExhausted), errors.As(err, &re) && re.Attempts == 3)
	// Output: Unavailable true true
}

// Hedging an idempotent method: the first copy stalls, a hedge sent after
// the delay answers, and the stalled copy is canceled.
func ExampleInterceptor_hedging() {
	srv, err := grpctest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Stop()
	srv.Script(grpctest.Unary, grpctest.Step{Stall: true})

	ic := &retrygrpc.Interceptor{
		Policy:     backoff.Policy{Retries: backoff.NoRetries}, // as A6: hedging instead of retries
		Hedger:     &hedge.Hedger{After: 10 * time.Millisecond, Budget: &retry.TokenBucket{TokenRatio: 0.1}},
		Idempotent: retrygrpc.Methods(grpctest.Unary),
		OnSuccess: func(_ context.Context, e retrygrpc.Event) {
			fmt.Printf("%s succeeded with %d hedge(s)\n", e.Method, e.Hedges)
		},
	}
	conn, err := grpc.NewClient(srv.Addr, append(ic.DialOptions(),
		grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	reply, err := grpctest.CallUnary(context.Background(), conn, "hello")
	fmt.Println(reply, err)
	// Output:
	// /grpctest.Test/Unary succeeded with 1 hedge(s)
	// attempt 2 <nil>
}

// A Google-style API answers RESOURCE_EXHAUSTED with a google.rpc.RetryInfo
// status detail; the retry waits its retry_delay.
func ExampleInterceptor_retryInfo() {
	srv, err := grpctest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Stop()
	srv.Script(grpctest.Unary, grpctest.Step{
		Code:      codes.ResourceExhausted,
		RetryInfo: &errdetails.RetryInfo{RetryDelay: durationpb.New(30 * time.Millisecond)},
	})

	ic := &retrygrpc.Interceptor{
		Policy: backoff.Policy{Initial: 10 * time.Millisecond, Retries: 2},
		OnRetry: func(_ context.Context, e retrygrpc.Event) {
			fmt.Printf("%v; retrying in %v (RetryInfo: %v)\n", e.Code, e.Delay, e.Pushback.RetryInfo)
		},
	}
	conn, err := grpc.NewClient(srv.Addr, append(ic.DialOptions(),
		grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	reply, err := grpctest.CallUnary(context.Background(), conn, "hello")
	fmt.Println(reply, err)
	// Output:
	// ResourceExhausted; retrying in 30ms (RetryInfo: true)
	// attempt 2 <nil>
}
