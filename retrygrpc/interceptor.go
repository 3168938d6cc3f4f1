package retrygrpc

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
	"github.com/again-go/again/hedge"
	"github.com/again-go/again/limiter"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/throttle"
)

// Interceptor retries the gRPC calls of a client connection: Unary and
// Stream are its client interceptors, and DialOptions installs both. Every
// field follows the library's rule for zero and negative values (see
// backoff.Policy): the zero Interceptor retries UNAVAILABLE on
// backoff.Default()'s schedule, with no budget, no breaker and no hedging.
//
// Set the fields before the first call and do not change them afterwards.
// An Interceptor is safe for concurrent use by every call of the
// connections it is installed on; it must not be copied after first use,
// and one Interceptor, with its Budget and Breakers, may serve many
// connections.
type Interceptor struct {
	// Policy is the retry schedule. Each zero field takes its default, so
	// the zero Policy is backoff.Default(); Retries backoff.NoRetries makes
	// each call once (hedging still applies). An invalid Policy makes every
	// call fail with its *backoff.FieldError.
	Policy backoff.Policy

	// Codes lists the status codes that are retried. Nil means
	// UNAVAILABLE only; an empty non-nil slice retries no code.
	// RESOURCE_EXHAUSTED is retried when it is listed, and otherwise only
	// when the server sent a pushback (see ParsePushback): a quota that
	// runs out is not a transient failure unless the server says when to
	// come back.
	Codes []codes.Code

	// Classes, if not empty, gives failures a retry schedule per class
	// (see retry.Class and retry.WithClasses): match overloads with
	// IsOverload (RESOURCE_EXHAUSTED, UNAVAILABLE, and a breaker's or a
	// throttle's rejection). A failure that no class matches waits on
	// Policy's schedule, and Policy still caps every attempt. Nil, the
	// default, is Policy alone. With classes, each call costs one
	// allocation more.
	Classes []retry.Class

	// MaxRetryAfter is the longest pushback honoured: a server asking for
	// a longer wait ends the call at once with retry.ErrRetryAfterTooLong.
	// (A shorter one is waited at least the Policy's first delay.)
	// Zero means 1 minute (retry.DefaultMaxRetryAfter); negative honours
	// no pushback: a response carrying one ends the call.
	MaxRetryAfter time.Duration

	// AttemptTimeout bounds each attempt of a unary call, so that a
	// server that stalls costs one attempt, not the whole call: an attempt
	// that runs out of it fails with DEADLINE_EXCEEDED and is retried
	// (while the call's own deadline allows). Zero and negative mean no
	// limit. Streams ignore it: their attempts last as long as the stream.
	AttemptTimeout time.Duration

	// Budget, if not nil, limits retries across calls: a *retry.TokenBucket
	// shared by the calls to one service, or a fleet budget shared by many
	// processes. A call whose retry it refuses ends with retry.ErrBudget.
	// In a hedged call it pays for the retry after an attempt whose copies
	// all failed, and not for the hedges, which spend only the Hedger's
	// Budget (see Hedger).
	Budget retry.Budget

	// Breakers, if not nil, puts a circuit breaker (package breaker) in
	// front of every attempt, one per target (or per BreakerKey). An
	// attempt counts as a failure of its target when it ends with a code
	// that is retried, RESOURCE_EXHAUSTED or DEADLINE_EXCEEDED (unless the
	// caller's context ended: that counts for nothing); any other answer,
	// OK or an application's error, shows that the target is up. A call
	// that meets an open breaker fails at once with an error matching
	// breaker.ErrOpen (see BreakerWait), without reaching the network and
	// without spending Budget.
	Breakers *breaker.Group
	// BreakerKey, if not nil, names the breaker of a call: the method for
	// per-method breakers, for example. Nil means cc.Target(). It must be
	// safe for concurrent use and return keys from a bounded set (a Group
	// never forgets a key).
	BreakerKey func(cc *grpc.ClientConn, method string) string
	// BreakerWait is the longest a call waits for an open breaker to admit
	// a probe, as a retry waits for a pushback (within MaxRetryAfter and
	// the call's deadline). Zero, the default, and negative values wait
	// never: the call fails fast with the breaker's *breaker.OpenError, so
	// that the caller can fall back at once.
	BreakerWait time.Duration

	// Throttles, if not nil, holds the calls to an overloaded target,
	// unary and streams, back before they are sent: each attempt first asks the
	// Admitter of its key in the Group (by default an SRE
	// throttle.Throttler; a throttle.Rate learns a send rate instead),
	// before the breaker. RESOURCE_EXHAUSTED and UNAVAILABLE, and a
	// breaker's rejection, count as overload signals; every other outcome
	// as accepted. An attempt the Admitter refuses is not sent and costs
	// the Budget nothing: it fails with a *ThrottledError, code
	// UNAVAILABLE, retried as that code is (see Codes). A stream's
	// attempt counts as an overload signal if it fails so before the
	// stream commits (before a response reaches the caller), and as
	// accepted once it commits: what happens after the commit is not
	// counted.
	Throttles *throttle.Group
	// Limits, if not nil, bounds the attempts in flight per target
	// (package limiter: a fixed limit, or an adaptive one), unary and
	// streams, the first check of every attempt, before the throttle and
	// the breaker. Each attempt, each retry and each hedge holds a permit
	// of its own: a unary attempt until it returns, a stream's until the
	// stream ends (RecvMsg returns an error, io.EOF included, or the
	// call's context ends), never during a backoff wait. A hedge that
	// finds no free permit is not sent, and the copies already sent go
	// on. An attempt the limit refuses (at once, or after
	// Config.MaxWait) is not sent and ends the call at once with a
	// *LimitedError, code UNAVAILABLE, matching limiter.ErrLimited: the
	// Budget neither spends nor refunds for it, and the throttle and the
	// breaker never see it. An adaptive limit learns each attempt's time
	// (a stream's until its first response), with the attempt's timeout,
	// DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED and UNAVAILABLE as loss
	// signals.
	Limits *limiter.Group
	// LimitKey, if not nil, names the Limiter of a call in Limits: the
	// method, for per-method limits. Nil means cc.Target(). It must be
	// safe for concurrent use.
	LimitKey func(cc *grpc.ClientConn, method string) string
	// ThrottleKey, if not nil, names the Admitter of a call in Throttles:
	// the method, for per-method throttling. Nil means cc.Target(). It
	// must be safe for concurrent use.
	ThrottleKey func(cc *grpc.ClientConn, method string) string

	// Hedger, if not nil, hedges the unary calls of the methods that
	// Idempotent marks (see package hedge): a copy of an attempt that has
	// not answered after the Hedger's delay is sent again, and the first
	// success wins. Hedge only methods that may run twice at once: reads,
	// and writes the server makes idempotent. The hedged attempts are
	// attempts of the retry loop: with Policy.Retries backoff.NoRetries,
	// hedging is all there is, as in gRPC's A6 hedging policy. Hedges spend
	// the Hedger's Budget, retries the Interceptor's: give each a bucket of
	// its own. The Hedger's latency windows are kept per method. Streams are
	// never hedged.
	Hedger *hedge.Hedger
	// Idempotent reports whether a method may be hedged; Methods makes one
	// from a list of names. Nil hedges nothing. It must be safe for
	// concurrent use.
	Idempotent func(method string) bool

	// OnRetry, OnGiveUp and OnSuccess, if not nil, are called after an
	// attempt that will be retried (before the wait), when a call fails
	// for good, and when a call succeeds (see Event). They run on the
	// goroutine of the call (for a hedged call: the caller's, after the
	// attempts have been collected), with the call's context, and must be
	// safe for concurrent use: calls run at once.
	OnRetry   func(ctx context.Context, e Event)
	OnGiveUp  func(ctx context.Context, e Event)
	OnSuccess func(ctx context.Context, e Event)

	// attempts keeps the per-attempt scratch of unary calls (the call
	// options and trailer that read the pushback) for reuse, so that a
	// call adds no allocation to the connection's own.
	attempts sync.Pool
}

