package retrygrpc

import (
	"context"
	"errors"
	"io"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/again-go/again/breaker"
	"github.com/again-go/again/limiter"
	"github.com/again-go/again/retry"
)

// MaxReplayed is how many messages a stream's client may send before the
// stream can no longer be retried: the messages sent are kept until the
// first response arrives, to be sent again on a new stream, and a client
// that sends more without hearing back commits the stream to its current
// attempt rather than growing the buffer without bound.
const MaxReplayed = 64

// Stream is a grpc.StreamClientInterceptor that retries a stream while no
// response has reached the caller: when opening it fails, or when the
// first RecvMsg (or Header) meets a retryable status before any message or
// header arrived. The messages the caller sent (at most MaxReplayed) and
// its CloseSend are then replayed on a new stream, so the server sees the
// request again, and the caller sees only the new stream's responses. Once
// a message or the response headers have reached the caller, the stream
// is committed: a later failure is returned as it is, never retried, so
// that no response is ever delivered twice.
//
// The messages sent are kept by reference until the stream commits, so a
// caller must not change a message after sending it (grpc-go asks the same
// of SendMsg). Errors follow Unary's rules. Breakers and Budget apply to
// streams as to unary calls; AttemptTimeout does not, and streams are
// never hedged, whatever Hedger and Idempotent say.
func (ic *Interceptor) Stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	l, br, err := ic.begin(ctx, cc, method, 0)
	if err != nil {
		return nil, err
	}
	lim, err := ic.limiterFor(cc, method)
	if err != nil {
		return nil, err
	}
	s := &stream{ic: ic, ctx: ctx, desc: desc, cc: cc, method: method, streamer: streamer, opts: opts, loop: l, br: br, lim: lim}
	for {
		o := s.open()
		if o.err == nil {
			return s, nil
		}
		o.stream = true
		s.record(o)
		if err := ic.failed(ctx, &s.loop, cc, method, o); err != nil {
			return nil, s.ended(err)
		}
	}
}

// stream is a retrying grpc.ClientStream. SendMsg and RecvMsg may run on
// two goroutines at once, as grpc-go allows: mu guards what they share,
// and recvMu serializes the receiving side's retries with Header.
type stream struct {
	ic       *Interceptor
	ctx      context.Context
	desc     *grpc.StreamDesc
	cc       *grpc.ClientConn
	method   string
	streamer grpc.Streamer
	opts     []grpc.CallOption
	br       *breaker.Breaker

	recvMu sync.Mutex
	loop   retry.Loop // guarded by recvMu once the stream is returned
	ticket breaker.Ticket
	ticked bool             // ticket holds an admission not yet recorded
	adm    retry.Admitter   // the attempt's throttle, not yet settled
	lim    *limiter.Limiter // the call's concurrency limit, or nil
	permit streamPermit

	mu        sync.Mutex
	cur       grpc.ClientStream
	sent      []any
	closed    bool // the caller called CloseSend
	committed bool
	overflow  bool // the caller sent more than MaxReplayed messages
}

// open opens a new attempt's stream and replays onto it what the caller
// has sent.
func (s *stream) open() outcome {
	if o, ok := s.acquirePermit(); !ok {
		return o
	}
	if o, ok := s.admitAttempt(); !ok {
		s.recordPermit(o)
		return o
	}
	if s.br != nil {
		tk, err := s.br.Allow(s.ctx)
		if err != nil {
			return outcome{err: openError(err), rejected: true}
		}
		s.ticket, s.ticked = tk, true
	}
	cs, err := s.streamer(shedMetadata(s.ctx, s.loop.Attempts()+1), s.desc, s.cc, s.method, s.opts...)
	if err != nil {
		return outcome{err: err}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.sent {
		if err := cs.SendMsg(m); err != nil && !errors.Is(err, io.EOF) {
			return outcome{err: err}
		}
	}
	if s.closed {
		if err := cs.CloseSend(); err != nil {
			return outcome{err: err}
		}
	}
	s.cur = cs
	return outcome{}
}

// record reports an attempt's outcome to its breaker, once.
func (s *stream) record(o outcome) {
	s.recordPermit(o)
	s.settleAttempt(o)
	if s.ticked {
		s.ticked = false
		s.ticket.Record(s.ic.breakerOutcome(s.ctx, o))
	}
}

// current returns the attempt's stream and whether the stream committed.
func (s *stream) current() (grpc.ClientStream, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur, s.committed
}

// overflowed reports whether the caller sent too much to replay.
func (s *stream) overflowed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.overflow
}

