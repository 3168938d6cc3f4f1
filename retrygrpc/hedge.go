package retrygrpc

import (
	"context"
	"errors"
	"reflect"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/again-go/again/hedge"
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
}

func (e *copyError) Error() string { return e.verdict.Error() }
func (e *copyError) Unwrap() error { return e.verdict }

// hedge makes a unary call whose attempts are hedged by ic.Hedger, as
// proposal A6 describes: the first copy at once, another after each delay
// while none has answered, the next at once after a retryable failure; the
// first success wins and the other copies are canceled; a code that is
// not retried ends the attempt at once; a pushback on any copy stops the
// hedging of the attempt (and, once every copy has failed, the retry loop
// waits what the server asked before the next attempt, or stops for a
// negative pushback). Each copy decodes into a reply of its own, and the
// winner's is copied into reply.
func (ic *Interceptor) hedge(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts []grpc.CallOption) error {
	if err := ic.Hedger.Validate(); err != nil {
		return err
	}
	l, err := retry.NewLoop(ctx, ic.Policy, ic.loopOptions()...)
	if err != nil {
		return err
	}
	br, err := ic.breakerFor(cc, method)
	if err != nil {
		return err
	}
	c := hedge.Call[any]{
		Key: method,
		Op: func(ctx context.Context, n int) (any, error) {
			into := reply
			if n > 0 {
				into = newLike(reply)
			}
			o := ic.unaryAttempt(ctx, br, method, req, into, cc, invoker, opts)
			if o.err != nil {
				return nil, &copyError{verdict: ic.hedgeVerdict(ctx, o), o: o}
			}
			return into, nil
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
	}
	for {
		c.Attempt = l.Attempts() + 1
		r := hedge.Attempt(ctx, ic.Hedger, c)
		if r.Err == nil {
			l.Succeeded()
			if r.Winner > 0 {
				copyReply(reply, r.Value)
			}
			if ic.OnSuccess != nil {
				e := ic.event(cc, method, l.Attempts(), outcome{})
				e.Hedges = r.Hedges
				ic.OnSuccess(ctx, e)
			}
			return nil
		}
		var ce *copyError
		if !errors.As(r.Err, &ce) {
			return r.Err
		}
		if err := ic.failed(ctx, &l, cc, method, ce.o); err != nil {
			return err
		}
	}
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