// DialOptions returns the dial options of the recommended setup: ic's
// unary and stream interceptors, and grpc.WithDisableRetry, which turns
// grpc-go's own retries off so that attempts do not multiply (see the
// package documentation). grpc-go offers no public way to join several
// dial options into one, so this returns a new slice each time, to pass
// with the others:
//
//	conn, err := grpc.NewClient(target, append(ic.DialOptions(), grpc.WithTransportCredentials(creds))...)
func (ic *Interceptor) DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(ic.Unary),
		grpc.WithChainStreamInterceptor(ic.Stream),
		grpc.WithDisableRetry(),
	}
}

// Unary is a grpc.UnaryClientInterceptor that retries the call, and
// hedges it if Hedger is set and Idempotent marks its method. It returns
// nil once an attempt succeeds. A call that fails on its first attempt
// with an error that is not retried returns that error unchanged; any
// other failure is a *retry.Error whose Reason says why retrying stopped
// and which wraps the last attempt's status error, so that status.Code
// and status.FromError still read its code, and errors.Is(err,
// retry.ErrExhausted) (or another reason) tells why. A call meeting an
// open breaker returns an error matching breaker.ErrOpen whose code is
// UNAVAILABLE. A call whose context ends (during an attempt or a wait)
// ends with CANCELED, or DEADLINE_EXCEEDED for a deadline, as grpc-go's
// own calls do, whatever the last attempt's code; errors.Is(err,
// retry.ErrCanceled) and errors.Is(err, context.Canceled) hold after a
// retry.
func (ic *Interceptor) Unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if ic.hedges(method) {
		return ic.hedge(ctx, method, req, reply, cc, invoker, opts)
	}
	l, br, err := ic.begin(ctx, cc, method, ic.AttemptTimeout)
	if err != nil {
		return err
	}
	lim, err := ic.limiterFor(cc, method)
	if err != nil {
		return err
	}
	for {
		actx := shedMetadata(ctx, l.Attempts()+1)
		var a outcome
		if lim == nil {
			a = ic.unaryAttempt(actx, br, method, req, reply, cc, invoker, opts)
		} else {
			a = ic.limitedAttempt(actx, lim, nil, func(ctx context.Context) outcome {
				return ic.unaryAttempt(ctx, br, method, req, reply, cc, invoker, opts)
			})
		}
		if a.err == nil {
			l.Succeeded()
			if ic.OnSuccess != nil {
				ic.OnSuccess(ctx, ic.event(cc, method, l.Attempts(), l.Class(), a))
			}
			return nil
		}
		if err := ic.failed(ctx, &l, cc, method, a); err != nil {
			return err
		}
	}
}

