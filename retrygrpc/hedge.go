package retrygrpc

import (
	"context"
	"errors"
	"reflect"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/protobuf/proto"

	"github.com/again-go/again/hedge"
	"github.com/again-go/again/limiter"
	"github.com/again-go/again/retry"
)

// Methods returns an Idempotent function that marks the given full method
// names ("/package.Service/Method"), and a whole service's methods for a
// name that ends in a slash ("/package.Service/"). The function is safe for
// concurrent use.
func Methods(names ...string) func(method string) bool {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return func(method string) bool {
		if set[method] {
			return true
		}
		service, _ := SplitMethod(method)
		return service != "" && set["/"+service+"/"]
	}
}

// hedges reports whether the calls of method are hedged.
func (ic *Interceptor) hedges(method string) bool {
	return ic.Hedger != nil && ic.Idempotent != nil && ic.Idempotent(method)
}

// copyError is the error of one failed copy of a hedged attempt: its
// verdict for the retry loop, which package hedge reads (Permanent, a
// wait hint, a breaker's rejection), and the outcome behind it, for the
// hooks and the loop's decision once the attempt is over.
type copyError struct {
	verdict error
	o       outcome
	meta    *copyMeta
}

// hedged is the value of a copy that succeeded: the reply it decoded into
// and what it received for the caller's Header, Trailer and Peer options.
type hedged struct {
	reply any
	meta  *copyMeta
}

// copyMeta holds, for one copy of a hedged attempt, what the caller's
// grpc.Header, grpc.Trailer and grpc.Peer options ask for: copies run at
// once and must not write the caller's variables concurrently, so each
// writes its own, and the answer's are handed to the caller.
type copyMeta struct {
	header, trailer metadata.MD
	peer            peer.Peer
}

// hasMetaOptions reports whether opts ask for headers, trailers or the
// peer.
func hasMetaOptions(opts []grpc.CallOption) bool {
	for _, o := range opts {
		switch o.(type) {
		case grpc.HeaderCallOption, grpc.TrailerCallOption, grpc.PeerCallOption:
			return true
		}
	}
	return false
}

// rewrite returns opts with the Header, Trailer and Peer options pointed
// at m.
func (m *copyMeta) rewrite(opts []grpc.CallOption) []grpc.CallOption {
	out := make([]grpc.CallOption, len(opts))
	for i, o := range opts {
		switch o.(type) {
		case grpc.HeaderCallOption:
			o = grpc.Header(&m.header)
		case grpc.TrailerCallOption:
			o = grpc.Trailer(&m.trailer)
		case grpc.PeerCallOption:
			o = grpc.Peer(&m.peer)
		}
		out[i] = o
	}
	return out
}

// deliver writes what m received to the caller's options; a nil m (no
// such option) does nothing.
func (m *copyMeta) deliver(opts []grpc.CallOption) {
	if m == nil {
		return
	}
	for _, o := range opts {
		switch o := o.(type) {
		case grpc.HeaderCallOption:
			*o.HeaderAddr = m.header
		case grpc.TrailerCallOption:
			*o.TrailerAddr = m.trailer
		case grpc.PeerCallOption:
			*o.PeerAddr = m.peer
		}
	}
}

func (e *copyError) Error() string { return e.verdict.Error() }
func (e *copyError) Unwrap() error { return e.verdict }

