package retryhttp

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/again-go/again/breaker"
	"github.com/again-go/again/hedge"
	"github.com/again-go/again/retry"
)

// errLost is the answer of a copy that succeeded after another copy had:
// its response was drained and closed at once, while its connection was
// still alive, so that the connection goes back to the pool.
var errLost = errors.New("retryhttp: another copy of the request answered first")

// hedgeable reports whether the call's attempts may be hedged: a Hedge is
// set, the request may be repeated (its method, or an Idempotency-Key),
// and each copy can have a body of its own (no body, or GetBody).
func (c *call) hedgeable() bool {
	h := c.t.Hedge
	if h == nil || h.After < 0 || h.MaxHedges < 0 || !c.replayable {
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
		Op:       hc.op,
		// The copy whose answer is returned keeps its context until the
		// caller closes the response's body, which reads it.
		KeepWinner: true,
	}
	if c.br != nil {
		call.Allow = hc.allow
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
		if r.Err == nil {
			a.resp.Body = newReleasingBody(a.resp.Body, r.Release)
			l.Succeeded()
			c.succeeded(a, l.Attempts())
			return a.resp, nil
		}
		d, err := l.Next(ctx, r.Err)
		if err == nil {
			c.retrying(a, l.Attempts(), d)
			a.release()
			r.Release()
			err = l.Wait(ctx, d)
		}
		if err != nil {
			resp, err := c.stop(a, err)
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
	next    int         // the number of the current attempt's first copy
	first   arrival     // sends copy 0
	hedges  arrival     // sends the hedges
	op      func(context.Context, int) (struct{}, error)
	allow   func() bool
}

var hedgedCalls sync.Pool // of *hedgedCall, reset

func getHedgedCall(rc *call) *hedgedCall {
	hc, _ := hedgedCalls.Get().(*hedgedCall)
	if hc == nil {
		hc = &hedgedCall{}
		hc.op = hc.copy
		hc.allow = func() bool { return hc.c.br.State() == breaker.Closed }
	}
	hc.c = *rc
	hc.next = 1
	h := rc.t.Hedge
	if n := 1 + max(h.MaxHedges, 1); cap(hc.slots) >= n {
		hc.slots = hc.slots[:n]
	} else {
		hc.slots = make([]attempt, n)
	}
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
	hc.first.base, hc.hedges.base = nil, nil
	hedgedCalls.Put(hc)
}

// copy is the Op of the hedged attempt: copy k of it, on its own
// goroutine. A copy that succeeds after another did is drained and closed
// at once, while its connection is alive (see arrival).
func (hc *hedgedCall) copy(ctx context.Context, k int) (struct{}, error) {
	c := &hc.c
	a := &hc.slots[k]
	*a = attempt{hedge: k, base: &hc.first}
	if k > 0 {
		a.base = &hc.hedges
	}
	c.try(ctx, hc.next+k, a)
	if c.br != nil {
		a.ticket.Record(outcome(a))
	}
	err := c.verdict(a)
	if err == nil && !hc.claimed.CompareAndSwap(false, true) {
		drain(a.resp)
		a.resp = nil
		return struct{}{}, errLost
	}
	return struct{}{}, err
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
// which stops the request's hedging: a wait hint (Retry-After and the
// rate-limit headers), a 429 or a 503 without one, or a breaker's
// rejection.
func pushback(err error) bool {
	if _, hinted := retry.RetryAfter(err); hinted || retry.IsRejected(err) {
		return true
	}
	var se *statusError
	return errors.As(err, &se) && (strings.HasPrefix(se.status, "429") || strings.HasPrefix(se.status, "503"))
}
