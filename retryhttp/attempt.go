package retryhttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/again-go/again/breaker"
	"github.com/again-go/again/limiter"
	"github.com/again-go/again/retry"
)

// attempt is the outcome of one attempt, as a value, like a
// rate.Reservation: what the attempt holds (its breaker ticket, its open
// response, its timeout) travels with it instead of living in the call, so
// that attempts of one request can run at once and the verdict on one is a
// function of it alone.
type attempt struct {
	kind   attemptKind       // what came of it
	hedge  int               // which copy of its attempt: 0, or n for the n-th hedge
	base   http.RoundTripper // sends a hedge's copy, wrapping Base; nil: Base
	ticket breaker.Ticket    // the breaker's admission; zero without Breakers or when rejected
	lim    *limit            // its AttemptTimeout, or nil once released
	// permit is its place under Limits, while it holds one: given back
	// once nothing is open, or moved into the final response's body.
	permit limiter.Permit

	// body, if not nil, is the request body the attempt sends, made
	// before it started (a hedge's, from GetBody); nil: try makes it.
	body io.ReadCloser
	// unread: a final response whose body ReadBody has yet to read, in
	// sent's context and within lim, once the copy has won (a hedged
	// attempt reads only the winner's body: see readWinner).
	unread bool
	sent   *http.Request

	// resp is the response, still open: the final one (already wrapped by
	// finalResponse), or one with a status to retry.
	resp       *http.Response
	hint       time.Duration // the wait resp asked for, when hintHeader is not ""
	hintHeader string

	// err is the network failure (netFailure), the breaker's rejection
	// (rejected), or what ended the call (broken).
	err     error
	class   errorKind // netFailure: how far the request got
	checked bool      // netFailure: CheckRetry was asked
	retry   bool      // netFailure: CheckRetry's answer
	stop    error     // netFailure, badStatus: CheckRetry's error, if any

	// ctxErr and cause are the caller's context's Err and Cause if it had
	// ended when a network failure came back.
	ctxErr, cause error
}

// attemptKind is what came of an attempt.
type attemptKind uint8

const (
	// final: resp ends the call.
	final attemptKind = iota
	// badStatus: resp has a status to retry.
	badStatus
	// netFailure: err is a network failure (or the attempt's timeout).
	netFailure
	// rejected: err is the breaker's *breaker.OpenError, or the
	// throttle's rejection; nothing was sent.
	rejected
	// broken: err ends the call, whatever the rules: the request body could
	// not be made, ReadBody failed on its own, or CheckRetry stopped on a
	// response.
	broken
)

// try makes attempt n into a, a zero attempt: the breaker's admission, the
// request, and what came back, checked by CheckRetry or the status rules.
// It reads c and writes nothing shared, so attempts may run at once (only
// attempt 1 takes the caller's body). The caller records the ticket (see
// outcome) and releases the attempt (release) unless it returns its
// response. It fills the caller's value rather than returning one: the copy
// would cost every request a few nanoseconds.
func (c *call) try(ctx context.Context, n int, a *attempt) {
	if c.conc != nil {
		if !c.acquire(ctx, a) {
			return
		}
		defer c.settlePermit(a)
	}
	if c.adm != nil {
		if !c.admit(ctx, a) {
			return
		}
		defer c.settle(a)
	}
	if c.br != nil {
		tk, err := c.br.Allow(ctx)
		if err != nil {
			// Rejected: neither the network nor the request body is touched.
			a.kind, a.err = rejected, err
			return
		}
		a.ticket = tk
	}
	rb := a.body
	if rb == nil {
		var err error
		if rb, err = c.body.next(n); err != nil {
			a.kind, a.err = broken, err
			return
		}
	}
	r := c.req
	if n > 1 || c.changed || ctx != c.req.Context() {
		// A hedge's copies have contexts of their own.
		r = c.clone(ctx, rb)
	}
	if d := c.t.AttemptTimeout; d > 0 {
		var actx context.Context
		actx, a.lim = newLimit(ctx, d)
		if r == c.req {
			r = c.clone(actx, rb)
		} else {
			r = r.WithContext(actx)
		}
	}
	r = c.shedHeaders(r, n, rb)
	base := a.base
	if base == nil {
		base = c.base
	}
	resp, err := base.RoundTrip(r)
	switch {
	case err != nil && resp != nil:
		resp.Body.Close() // a broken RoundTripper; net/http's Client ignores such a response too
	case err == nil && resp == nil:
		err = errNoResponse
	case err == nil && resp.Body == nil:
		// Test doubles often leave it out; net/http's Client accepts that
		// and so must the drain and the final response's wrapper.
		resp.Body = http.NoBody
	}
	if err != nil {
		c.failed(ctx, r, a, err)
		return
	}
	retryable := false
	if c.t.CheckRetry != nil && ctx.Err() == nil {
		var stop error
		// As in go-retryablehttp, the answer decides and the error says
		// why: with true it is kept as the attempt's reason; with false it
		// ends the call.
		if retryable, stop = c.t.CheckRetry(ctx, resp, nil); retryable {
			a.stop = stop
		} else if stop != nil {
			drain(resp)
			a.release()
			a.kind, a.err = broken, &attemptError{err: &statusError{status: resp.Status, code: resp.StatusCode}, also: stop}
			return
		}
	} else {
		retryable = retryableStatus(c.t.RetryStatuses, resp.StatusCode)
	}
	switch {
	case retryable:
		// The attempt's limit keeps running: it bounds the draining too.
		a.kind, a.resp = badStatus, resp
		a.hint, a.hintHeader = serverHint(resp.Header, time.Now())
		return
	case c.t.ReadBody != nil && a.unread:
		// A copy of a hedged attempt: the body is read if it wins, and
		// the attempt's limit keeps running for it.
		a.resp, a.sent = resp, r
		return
	case c.t.ReadBody != nil:
		c.readBody(ctx, r, a, resp)
		return
	case a.lim != nil && !a.lim.timer.Stop():
		// The limit passed as the headers arrived: the body is doomed.
		drain(resp)
		c.failed(ctx, r, a, context.Cause(r.Context()))
		return
	}
	a.resp = finalResponse(resp, a.lim)
	a.lim = nil // the body releases it
}