// begin starts a call to method: its retry loop, and its breaker (nil
// without Breakers). Unary calls, hedged or not, and streams start alike,
// except for reserve, the time the loop keeps for an attempt before the
// call's deadline: AttemptTimeout for unary calls, which it bounds, and 0
// (backoff.DeadlineReserve) for streams.
func (ic *Interceptor) begin(ctx context.Context, cc *grpc.ClientConn, method string, reserve time.Duration) (retry.Loop, *breaker.Breaker, error) {
	opts := ic.loopOptions(reserve)
	l, err := retry.NewLoop(ctx, ic.Policy, opts[:]...)
	if err != nil {
		return retry.Loop{}, nil, err
	}
	br, err := ic.breakerFor(cc, method)
	if err != nil {
		return retry.Loop{}, nil, err
	}
	return l, br, nil
}

// loopOptions returns the options of a call's retry loop, in an array
// that stays on the caller's stack.
func (ic *Interceptor) loopOptions(reserve time.Duration) [5]retry.Option {
	// A6 and grpc-go restart the backoff after a pushback: the next
	// retry that no pushback drives waits the policy's first delay.
	opts := [...]retry.Option{retry.WithBudget(ic.Budget), retry.WithMaxRetryAfter(ic.MaxRetryAfter), retry.WithRestartAfterHint(), retry.WithDeadlineReserve(reserve), {}}
	if len(ic.Classes) > 0 {
		opts[4] = retry.WithClasses(ic.Classes...)
	}
	return opts
}

