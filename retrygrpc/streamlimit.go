package retrygrpc

import (
	"context"
	"sync"

	"github.com/again-go/again/limiter"
)

// A stream attempt holds a permit of its key's Limiter in
// Interceptor.Limits from before it is opened until the stream ends: the
// attempt fails (and the next one, if any, takes a permit of its own, after
// the backoff wait), or, once the stream committed, RecvMsg returns an
// error (io.EOF included), the single response of a stream whose server
// does not stream arrives, or the call's context ends, whichever comes
// first. An adaptive limit learns the time until the commit (the first
// response or the headers), or a loss if the attempt failed so before it.
// A stream the caller abandons without reading it to its end or ending
// its context keeps its permit, as it keeps its gRPC stream (grpc-go asks
// for one or the other).

// streamPermit is the permit of a stream's current attempt. Its own lock
// guards it: the context's end gives it back from another goroutine.
type streamPermit struct {
	mu   sync.Mutex
	p    limiter.Permit
	stop func() bool // stops the context's watch
}

// acquirePermit takes the permit of the stream's next attempt, if the call
// has a Limiter, and returns the refusal's outcome and false if it may not
// be made. recvMu is held, or the stream is not yet returned.
func (s *stream) acquirePermit() (outcome, bool) {
	if s.lim == nil {
		return outcome{}, true
	}
	p, err := s.lim.Acquire(s.ctx)
	if err != nil {
		return limitRefusal(err), false
	}
	s.permit.mu.Lock()
	s.permit.p = p
	if s.permit.stop == nil {
		s.permit.stop = context.AfterFunc(s.ctx, s.releasePermit)
	}
	s.permit.mu.Unlock()
	return outcome{}, true
}

// recordPermit tells the limit how the current attempt came out, once: a
// failure gives the permit back, a commit keeps it until the stream ends.
func (s *stream) recordPermit(o outcome) {
	if s.lim == nil {
		return
	}
	s.permit.mu.Lock()
	s.permit.p.Record(limitOutcome(s.ctx, o))
	if o.err != nil {
		s.permit.p.Release()
	}
	s.permit.mu.Unlock()
}

// releasePermit gives the stream's permit back: the stream ended.
func (s *stream) releasePermit() {
	s.permit.mu.Lock()
	s.permit.p.Release()
	s.permit.mu.Unlock()
}

// ended gives the permit back if err, or the response of a stream whose
// server does not stream, ends the committed stream, and returns err.
func (s *stream) ended(err error) error {
	if s.lim != nil && (err != nil || !s.desc.ServerStreams) {
		s.releasePermit()
		s.permit.mu.Lock()
		if s.permit.stop != nil {
			s.permit.stop()
		}
		s.permit.mu.Unlock()
	}
	return err
}
