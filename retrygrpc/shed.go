package retrygrpc

import (
	"context"
	"errors"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/again-go/again/shed"
)

// Metadata keys a call carries its class and attempt number in, package
// shed's headers in gRPC's lower case. The deadline is gRPC's own
// (grpc-timeout).
const (
	CriticalityKey = "again-criticality"
	AttemptKey     = "again-attempt"
	// previousAttemptsKey is what grpc-go's own retries send on each retry
	// (gRFC A6): the attempts before this one.
	previousAttemptsKey = "grpc-previous-rpc-attempts"
)

// shedMetadata returns ctx carrying, for attempt n of a call (each copy of
// a hedged attempt, and each stream opened again, alike), the
// criticality ctx carries (shed.WithCriticality) and the attempt number,
// as outgoing metadata for a server behind a ShedServer; ctx itself when
// it carries no criticality, so that calls without one pay nothing.
func shedMetadata(ctx context.Context, n int) context.Context {
	c := shed.CriticalityFrom(ctx)
	if c == shed.Unspecified {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, CriticalityKey, c.String(), AttemptKey, strconv.Itoa(n))
}

// ShedServer protects a gRPC server with a shed.Shedder: its interceptors
// (ServerOptions, or Unary and Stream) admit each call under the
// Shedder's limit, queue it by priority under CoDel, or shed it at once
// with RESOURCE_EXHAUSTED and a grpc-retry-pushback-ms trailer drawn from
// the queue's load, which retrygrpc's Interceptor (and gRPC's own retry)
// obeys. A call's class is Classify's, else its again-criticality
// metadata's, else the Shedder's Config.Default; its attempt number is
// again-attempt's, else grpc-previous-rpc-attempts' plus one; its deadline
// is the call's (grpc-timeout), unless Config.IgnoreTimeout. The permit
// goes back when the handler returns, a stream's when the stream ends,
// also on a panic. A call whose client went away (its context ended) at
// or after its deadline, or without one, is a drop for an adaptive limit;
// one canceled before its deadline, less a quarter of its time (a hedge's
// losing copy), gives its permit back without a sample.
//
// Set its fields before its first use; it is then safe for concurrent
// use. The zero ShedServer, without a Shedder, admits every call.
type ShedServer struct {
	Shedder *shed.Shedder
	// Classify, if not nil, returns a call's class from its context
	// (incoming metadata, peer) and full method ("/pkg.Service/Method");
	// shed.Unspecified leaves the metadata's.
	Classify func(ctx context.Context, method string) shed.Criticality
}

// ServerOptions returns the options installing both interceptors, for
// grpc.NewServer.
func (s *ShedServer) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(s.Unary), grpc.ChainStreamInterceptor(s.Stream)}
}

// Unary is the unary server interceptor.
func (s *ShedServer) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if s.Shedder == nil {
		return handler(ctx, req)
	}
	p, err := s.Shedder.Admit(ctx, s.request(ctx, info.FullMethod))
	if err != nil {
		return nil, s.refuse(ctx, func(md metadata.MD) { _ = grpc.SetTrailer(ctx, md) }, err)
	}
	return serve(ctx, &p, func() (any, error) { return handler(ctx, req) })
}

// Stream is the stream server interceptor.
func (s *ShedServer) Stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if s.Shedder == nil {
		return handler(srv, ss)
	}
	ctx := ss.Context()
	p, err := s.Shedder.Admit(ctx, s.request(ctx, info.FullMethod))
	if err != nil {
		return s.refuse(ctx, ss.SetTrailer, err)
	}
	_, err = serve(ctx, &p, func() (any, error) { return nil, handler(srv, ss) })
	return err
}

// serve runs call holding p: Done after it returned, Abandon if the
// client went away (a drop for the limit if the call's deadline passed,
// none if the client canceled before it), Release if it panicked (no
// latency sample).
func serve(ctx context.Context, p *shed.Permit, call func() (any, error)) (any, error) {
	served := false
	defer func() {
		switch {
		case ctx.Err() != nil:
			p.Abandon()
		case served:
			p.Done()
		default:
			p.Release()
		}
	}()
	resp, err := call()
	served = true
	return resp, err
}

// request reads a call's class, attempt number and deadline.
func (s *ShedServer) request(ctx context.Context, method string) shed.Request {
	var req shed.Request
	if s.Classify != nil {
		req.Criticality = s.Classify(ctx, method)
	}
	md, _ := metadata.FromIncomingContext(ctx)
	if req.Criticality == shed.Unspecified {
		req.Criticality = shed.ParseCriticality(firstMD(md, CriticalityKey))
	}
	if v := firstMD(md, AttemptKey); v != "" {
		req.Attempt = shed.ParseAttempt(v)
	} else if v := firstMD(md, previousAttemptsKey); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 && n < 1<<30 {
			req.Attempt = n + 1
		}
	}
	req.Deadline, _ = ctx.Deadline()
	return req
}

func firstMD(md metadata.MD, k string) string {
	if v := md[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// refuse turns a Shedder's refusal into the call's status: a client gone
// gets its context's status; any other refusal RESOURCE_EXHAUSTED, with
// the wait in grpc-retry-pushback-ms (whole milliseconds, at least 1).
func (s *ShedServer) refuse(ctx context.Context, setTrailer func(metadata.MD), err error) error {
	var se *shed.ShedError
	if !errors.As(err, &se) {
		return status.Error(codes.Internal, err.Error())
	}
	if se.Reason == shed.Canceled && ctx.Err() != nil {
		return status.FromContextError(ctx.Err()).Err()
	}
	ms := max(se.RetryAfter/time.Millisecond, 1)
	setTrailer(metadata.Pairs(PushbackKey, strconv.FormatInt(int64(ms), 10)))
	return status.Error(codes.ResourceExhausted, err.Error())
}