// outcome is what one attempt came to.
type outcome struct {
	err      error
	pushback Pushback
	rejected bool // a breaker refused the attempt: err is its *OpenError
	timedOut bool // the attempt's own AttemptTimeout ended it
	final    bool // the attempt cannot be repeated, whatever its code
	stream   bool // the attempt is a stream's
}

// unaryState is the reusable scratch of one unary attempt.
type unaryState struct {
	trailer metadata.MD
	opts    []grpc.CallOption
}

// unaryAttempt makes one attempt of a unary call through its breaker.
func (ic *Interceptor) unaryAttempt(ctx context.Context, br *breaker.Breaker, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts []grpc.CallOption) outcome {
	adm, o, ok := ic.admit(ctx, cc, method)
	if !ok {
		return o
	}
	var tk breaker.Ticket
	if br != nil {
		var err error
		if tk, err = br.Allow(ctx); err != nil {
			return settle(adm, outcome{err: openError(err), rejected: true})
		}
	}
	st, _ := ic.attempts.Get().(*unaryState)
	if st == nil {
		st = new(unaryState)
	}
	st.opts = append(append(st.opts[:0], opts...), grpc.Trailer(&st.trailer))
	actx, cancel := ctx, context.CancelFunc(nil)
	if ic.AttemptTimeout > 0 {
		actx, cancel = context.WithTimeout(ctx, ic.AttemptTimeout)
	}
	err := invoker(actx, method, req, reply, cc, st.opts...)
	o = outcome{err: err}
	if err != nil {
		o.pushback = hintOf(st.trailer, err)
		o.timedOut = cancel != nil && ctx.Err() == nil && attemptExpired(actx, err)
	}
	if cancel != nil {
		cancel()
	}
	// The options may hold the caller's own pointers: forget them before
	// the scratch is reused.
	clear(st.opts)
	st.trailer = nil
	ic.attempts.Put(st)
	if br != nil {
		tk.Record(ic.breakerOutcome(ctx, o))
	}
	return settle(adm, o)
}

// attemptExpired reports whether an attempt failed because its own
// context's deadline passed. The server, which got the deadline in the
// request, may report DEADLINE_EXCEEDED a moment before the client's
// timer fires, hence the look at the clock.
func attemptExpired(actx context.Context, err error) bool {
	if actx.Err() != nil {
		return true
	}
	dl, ok := actx.Deadline()
	return ok && status.Code(err) == codes.DeadlineExceeded && !time.Now().Before(dl)
}

// retryable reports whether an attempt's error may be retried by the
// rules of Codes and the pushback, before the loop's own limits.
func (ic *Interceptor) retryable(ctx context.Context, o outcome) bool {
	if ctx.Err() != nil || o.final {
		return false
	}
	if o.pushback.Present && !o.pushback.Retry {
		return false
	}
	if o.timedOut {
		return true
	}
	code := status.Code(o.err)
	if code == codes.ResourceExhausted && o.pushback.Present {
		return true
	}
	if ic.Codes == nil {
		return code == codes.Unavailable
	}
	return slices.Contains(ic.Codes, code)
}

// breakerOutcome says how an attempt counts for its target's breaker.
func (ic *Interceptor) breakerOutcome(ctx context.Context, o outcome) breaker.Outcome {
	switch {
	case o.err == nil:
		return breaker.Success
	case ctx.Err() != nil:
		return breaker.Neutral
	}
	switch code := status.Code(o.err); {
	case code == codes.Unavailable, code == codes.ResourceExhausted, code == codes.DeadlineExceeded:
		return breaker.Failure
	case ic.Codes != nil && slices.Contains(ic.Codes, code):
		return breaker.Failure
	}
	return breaker.Success
}