// hedge makes a unary call whose attempts are hedged by ic.Hedger, as
// proposal A6 describes: the first copy at once, another after each delay
// while none has answered, the next at once after a retryable failure; the
// first success wins and the other copies are canceled; a code that is
// not retried ends the attempt at once; a positive pushback on a copy
// delays the next hedge by the pushback, and a negative or malformed one
// stops the hedging of the attempt (and, once every copy has failed, the
// retry loop waits what the server asked before the next attempt, or
// stops for a negative pushback). Each copy decodes into a reply of its own, and the
// winner's is copied into reply; the caller's grpc.Header, grpc.Trailer and
// grpc.Peer options receive the winner's (or, when the attempt failed, the
// failure's).
func (ic *Interceptor) hedge(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts []grpc.CallOption) error {
	if err := ic.Hedger.Validate(); err != nil {
		return err
	}
	l, br, err := ic.begin(ctx, cc, method, ic.AttemptTimeout)
	if err != nil {
		return err
	}
	lim, err := ic.limiterFor(cc, method)
	if err != nil {
		return err
	}
	var permits []limiter.Permit // the hedges', taken by Prepare
	// attempt is the retry loop's attempt that the copies belong to: each
	// copy sends its number, as retryhttp's hedges do, and its call's
	// criticality. hedge.Attempt waits for every copy, so no copy reads it
	// as the next attempt sets it.
	attempt := 0
	c := hedge.Call[hedged]{
		Key: method,
		Op: func(ctx context.Context, n int) (hedged, error) {
			h := hedged{reply: reply}
			if n > 0 {
				h.reply = newLike(reply)
			}
			copts := opts
			if hasMetaOptions(opts) {
				h.meta = new(copyMeta)
				copts = h.meta.rewrite(opts)
			}
			var held *limiter.Permit
			if n > 0 && lim != nil {
				held = &permits[n]
			}
			o := ic.limitedAttempt(shedMetadata(ctx, attempt), lim, held, func(ctx context.Context) outcome {
				return ic.unaryAttempt(ctx, br, method, req, h.reply, cc, invoker, copts)
			})
			if o.err != nil {
				return hedged{}, &copyError{verdict: ic.hedgeVerdict(ctx, o), o: o, meta: h.meta}
			}
			return h, nil
		},
		// A copy's failure ends the attempt only when its code is not
		// retried: a pushback, even a negative one, or a breaker's
		// rejection stops the hedging but lets the copies in flight
		// answer, as A6 says.
		Retryable: func(err error) bool {
			if _, hinted := retry.RetryAfter(err); hinted {
				return true
			}
			return retry.Retryable(err)
		},
		Postpone: postponeHedge,
	}
	if lim != nil {
		permits = make([]limiter.Permit, 1+max(ic.Hedger.MaxHedges, 1))
		c.Prepare = limitHedges(lim, permits)
	}
	for {
		attempt = l.Attempts() + 1
		c.Attempt = attempt
		r := hedge.Attempt(ctx, ic.Hedger, c)
		if r.Err == nil {
			l.Succeeded()
			if r.Winner > 0 {
				copyReply(reply, r.Value.reply)
			}
			r.Value.meta.deliver(opts)
			if ic.OnSuccess != nil {
				e := ic.event(cc, method, l.Attempts(), l.Class(), outcome{})
				e.Hedges = r.Hedges
				ic.OnSuccess(ctx, e)
			}
			return nil
		}
		var ce *copyError
		if !errors.As(r.Err, &ce) {
			return r.Err
		}
		ce.meta.deliver(opts)
		if err := ic.failed(ctx, &l, cc, method, ce.o); err != nil {
			return err
		}
	}
}

// postponeHedge is the hedged call's hedge.Call.Postpone: a copy that
// failed with a positive pushback (a valid grpc-retry-pushback-ms) delays
// the next hedge by the pushback, and hedging goes on, as A6 says ("If
// the server pushback is positive, the client should delay sending the
// next hedged RPC by the specified amount"). A negative or malformed one
// stops the hedging (hedgeVerdict), and one on a code that is not
// retried ends the attempt.
func postponeHedge(err error) (time.Duration, bool) {
	var ce *copyError
	if !errors.As(err, &ce) || !ce.o.pushback.Present || !ce.o.pushback.Retry || !retry.Retryable(ce.verdict) {
		return 0, false
	}
	return ce.o.pushback.Wait, true
}

// hedgeVerdict is verdict for a copy of a hedged attempt: a negative or
// malformed pushback is a permanent error that also carries a (zero) wait
// hint, so that it stops the hedging without canceling the other copies.
func (ic *Interceptor) hedgeVerdict(ctx context.Context, o outcome) error {
	v := ic.verdict(ctx, o)
	if o.pushback.Present && !o.pushback.Retry {
		return retry.After(0, v)
	}
	return v
}

// newLike returns a new, empty value of reply's type, for a hedge to
// decode into.
func newLike(reply any) any {
	if m, ok := reply.(proto.Message); ok {
		return m.ProtoReflect().New().Interface()
	}
	return reflect.New(reflect.TypeOf(reply).Elem()).Interface()
}

// copyReply copies the winning hedge's reply into the caller's.
func copyReply(dst, src any) {
	if m, ok := dst.(proto.Message); ok {
		proto.Reset(m)
		proto.Merge(m, src.(proto.Message))
		return
	}
	reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src).Elem())
}