// commit ends retrying: a response reached the caller, or the call ended.
func (s *stream) commit(o outcome) {
	s.record(o)
	s.mu.Lock()
	s.committed = true
	s.sent = nil
	s.mu.Unlock()
}

// RecvMsg receives the next message, retrying the stream first if it
// failed before any response reached the caller.
func (s *stream) RecvMsg(m any) error {
	cur, committed := s.current()
	if committed {
		return s.ended(cur.RecvMsg(m))
	}
	s.recvMu.Lock()
	defer s.recvMu.Unlock()
	for {
		cur, committed = s.current()
		err := cur.RecvMsg(m)
		if committed {
			return s.ended(err)
		}
		if err == nil || errors.Is(err, io.EOF) {
			s.succeeded()
			return s.ended(err)
		}
		if err := s.retry(outcome{err: err, pushback: hintOf(cur.Trailer(), err), final: s.overflowed(), stream: true}); err != nil {
			return s.ended(err)
		}
	}
}

// retry judges the failed attempt o and, if it may be retried, waits and
// opens the next attempt's stream; otherwise it commits and returns the
// error that ends the call.
func (s *stream) retry(o outcome) error {
	for {
		s.record(o)
		if err := s.ic.failed(s.ctx, &s.loop, s.cc, s.method, o); err != nil {
			s.commit(outcome{})
			return err
		}
		if o = s.open(); o.err == nil {
			return nil
		}
		o.stream = true
	}
}

// succeeded commits the stream after its first response, and records the
// success: the budget's refund and OnSuccess.
func (s *stream) succeeded() {
	s.commit(outcome{})
	s.loop.Succeeded()
	if s.ic.OnSuccess != nil {
		s.ic.OnSuccess(s.ctx, s.ic.event(s.cc, s.method, s.loop.Attempts(), s.loop.Class(), outcome{stream: true}))
	}
}

// Header returns the response headers. Headers that arrive commit the
// stream: the caller has seen a response. A stream that ended without
// headers (grpc-go then returns none and no error, leaving the status to
// RecvMsg) stays retryable.
func (s *stream) Header() (metadata.MD, error) {
	cur, committed := s.current()
	if committed {
		return cur.Header()
	}
	s.recvMu.Lock()
	defer s.recvMu.Unlock()
	cur, committed = s.current()
	md, err := cur.Header()
	switch {
	case committed:
	case err != nil:
		s.commit(outcome{err: err, stream: true})
	case md != nil:
		s.succeeded()
	}
	return md, err
}

// Trailer returns the trailers of the current attempt.
func (s *stream) Trailer() metadata.MD {
	cur, _ := s.current()
	return cur.Trailer()
}

// CloseSend closes the sending side, now and on any later attempt.
func (s *stream) CloseSend() error {
	s.mu.Lock()
	s.closed = true
	cur := s.cur
	s.mu.Unlock()
	return cur.CloseSend()
}

// Context returns the current attempt's context.
func (s *stream) Context() context.Context {
	cur, _ := s.current()
	return cur.Context()
}

// SendMsg sends m on the current attempt, and keeps it for the next ones
// until the stream commits.
func (s *stream) SendMsg(m any) error {
	s.mu.Lock()
	if !s.committed {
		if len(s.sent) < MaxReplayed && !s.overflow {
			s.sent = append(s.sent, m)
		} else {
			s.overflow, s.sent = true, nil
		}
	}
	cur, replayed := s.cur, !s.committed && !s.overflow
	s.mu.Unlock()
	err := cur.SendMsg(m)
	if replayed && errors.Is(err, io.EOF) {
		// The attempt failed; RecvMsg will see why and, if it is retried,
		// send m again on the next attempt.
		return nil
	}
	return err
}