// verdict turns a failed attempt into the error the retry loop judges: a
// permanent one when the rules forbid a retry, one carrying the pushback's
// wait when the server sent one.
func (ic *Interceptor) verdict(ctx context.Context, o outcome) error {
	switch {
	case o.rejected:
		return o.err // a breaker's rejection carries its own wait
	case !ic.retryable(ctx, o):
		return retry.Permanent(o.err)
	case o.pushback.Present:
		return retry.After(o.pushback.Wait, o.err)
	}
	return o.err
}

// failed decides what follows a failed attempt: nil once the next attempt
// may be made (after the wait), or the error that ends the call, after
// the hooks.
func (ic *Interceptor) failed(ctx context.Context, l *retry.Loop, cc *grpc.ClientConn, method string, o outcome) error {
	if o.rejected && !ic.waitsFor(o.err) {
		ic.giveUp(ctx, cc, method, l.Attempts()+1, "", o, breaker.ErrOpen) // not classed: the loop never saw it
		return o.err
	}
	d, err := l.Next(ctx, ic.verdict(ctx, o))
	if err != nil {
		var re *retry.Error
		reason := err
		if errors.As(err, &re) {
			reason = re.Reason
		}
		ic.giveUp(ctx, cc, method, l.Attempts(), l.Class(), o, reason)
		if l.Attempts() == 1 && (reason == retry.ErrPermanent || reason == retry.ErrCanceled) {
			err = o.err // nothing was retried: the attempt's own error
		}
		if reason == retry.ErrCanceled {
			return contextEnded(ctx, err)
		}
		return err
	}
	if ic.OnRetry != nil {
		e := ic.event(cc, method, l.Attempts(), l.Class(), o)
		e.Delay = d
		ic.OnRetry(ctx, e)
	}
	if err := l.Wait(ctx, d); err != nil {
		return contextEnded(ctx, err) // Wait fails only when ctx ends
	}
	return nil
}

// contextEnded returns err, the error of a call whose context ended, with
// the status code grpc-go gives such a call, as its own calls end:
// CANCELED when the caller canceled it, DEADLINE_EXCEEDED when its
// deadline passed (status.FromContextError), not the code of the last
// attempt, which the context's end cut short (an UNAVAILABLE that was
// about to be retried). An err that has that code already is returned as
// it is.
func contextEnded(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	code := status.FromContextError(ctx.Err()).Code()
	if status.Code(err) == code {
		return err
	}
	return &endedError{err: err, code: code}
}

// endedError is the error of a call that its context ended: err, the
// *retry.Error whose Reason is retry.ErrCanceled (or the attempt's own
// error), which errors.Is and errors.As search, with the code of the
// context's end for status.Code and status.FromError.
type endedError struct {
	err  error
	code codes.Code
}

func (e *endedError) Error() string              { return e.err.Error() }
func (e *endedError) Unwrap() error              { return e.err }
func (e *endedError) GRPCStatus() *status.Status { return status.New(e.code, e.err.Error()) }

// giveUp calls OnGiveUp about attempt number attempt, whose failure is of
// class class.
func (ic *Interceptor) giveUp(ctx context.Context, cc *grpc.ClientConn, method string, attempt int, class string, o outcome, reason error) {
	if ic.OnGiveUp == nil {
		return
	}
	e := ic.event(cc, method, attempt, class, o)
	e.Reason = reason
	ic.OnGiveUp(ctx, e)
}

// event describes attempt number n of a call, with the class of the
// latest failure (retry.Loop.Class).
func (ic *Interceptor) event(cc *grpc.ClientConn, method string, n int, class string, o outcome) Event {
	e := Event{
		Event:    retry.Event{Attempt: n, MaxAttempts: ic.Policy.MaxAttempts(), Err: o.err, Class: class},
		Method:   method,
		Code:     status.Code(o.err),
		Pushback: o.pushback,
		Stream:   o.stream,
	}
	if cc != nil {
		e.Target = cc.Target()
	}
	return e
}
