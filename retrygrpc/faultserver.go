package retrygrpc

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/again-go/again/fault"
)

// Fault is a fault of FaultInjector's server interceptors: package fault's
// Fault, read for gRPC, with what gRPC adds. Match.Path is matched against
// the full method ("/pkg.Service/Method"), Match.Header against the
// incoming metadata (its keys lower case), Match.Method against "POST"
// and Match.Host against the :authority. The kinds mean:
//
//   - fault.Status, fault.Outage, fault.RateLimit: the call ends with Code
//     and the pushback, without running the handler.
//   - fault.Reset (and fault.CutBody, the same for gRPC): the handler runs
//     and its answer is replaced by Code: at fault.BeforeHeaders a
//     trailers-only status; at fault.AfterHeaders the response headers are
//     sent first, past A6's commit point; at fault.MidBody a stream sends
//     Messages messages and then fails.
//   - fault.Latency: the handler starts after the delay.
//   - fault.SlowFirstByte: the headers and the first message (or a unary
//     answer) wait for the delay.
//   - fault.SlowBody: the headers are sent at once and the first message
//     (or a unary answer) waits for the delay.
//   - fault.Stall: nothing until the call's context ends (its status is
//     then the context's), or for the delay, then Code.
//
// Its zero value fails every call with UNAVAILABLE.
type Fault struct {
	fault.Fault
	// Code is the status code of the failure; OK means UNAVAILABLE, or
	// RESOURCE_EXHAUSTED for a RateLimit.
	Code codes.Code
	// Pushback, if not empty, is sent as the grpc-retry-pushback-ms
	// trailer's value, as is (a negative or malformed one asks clients
	// not to retry); empty means the RetryAfter's milliseconds, if it is
	// set, else no trailer.
	Pushback string
	// Messages is how many messages a stream sends, at fault.MidBody,
	// before it fails.
	Messages int
}

// FaultInjector injects Faults into the calls a gRPC server serves,
// through the interceptors of ServerOptions (or Unary and Stream). Its
// fields are fault.Injector's, set before its first use and not changed
// after; it is then safe for concurrent use. Its zero value injects
// nothing.
type FaultInjector struct {
	Faults    []Fault
	Seed      uint64
	MaxActive int
	Epoch     time.Time
	Now       func() time.Time
	OnInject  func(fault.Event)

	once sync.Once
	in   *fault.Injector
}

// Injector returns the fault.Injector that decides for it: its counters
// (Requests, Injected) are the interceptors'.
func (fi *FaultInjector) Injector() *fault.Injector {
	fi.once.Do(func() {
		fs := make([]fault.Fault, len(fi.Faults))
		for i := range fi.Faults {
			fs[i] = fi.Faults[i].Fault
		}
		fi.in = &fault.Injector{Faults: fs, Seed: fi.Seed, MaxActive: fi.MaxActive, Epoch: fi.Epoch, Now: fi.Now, OnInject: fi.OnInject}
	})
	return fi.in
}

// Validate returns the first invalid Fault's *fault.FieldError, or nil.
func (fi *FaultInjector) Validate() error {
	if err := fi.Injector().Validate(); err != nil {
		return err
	}
	for i, f := range fi.Faults {
		if f.Messages < 0 {
			return &fault.FieldError{Field: fmt.Sprintf("Faults[%d].Messages", i), Value: strconv.Itoa(f.Messages), Accepted: "at least 0"}
		}
	}
	return nil
}

// ServerOptions returns the options that install Unary and Stream.
func (fi *FaultInjector) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(fi.Unary), grpc.ChainStreamInterceptor(fi.Stream)}
}

// pick returns the injection for the call of method, and its Fault.
func (fi *FaultInjector) pick(ctx context.Context, method string) (fault.Injection, *Fault, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	host := ""
	if v := md[":authority"]; len(v) > 0 {
		host = v[0]
	}
	t := fault.Target{Method: "POST", Path: method, Host: host, Header: md, Context: ctx}
	j := fi.Injector().Pick(&t)
	if j.Err != nil {
		return j, nil, status.Error(codes.Internal, j.Err.Error())
	}
	if j.Fault == nil {
		return j, nil, nil
	}
	return j, &fi.Faults[j.Index], nil
}

// failure returns the status the fault ends the call with, and sets its
// pushback trailer.
func (f *Fault) failure(setTrailer func(metadata.MD) error, j *fault.Injection) error {
	code := f.Code
	if code == codes.OK {
		code = codes.Unavailable
		if f.Kind == fault.RateLimit {
			code = codes.ResourceExhausted
		}
	}
	pb := f.Pushback
	if pb == "" && f.RetryAfter > 0 {
		pb = strconv.FormatInt(f.RetryAfter.Milliseconds(), 10)
	}
	if pb != "" {
		setTrailer(metadata.Pairs(PushbackKey, pb))
	}
	return status.Errorf(code, "fault: injected %v", f.Kind)
}

func (f *Fault) answersAtOnce() bool {
	return f.Kind == fault.Status || f.Kind == fault.Outage || f.Kind == fault.RateLimit
}

