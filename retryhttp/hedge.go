package retryhttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/again-go/again/breaker"
	"github.com/again-go/again/hedge"
	"github.com/again-go/again/limiter"
	"github.com/again-go/again/retry"
)

// errLost is the answer of a copy that succeeded after another copy had:
// its response was drained and closed at once, while its connection was
// still alive, so that the connection goes back to the pool.
var errLost = errors.New("retryhttp: another copy of the request answered first")

// hedgeable reports whether the call's attempts may be hedged: a Hedge is
// set, the request may run twice at once (a safe method, or an
// Idempotency-Key: hedgeableMethod), and each copy can have a body of its
// own (no body, or GetBody).
func (c *call) hedgeable() bool {
	h := c.t.Hedge
	if h == nil || h.After < 0 || h.MaxHedges < 0 || !c.hedgeSafe {
		return false
	}
	r := c.req
	return r.Body == nil || r.Body == http.NoBody || r.GetBody != nil
}

// hedged is RoundTrip's loop with each attempt hedged by t.Hedge: a hedged
// attempt, all its copies together, is one attempt of the retry loop.
func (rc *call) hedged(ctx context.Context, l *retry.Loop) (*http.Response, error) {
	hc := getHedgedCall(rc)
	defer hc.put(rc)
	c := &hc.c
	h := c.t.Hedge
	call := hedge.Call[struct{}]{
		Key:      c.hedgeKey(),
		Pushback: pushback,
		Allow:    hc.allow,
		Op:       hc.op,
		// The copy whose answer is returned keeps its context until the
		// caller closes the response's body, which reads it.
		KeepWinner: true,
	}
	if !c.body.empty() || c.conc != nil {
		call.Prepare = hc.prepare
	}
	for {
		hc.claimed.Store(false)
		call.Attempt = l.Attempts() + 1
		r := hedge.Attempt(ctx, h, call)
		hc.next += 1 + r.Hedges
		keep := max(r.Winner, r.Failed)
		for i := range 1 + r.Hedges {
			if i == keep {
				continue
			}
			if a := &hc.slots[i]; a.kind == final && a.resp != nil {
				// A response that came after the attempt had ended (on the
				// caller's context, say): nobody will read it.
				drain(a.resp)
				a.resp = nil
			}
			hc.slots[i].release()
		}
		a := &hc.slots[keep]
		err := r.Err
		if err != nil && pushback(err) {
			// A failed attempt's error is its first pushback, if a copy
			// pushed back (hedge.Result.Err), or the error of an attempt
			// that was not hedged (its key still warming up): either way,
			// no retry of the request is hedged.
			hc.pushedBack.Store(true)
		}
		if err == nil && a.unread {
			err = c.readWinner(ctx, a)
		}
		if err == nil {
			a.resp.Body = newReleasingBody(a.resp.Body, r.Release)
			l.Succeeded()
			c.succeeded(a, l)
			return a.resp, nil
		}
		d, err := l.Next(ctx, err)
		if err == nil {
			c.retrying(a, l, d)
			a.release()
			r.Release()
			err = l.Wait(ctx, d)
		}
		if err != nil {
			resp, err := c.stop(a, err, l.Class())
			if resp != nil {
				resp.Body = newReleasingBody(resp.Body, r.Release)
			} else {
				r.Release()
			}
			return resp, err
		}
	}
}

// hedgedCall is what the copies of a hedged RoundTrip share: the call,
// which their goroutines read, and a slot per copy for its outcome. It is
// pooled, with the functions given to hedge.Attempt made once, so that
// being ready to hedge costs a request only what a copy's request needs of
// its own (see BENCHMARKS.md).
type hedgedCall struct {
	c       call
	slots   []attempt
	claimed atomic.Bool // a copy of the current attempt succeeded
	// pushedBack: an attempt failed with the server pushing back
	// (pushback), and the rest of the request sends no hedge: a server
	// that asked for less load gets its retries one copy at a time.
	pushedBack atomic.Bool
	next       int     // the number of the current attempt's first copy
	first      arrival // sends copy 0
	hedges     arrival // sends the hedges
	op         func(context.Context, int) (struct{}, error)
	allow      func() bool
	prepare    func(int) error
	bodies     []io.ReadCloser  // the hedges' bodies, made by prepare
	permits    []limiter.Permit // the hedges' permits, taken by prepare
}

var hedgedCalls sync.Pool // of *hedgedCall, reset

