// Package grpctest runs a scripted gRPC server for tests. It is a real
// server on a loopback TCP port with a test service whose answers a test
// scripts: fail with chosen codes, send
// grpc-retry-pushback-ms trailers, stall until the caller gives up, stream
// some messages and then fail. The retrygrpc tests and benchmarks run
// against it, and so can a user's own tests of a retrying client.
//
// # Quick start
//
//	srv := grpctest.Start(t)
//	srv.Script(grpctest.Unary,
//		grpctest.Step{Code: codes.Unavailable},
//		grpctest.Step{Code: codes.ResourceExhausted, Pushback: []string{"20"}},
//	) // then OK
//	conn := srv.Dial(t, grpc.WithDisableRetry())
//	reply, err := grpctest.CallUnary(ctx, conn, "hello")
//
// The service needs no generated code: its messages are protobuf's
// wrapperspb.StringValue, and its grpc.ServiceDesc is written by hand.
package grpctest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Full names of the test service's methods, as interceptors see them.
const (
	// Unary answers "attempt N", N counting this method's calls from 1.
	Unary = "/grpctest.Test/Unary"
	// Stream is server-streaming: it sends Step.Messages messages
	// "m0", "m1", ... and then ends with Step.Code.
	Stream = "/grpctest.Test/Stream"
	// Bidi is bidirectional: it receives until the client closes its
	// side, then answers as Stream does.
	Bidi = "/grpctest.Test/Bidi"
)

// Step scripts one call of a method. The zero Step answers at once with
// OK: "attempt N" for Unary, no message for the streams. It is a plain
// value; the Server keeps a copy.
type Step struct {
	// Code is the status the call ends with; OK means success.
	Code codes.Code
	// Pushback, if not nil, is sent as the grpc-retry-pushback-ms
	// trailer's values (any strings, so that malformed ones can be tested).
	Pushback []string
	// RetryInfo, if not nil, is sent as a google.rpc.RetryInfo detail of
	// the status, as Google's APIs send it with RESOURCE_EXHAUSTED and
	// UNAVAILABLE. It is sent only with a Code other than OK.
	RetryInfo *errdetails.RetryInfo
	// Stall makes the call wait until its context ends (the client
	// cancelled it or its deadline passed) before anything else: it then
	// ends with the context's status, and counts in Canceled.
	Stall bool
	// Messages is how many messages a stream sends before it ends with
	// Code. Unary ignores it.
	Messages int
	// Header makes a stream send its response headers (key "step") before
	// its first message, so that they reach the client even when no
	// message follows.
	Header bool
}

// Server is a running test server. Its methods are safe for concurrent
// use; the zero Server is not usable: make one with Start or NewServer.
type Server struct {
	// Addr is the loopback address the server listens on, "127.0.0.1:port".
	Addr string

	srv  *grpc.Server
	done chan struct{} // closed when Serve has returned

	mu       sync.Mutex
	steps    map[string][]Step
	calls    map[string]int
	canceled map[string]int
	recv     map[string][]string
}

// Start starts a server as NewServer does, and stops it when the test
// ends.
func Start(tb testing.TB, opts ...grpc.ServerOption) *Server {
	tb.Helper()
	s, err := NewServer(opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// NewServer starts a server on 127.0.0.1 on a free port; Stop stops it.
// Each call of a method takes the next Step scripted for it (see Script),
// or the zero Step once there is none. The options are the grpc.Server's,
// such as interceptors (retrygrpc.FaultInjector's ServerOptions).
func NewServer(opts ...grpc.ServerOption) (*Server, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("grpctest: listen on loopback: %w", err)
	}
	s := &Server{
		done:     make(chan struct{}),
		Addr:     lis.Addr().String(),
		srv:      grpc.NewServer(opts...),
		steps:    map[string][]Step{},
		calls:    map[string]int{},
		canceled: map[string]int{},
		recv:     map[string][]string{},
	}
	s.srv.RegisterService(&serviceDesc, s)
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(lis) // returns when Stop closes the listener
	}()
	return s, nil
}

// Stop closes the server's listener and connections, ends its calls, and
// returns once it has stopped.
func (s *Server) Stop() {
	s.srv.Stop()
	<-s.done
}

// Script queues steps for the next calls of method (Unary, Stream or
// Bidi), after those already queued.
func (s *Server) Script(method string, steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps[method] = append(s.steps[method], steps...)
}

// Calls returns how many calls of method the server has received.
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// Canceled returns how many stalled calls of method ended because their
// context did (the client cancelled them or their deadline passed).
func (s *Server) Canceled(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.canceled[method]
}

// Received returns the request values the server received for method, in
// order, across all its calls; empty values are left out.
func (s *Server) Received(method string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.recv[method]...)
}