// Unary is the unary server interceptor.
func (fi *FaultInjector) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	j, f, err := fi.pick(ctx, info.FullMethod)
	if err != nil || f == nil {
		if err != nil {
			return nil, err
		}
		return handler(ctx, req)
	}
	defer j.Done()
	trailer := func(md metadata.MD) error { return grpc.SetTrailer(ctx, md) }
	header := func() { grpc.SendHeader(ctx, metadata.MD{}) }
	switch {
	case f.answersAtOnce():
		if f.Stage == fault.AfterHeaders {
			header()
		}
		return nil, f.failure(trailer, &j)
	case f.Kind == fault.Latency:
		if err := wait(ctx, j.Delay); err != nil {
			return nil, status.FromContextError(err).Err()
		}
		return handler(ctx, req)
	case f.Kind == fault.Stall:
		if err := stall(ctx, j.Delay); err != nil {
			return nil, status.FromContextError(err).Err()
		}
		return nil, f.failure(trailer, &j)
	}
	resp, err := handler(ctx, req)
	switch f.Kind {
	case fault.Reset, fault.CutBody:
		if f.Stage != fault.BeforeHeaders {
			header()
		}
		return nil, f.failure(trailer, &j)
	case fault.SlowBody:
		header()
		fallthrough
	case fault.SlowFirstByte:
		if err := wait(ctx, j.Delay); err != nil {
			return nil, status.FromContextError(err).Err()
		}
	}
	return resp, err
}

// Stream is the stream server interceptor.
func (fi *FaultInjector) Stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx := ss.Context()
	j, f, err := fi.pick(ctx, info.FullMethod)
	if err != nil || f == nil {
		if err != nil {
			return err
		}
		return handler(srv, ss)
	}
	defer j.Done()
	switch {
	case f.answersAtOnce():
		if f.Stage == fault.AfterHeaders {
			ss.SendHeader(metadata.MD{})
		}
		return f.failure(setTrailer(ss), &j)
	case f.Kind == fault.Latency:
		if err := wait(ctx, j.Delay); err != nil {
			return status.FromContextError(err).Err()
		}
		return handler(srv, ss)
	case f.Kind == fault.Stall:
		if err := stall(ctx, j.Delay); err != nil {
			return status.FromContextError(err).Err()
		}
		return f.failure(setTrailer(ss), &j)
	}
	fs := &faultStream{ServerStream: ss, f: f, delay: j.Delay}
	if f.Kind == fault.Reset || f.Kind == fault.CutBody {
		switch f.Stage {
		case fault.BeforeHeaders:
			fs.drop = true
		case fault.AfterHeaders:
			fs.drop = true
			ss.SendHeader(metadata.MD{})
		case fault.MidBody:
			fs.left = f.Messages
			fs.counting = true
		}
	}
	if f.Kind == fault.SlowBody {
		ss.SendHeader(metadata.MD{})
	}
	err = handler(srv, fs)
	if fs.err != nil {
		return fs.err
	}
	if f.Kind == fault.Reset || f.Kind == fault.CutBody {
		return f.failure(setTrailer(ss), &j)
	}
	return err
}

func setTrailer(ss grpc.ServerStream) func(metadata.MD) error {
	return func(md metadata.MD) error { ss.SetTrailer(md); return nil }
}

// faultStream is the ServerStream a stream's handler writes to while a
// fault acts on its messages.
type faultStream struct {
	grpc.ServerStream
	f        *Fault
	delay    time.Duration // the wait before the first message, once
	drop     bool          // send nothing: the failure replaces the answer
	counting bool          // MidBody: left messages go through
	left     int
	err      error // the context's, if a wait ended with it
}

func (s *faultStream) SendHeader(md metadata.MD) error {
	if s.drop || s.counting && s.left == 0 {
		return nil
	}
	if s.f.Kind == fault.SlowFirstByte {
		if err := s.wait(); err != nil {
			return err
		}
	}
	return s.ServerStream.SendHeader(md)
}

func (s *faultStream) SendMsg(m any) error {
	if s.drop {
		return status.Error(codes.Unavailable, "fault: response dropped")
	}
	if s.counting {
		if s.left == 0 {
			s.drop = true
			return status.Error(codes.Unavailable, "fault: stream cut")
		}
		s.left--
	}
	if s.f.Kind == fault.SlowFirstByte || s.f.Kind == fault.SlowBody {
		if err := s.wait(); err != nil {
			return err
		}
	}
	return s.ServerStream.SendMsg(m)
}

// wait waits for the delay, once.
func (s *faultStream) wait() error {
	d := s.delay
	s.delay = 0
	if err := wait(s.Context(), d); err != nil {
		s.err = status.FromContextError(err).Err()
		return s.err
	}
	return nil
}

// wait waits for d or until ctx ends.
func wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stall waits for d, or for ctx alone when d is 0.
func stall(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		<-ctx.Done()
		return ctx.Err()
	}
	return wait(ctx, d)
}