func getHedgedCall(rc *call) *hedgedCall {
	hc, _ := hedgedCalls.Get().(*hedgedCall)
	if hc == nil {
		hc = &hedgedCall{}
		hc.op = hc.copy
		hc.prepare = hc.prepareHedge
		hc.allow = func() bool {
			return !hc.pushedBack.Load() && (hc.c.br == nil || hc.c.br.State() == breaker.Closed)
		}
	}
	hc.c = *rc
	hc.next = 1
	hc.pushedBack.Store(false)
	h := rc.t.Hedge
	if n := 1 + max(h.MaxHedges, 1); cap(hc.slots) >= n {
		hc.slots = hc.slots[:n]
		hc.bodies = hc.bodies[:n]
	} else {
		hc.slots = make([]attempt, n)
		hc.bodies = make([]io.ReadCloser, n)
	}
	if n := len(hc.slots); rc.conc != nil && cap(hc.permits) < n {
		hc.permits = make([]limiter.Permit, n)
	}
	hc.permits = hc.permits[:min(len(hc.slots), cap(hc.permits))]
	hc.first.base = rc.base
	hc.hedges.base = rc.base
	if rc.t.HedgeBase != nil {
		hc.hedges.base = rc.t.HedgeBase
	}
	return hc
}

// put gives the body's state back to rc, which closes what no attempt
// took, and hc to the pool, holding nothing of the request.
func (hc *hedgedCall) put(rc *call) {
	rc.body = hc.c.body
	hc.c = call{}
	clear(hc.slots)
	clear(hc.bodies)
	clear(hc.permits)
	hc.first.base, hc.hedges.base = nil, nil
	hedgedCalls.Put(hc)
}

// copy is the Op of the hedged attempt: copy k of it, on its own
// goroutine. A copy that succeeds after another did is drained and closed
// at once, while its connection is alive (see arrival).
//
// With ReadBody, a copy's final response is left unread: only the winner's
// body is read, by readWinner on the calling goroutine, so that ReadBody
// never runs for two copies at once and a winner's body that is cut or
// stalls fails the attempt, which is then retried, as an attempt that is
// not hedged would be.
func (hc *hedgedCall) copy(ctx context.Context, k int) (struct{}, error) {
	c := &hc.c
	a := &hc.slots[k]
	*a = attempt{hedge: k, base: &hc.first, unread: c.t.ReadBody != nil}
	if k > 0 {
		a.base = &hc.hedges
		a.body, hc.bodies[k] = hc.bodies[k], nil
		if c.conc != nil {
			a.permit, hc.permits[k] = hc.permits[k], limiter.Permit{}
		}
	}
	c.try(ctx, hc.next+k, a)
	err := c.verdict(a)
	won := err == nil && hc.claimed.CompareAndSwap(false, true)
	if c.br != nil && !(won && a.unread) {
		// The winner's outcome is known once its body is read.
		a.ticket.Record(outcome(a))
	}
	if err == nil && !won {
		drain(a.resp)
		a.resp = nil
		return struct{}{}, errLost
	}
	return struct{}{}, err
}

// prepareHedge is the Prepare of the hedged attempt: it makes hedge k's
// request body from GetBody before the hedge is sent, so that a GetBody
// that fails sends no hedge (hedge.Call.Prepare) instead of failing the
// attempt while its first copy may still succeed.
func (hc *hedgedCall) prepareHedge(k int) error {
	if !hc.prepareHedgePermit(k) {
		return errNoPermit
	}
	if hc.c.body.empty() {
		return nil
	}
	rb, err := hc.c.body.next(hc.next + k)
	if err != nil {
		if hc.c.conc != nil {
			hc.permits[k].Release()
		}
		return err
	}
	hc.bodies[k] = rb
	return nil
}

// readWinner gives the winning copy's final response to ReadBody, within
// the copy's AttemptTimeout, and returns the verdict on the attempt, as
// try does for an attempt that is not hedged.
func (c *call) readWinner(ctx context.Context, a *attempt) error {
	resp := a.resp
	a.unread, a.resp = false, nil
	c.readBody(ctx, a.sent, a, resp)
	a.sent = nil
	if c.conc != nil {
		c.settlePermit(a)
	}
	if c.br != nil {
		a.ticket.Record(outcome(a))
	}
	return c.verdict(a)
}

// arrival sends a copy through base and tells the hedged attempt when its
// response arrived (hedge.Answered): from then on the attempt's
// cancellation leaves the copy alone, so that a loser can drain its body
// and keep its connection rather than have it cut.
type arrival struct {
	base http.RoundTripper
}

func (a *arrival) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := a.base.RoundTrip(r)
	if err == nil {
		hedge.Answered(r.Context())
	}
	return resp, err
}

// hedgeKey is the key of the request's latency window: its breaker's key.
func (c *call) hedgeKey() string {
	if c.t.BreakerKey != nil {
		return c.t.BreakerKey(c.req)
	}
	if c.req.URL != nil {
		return c.req.URL.Host
	}
	return ""
}

// pushback reports whether a copy's failure is the server pushing back,
// which stops the request's hedging, its retries' included: a wait hint
// (Retry-After and the rate-limit headers), a 429 or a 503 without one, or
// a breaker's rejection.
func pushback(err error) bool {
	if _, hinted := retry.RetryAfter(err); hinted || retry.IsRejected(err) {
		return true
	}
	var se *statusError
	return errors.As(err, &se) && (strings.HasPrefix(se.status, "429") || strings.HasPrefix(se.status, "503"))
}