// Dial returns a client connection to the server, closed when the test
// ends. It adds insecure transport credentials to opts.
func (s *Server) Dial(tb testing.TB, opts ...grpc.DialOption) *grpc.ClientConn {
	tb.Helper()
	opts = append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)
	cc, err := grpc.NewClient(s.Addr, opts...)
	if err != nil {
		tb.Fatalf("grpctest: dial %s: %v", s.Addr, err)
	}
	tb.Cleanup(func() { _ = cc.Close() })
	return cc
}

// next records a call of method with request value in and returns its
// step and number.
func (s *Server) next(method, in string) (Step, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[method]++
	if in != "" {
		s.recv[method] = append(s.recv[method], in)
	}
	var st Step
	if q := s.steps[method]; len(q) > 0 {
		st, s.steps[method] = q[0], q[1:]
	}
	return st, s.calls[method]
}

// finish plays the end of step st: the stall, the pushback trailer and the
// status.
func (s *Server) finish(ctx context.Context, method string, st Step) error {
	if st.Stall {
		<-ctx.Done()
		s.mu.Lock()
		s.canceled[method]++
		s.mu.Unlock()
		return status.FromContextError(ctx.Err()).Err()
	}
	if st.Pushback != nil {
		md := metadata.MD{}
		md["grpc-retry-pushback-ms"] = st.Pushback
		if err := grpc.SetTrailer(ctx, md); err != nil {
			return err
		}
	}
	if st.Code != codes.OK {
		s := status.Newf(st.Code, "grpctest: scripted %v", st.Code)
		if st.RetryInfo != nil {
			var err error
			if s, err = s.WithDetails(st.RetryInfo); err != nil {
				return err
			}
		}
		return s.Err()
	}
	return nil
}

func (s *Server) unary(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
	st, n := s.next(Unary, in.GetValue())
	if err := s.finish(ctx, Unary, st); err != nil {
		return nil, err
	}
	return wrapperspb.String("attempt " + strconv.Itoa(n)), nil
}

// stream sends the messages of st on ss, then ends it.
func (s *Server) stream(ss grpc.ServerStream, method string, st Step) error {
	if st.Header {
		if err := ss.SendHeader(metadata.Pairs("step", "header")); err != nil {
			return err
		}
	}
	for i := range st.Messages {
		if err := ss.SendMsg(wrapperspb.String("m" + strconv.Itoa(i))); err != nil {
			return err
		}
	}
	return s.finish(ss.Context(), method, st)
}

func (s *Server) serverStream(in *wrapperspb.StringValue, ss grpc.ServerStream) error {
	st, _ := s.next(Stream, in.GetValue())
	return s.stream(ss, Stream, st)
}

func (s *Server) bidi(ss grpc.ServerStream) error {
	var got []string
	for {
		in := new(wrapperspb.StringValue)
		err := ss.RecvMsg(in)
		if err != nil {
			if !isEOF(err) {
				return err
			}
			break
		}
		got = append(got, in.GetValue())
	}
	st, _ := s.next(Bidi, "")
	s.mu.Lock()
	s.recv[Bidi] = append(s.recv[Bidi], got...)
	s.mu.Unlock()
	return s.stream(ss, Bidi, st)
}

// isEOF reports the clean end of a stream.
func isEOF(err error) bool { return errors.Is(err, io.EOF) }

// CallUnary calls Unary on cc with the request value in and returns the
// reply's value. It, OpenStream, OpenBidi and ReceiveAll are what
// generated client code would be; they keep no state, and are safe for
// concurrent use as cc is.
func CallUnary(ctx context.Context, cc grpc.ClientConnInterface, in string, opts ...grpc.CallOption) (string, error) {
	out := new(wrapperspb.StringValue)
	err := cc.Invoke(ctx, Unary, wrapperspb.String(in), out, opts...)
	return out.GetValue(), err
}

// OpenStream calls Stream on cc with the request value in: it sends the
// request and closes its side, as generated code does, and returns the
// stream to receive from (RecvMsg into a *wrapperspb.StringValue).
func OpenStream(ctx context.Context, cc grpc.ClientConnInterface, in string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	cs, err := cc.NewStream(ctx, &serviceDesc.Streams[0], Stream, opts...)
	if err != nil {
		return nil, err
	}
	if err := cs.SendMsg(wrapperspb.String(in)); err != nil {
		return nil, err
	}
	if err := cs.CloseSend(); err != nil {
		return nil, err
	}
	return cs, nil
}

// OpenBidi opens Bidi on cc; the caller sends, closes its side and
// receives.
func OpenBidi(ctx context.Context, cc grpc.ClientConnInterface, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return cc.NewStream(ctx, &serviceDesc.Streams[1], Bidi, opts...)
}

// ReceiveAll receives the values of cs's messages until the stream ends,
// and returns them with the error that ended it (nil for a clean end).
func ReceiveAll(cs grpc.ClientStream) ([]string, error) {
	var got []string
	for {
		m := new(wrapperspb.StringValue)
		if err := cs.RecvMsg(m); err != nil {
			if isEOF(err) {
				return got, nil
			}
			return got, err
		}
		got = append(got, m.GetValue())
	}
}
