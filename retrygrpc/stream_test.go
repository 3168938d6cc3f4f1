package retrygrpc_test

import (
	"context"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/again-go/again/retry"
	"github.com/again-go/again/retrygrpc"
	"github.com/again-go/again/retrygrpc/grpctest"
)

// TestStream checks that a server stream is retried only while nothing of
// the response has reached the caller, so that no message ever arrives
// twice, and that the request is sent again on each new stream.
func TestStream(t *testing.T) {
	tests := []struct {
		name      string
		steps     []grpctest.Step
		header    bool // the caller reads the headers before the messages
		want      []string
		wantCode  codes.Code
		wantCalls int
	}{
		{"fails before the first message", []grpctest.Step{{Code: codes.Unavailable}, {Messages: 3}}, false,
			[]string{"m0", "m1", "m2"}, codes.OK, 2},
		{"pushback before the first message", []grpctest.Step{{Code: codes.ResourceExhausted, Pushback: []string{"1"}}, {Messages: 1}}, false,
			[]string{"m0"}, codes.OK, 2},
		{"fails after messages", []grpctest.Step{{Messages: 2, Code: codes.Unavailable}, {Messages: 3}}, false,
			[]string{"m0", "m1"}, codes.Unavailable, 1},
		{"fails after headers the caller read", []grpctest.Step{{Header: true, Code: codes.Unavailable}, {Messages: 1}}, true,
			nil, codes.Unavailable, 1},
		{"fails without headers the caller asked for", []grpctest.Step{{Code: codes.Unavailable}, {Messages: 1}}, true,
			[]string{"m0"}, codes.OK, 2},
		{"code not retried", []grpctest.Step{{Code: codes.Internal}, {Messages: 1}}, false,
			nil, codes.Internal, 1},
		{"exhausted", []grpctest.Step{{Code: codes.Unavailable}, {Code: codes.Unavailable}, {Code: codes.Unavailable}, {Code: codes.Unavailable}}, false,
			nil, codes.Unavailable, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ic := &retrygrpc.Interceptor{Policy: fast}
			srv, cc := setup(t, ic)
			srv.Script(grpctest.Stream, tt.steps...)
			cs, err := grpctest.OpenStream(t.Context(), cc, "req")
			if err != nil {
				t.Fatal(err)
			}
			if tt.header {
				if _, err := cs.Header(); err != nil {
					t.Fatalf("Header: %v", err)
				}
			}
			got, err := grpctest.ReceiveAll(cs)
			if !slices.Equal(got, tt.want) {
				t.Errorf("received %q, want %q", got, tt.want)
			}
			if status.Code(err) != tt.wantCode {
				t.Errorf("stream ended with %v, want %v", err, tt.wantCode)
			}
			if n := srv.Calls(grpctest.Stream); n != tt.wantCalls {
				t.Errorf("server saw %d streams, want %d", n, tt.wantCalls)
			}
			if reqs := srv.Received(grpctest.Stream); len(reqs) != tt.wantCalls || slices.ContainsFunc(reqs, func(r string) bool { return r != "req" }) {
				t.Errorf("server received requests %q, want %d × req", reqs, tt.wantCalls)
			}
		})
	}
}

// TestBidiReplaysSends checks that a bidirectional stream that fails
// before answering is retried with every message the caller sent, and its
// CloseSend.
func TestBidiReplaysSends(t *testing.T) {
	ic := &retrygrpc.Interceptor{Policy: fast}
	srv, cc := setup(t, ic)
	srv.Script(grpctest.Bidi, grpctest.Step{Code: codes.Unavailable}, grpctest.Step{Messages: 1})
	cs, err := grpctest.OpenBidi(t.Context(), cc)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"a", "b"} {
		if err := cs.SendMsg(wrapperspb.String(v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := cs.CloseSend(); err != nil {
		t.Fatal(err)
	}
	got, err := grpctest.ReceiveAll(cs)
	if err != nil || !slices.Equal(got, []string{"m0"}) {
		t.Fatalf("received %q, %v: want [m0], nil", got, err)
	}
	if reqs := srv.Received(grpctest.Bidi); !slices.Equal(reqs, []string{"a", "b", "a", "b"}) {
		t.Errorf("server received %q, want both messages on both streams", reqs)
	}
}

// TestBidiTooMuchToReplay checks that a stream whose caller sent more
// than MaxReplayed messages is not retried: they could not all be sent
// again.
func TestBidiTooMuchToReplay(t *testing.T) {
	ic := &retrygrpc.Interceptor{Policy: fast}
	srv, cc := setup(t, ic)
	srv.Script(grpctest.Bidi, grpctest.Step{Code: codes.Unavailable})
	cs, err := grpctest.OpenBidi(t.Context(), cc)
	if err != nil {
		t.Fatal(err)
	}
	for range retrygrpc.MaxReplayed + 1 {
		if err := cs.SendMsg(wrapperspb.String("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := cs.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := grpctest.ReceiveAll(cs); status.Code(err) != codes.Unavailable {
		t.Fatalf("stream ended with %v, want UNAVAILABLE", err)
	}
	if n := srv.Calls(grpctest.Bidi); n != 1 {
		t.Errorf("server saw %d streams, want 1", n)
	}
}

// TestStreamHooks checks the events of a stream: a retry before its first
// message, then its success, both marked as a stream's, and the budget's
// refund for the success.
func TestStreamHooks(t *testing.T) {
	var got []retrygrpc.Event
	record := func(_ context.Context, e retrygrpc.Event) { got = append(got, e) }
	budget := &retry.TokenBucket{}
	ic := &retrygrpc.Interceptor{Policy: fast, Budget: budget, OnRetry: record, OnSuccess: record, OnGiveUp: record}
	srv, cc := setup(t, ic)
	srv.Script(grpctest.Stream, grpctest.Step{Code: codes.Unavailable}, grpctest.Step{Messages: 1})
	cs, err := grpctest.OpenStream(t.Context(), cc, "req")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := grpctest.ReceiveAll(cs); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d events, want 2 (retry, success): %+v", len(got), got)
	}
	if e := got[0]; !e.Stream || e.Attempt != 1 || e.Code != codes.Unavailable || e.Method != grpctest.Stream {
		t.Errorf("OnRetry got %+v", e)
	}
	if e := got[1]; !e.Stream || e.Attempt != 2 || e.Code != codes.OK {
		t.Errorf("OnSuccess got %+v", e)
	}
	if want := retry.DefaultMaxTokens - 1 + retry.DefaultTokenRatio; budget.Tokens() != want {
		t.Errorf("budget holds %v tokens, want %v: one failure spent, one success refunded", budget.Tokens(), want)
	}
}