// failed fills a with the network failure err of its request r.
func (c *call) failed(ctx context.Context, r *http.Request, a *attempt, err error) {
	if a.lim != nil {
		cause := context.Cause(r.Context())
		a.release()
		if te, ok := cause.(*timeoutError); ok && ctx.Err() == nil {
			err = te
		}
	}
	a.kind, a.err = netFailure, err
	if ctx.Err() != nil {
		a.ctxErr, a.cause = ctx.Err(), context.Cause(ctx)
		return
	}
	if _, ok := err.(*timeoutError); ok {
		a.class = mayBeSent
	} else {
		a.class = classify(err)
	}
	if c.t.CheckRetry != nil {
		a.checked = true
		a.retry, a.stop = c.t.CheckRetry(ctx, nil, err)
	}
}

// readBody gives the final response to ReadBody within the attempt and its
// limit, and fills a with it consumed, or with the attempt's failure.
func (c *call) readBody(ctx context.Context, r *http.Request, a *attempt, resp *http.Response) {
	body := &watchedBody{rc: resp.Body}
	resp.Body = body
	err := c.t.ReadBody(resp)
	body.rc.Close()
	resp.Body = http.NoBody
	var cause error
	if a.lim != nil {
		cause = context.Cause(r.Context())
		a.release()
	}
	switch {
	case err == nil:
		a.resp = resp
		return
	case body.err == nil || !errors.Is(err, body.err):
		// ReadBody's own failure: retrying would not help it.
		a.kind, a.err = broken, err
		return
	}
	if te, ok := cause.(*timeoutError); ok && ctx.Err() == nil {
		err = te
	}
	c.failed(ctx, r, a, err)
}

// watchedBody remembers the error its reader returned, so that a failure
// to read the body is told apart from ReadBody's own.
type watchedBody struct {
	rc  io.ReadCloser
	err error
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}

func (b *watchedBody) Close() error { return nil } // readBody closes it

// verdict is what the retry loop must do with attempt a: nil for a
// response that ends the call, otherwise the error for the loop, marked
// with retry.Permanent when it must not be retried, or with retry.After
// when the server asked for a wait. It depends only on a and on what the
// call fixed before its first attempt.
func (c *call) verdict(a *attempt) error {
	if a.kind == final {
		return nil // kept apart so that this check inlines into the loop
	}
	return c.failure(a)
}

// failure is the verdict on a failed attempt.
func (c *call) failure(a *attempt) error {
	switch a.kind {
	case rejected:
		return a.err
	case broken:
		return retry.Permanent(a.err)
	case badStatus:
		se := &statusError{status: a.resp.Status, code: a.resp.StatusCode, why: a.stop}
		switch {
		case c.max == 1:
			// No retry is planned: the loop reports exhaustion, which is
			// the true reason.
		case !c.replayable:
			se.refused = errNotIdempotent(c.req.Method)
		case !c.body.replayable():
			se.refused = errBodyTooLarge
		}
		if se.refused != nil {
			return retry.Permanent(se)
		}
		if a.hintHeader != "" {
			return retry.After(a.hint, se)
		}
		return se
	}
	err := a.err
	if a.ctxErr != nil {
		// The caller's context ended: make sure the loop sees its error.
		if !errors.Is(err, a.ctxErr) {
			err = &attemptError{err: err, also: a.cause}
		}
		return err
	}
	class := a.class
	if a.checked {
		switch {
		case !a.retry && a.stop != nil:
			return retry.Permanent(&attemptError{err: err, also: a.stop})
		case !a.retry:
			return retry.Permanent(err)
		case a.stop != nil:
			err = &attemptError{err: err, also: a.stop} // retried; the error is why
		}
		if class == permanent {
			class = mayBeSent // retried on the hook's word, as safely as any other
		}
	}
	switch {
	case class == permanent:
		return retry.Permanent(err)
	case c.max == 1:
		return err // no retry is planned anyway
	case class == mayBeSent && !c.replayable:
		return retry.Permanent(&attemptError{err: err, also: errNotIdempotent(c.req.Method)})
	case !c.body.replayable():
		return retry.Permanent(&attemptError{err: err, also: errBodyTooLarge})
	}
	return err
}

// release drains and closes a's response, if it holds one to retry, and
// frees its timeout and its permit.
func (a *attempt) release() {
	if a.kind == badStatus && a.resp != nil {
		drain(a.resp)
		a.resp = nil
	}
	if a.lim != nil {
		a.lim.release()
		a.lim = nil
	}
	a.permit.Release()
}
