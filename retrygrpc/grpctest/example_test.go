package grpctest_test

import (
	"context"
	"fmt"
	"log"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/again-go/again/retrygrpc/grpctest"
)

// A server scripted to fail once, then to stream two messages and fail.
func Example() {
	srv, err := grpctest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Stop()
	srv.Script(grpctest.Unary, grpctest.Step{Code: codes.Unavailable, Pushback: []string{"100"}})
	srv.Script(grpctest.Stream, grpctest.Step{Messages: 2, Code: codes.Internal})

	conn, err := grpc.NewClient(srv.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithDisableRetry())
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()

	var trailer metadata.MD
	_, err = grpctest.CallUnary(ctx, conn, "a", grpc.Trailer(&trailer))
	fmt.Println(status.Code(err), trailer["grpc-retry-pushback-ms"])
	reply, err := grpctest.CallUnary(ctx, conn, "b")
	fmt.Println(reply, err)

	cs, err := grpctest.OpenStream(ctx, conn, "c")
	if err != nil {
		log.Fatal(err)
	}
	msgs, err := grpctest.ReceiveAll(cs)
	fmt.Println(msgs, status.Code(err), srv.Calls(grpctest.Unary), srv.Received(grpctest.Unary))
	// Output:
	// Unavailable [100]
	// attempt 2 <nil>
	// [m0 m1] Internal 2 [a b]
}
