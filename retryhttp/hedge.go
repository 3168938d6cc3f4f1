package retryhttp

import (
	"context"
	"errors"
	"net/http"
	"strings"
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
	// The copies' goroutines share the call, so it lives on the heap; a copy
	// of it does, so that RoundTrip's own stays on the stack when nothing is
	// hedged. Only the body's state changes: RoundTrip closes what no
	// attempt took.
	c := new(call)
	*c = *rc
	defer func() { rc.body = c.body }()
	h := c.t.Hedge
	copies := 1 + max(h.MaxHedges, 1)
	slots := make([]attempt, copies)
	// Each copy's request has a context of its own, which the hedge's
	// cancellation ends only until the response arrives: a copy that
	// answers after another did must drain its body with its connection
	// still alive, or the connection is closed rather than reused.
	cancels := make([]context.CancelFunc, copies)
	var claimed atomic.Bool // a copy of the current attempt succeeded
	next := 1               // the number of the current attempt's first copy
	hc := hedge.Call[struct{}]{
		Key:      c.hedgeKey(),
		Pushback: pushback,
		Op: func(ctx context.Context, k int) (struct{}, error) {
			a := &slots[k]
			rctx, cancel := context.WithCancel(c.req.Context())
			cancels[k] = cancel
			rt := &arrival{base: c.base}
			if k > 0 && c.t.HedgeBase != nil {
				rt.base = c.t.HedgeBase
			}
			*a = attempt{hedge: k, base: rt}
			stop := context.AfterFunc(ctx, func() {
				if !rt.arrived.Load() {
					cancel()
				}
			})
			c.try(rctx, next+k, a)
			stop()
			if c.br != nil {
				a.ticket.Record(outcome(a))
			}
			err := c.verdict(a)
			if err == nil && !claimed.CompareAndSwap(false, true) {
				drain(a.resp)
				a.resp = nil
				return struct{}{}, errLost
			}
			return struct{}{}, err
		},
	}
	if c.br != nil {
		br := c.br
		hc.Allow = func() bool { return br.State() == breaker.Closed }
	}
	for {
		claimed.Store(false)
		hc.Attempt = l.Attempts() + 1
		r := hedge.Attempt(ctx, h, hc)
		next += 1 + r.Hedges
		r.Release() // the copies' own contexts are what the response needs
		keep := max(r.Winner, r.Failed)
		for i := range 1 + r.Hedges {
			if i == keep {
				continue
			}
			if a := &slots[i]; a.kind == final && a.resp != nil {
				// A response that came after the attempt had ended (on the
				// caller's context, say): nobody will read it.
				drain(a.resp)
				a.resp = nil
			}
			slots[i].release()
			cancels[i]()
		}
		a, release := &slots[keep], cancels[keep]
		if r.Err == nil {
			a.resp.Body = newReleasingBody(a.resp.Body, release)
			l.Succeeded()
			c.succeeded(a, l.Attempts())
			return a.resp, nil
		}
		d, err := l.Next(ctx, r.Err)
		if err == nil {
			c.retrying(a, l.Attempts(), d)
			a.release()
			release()
			err = l.Wait(ctx, d)
		}
		if err != nil {
			resp, err := c.stop(a, err)
			if resp != nil {
				resp.Body = newReleasingBody(resp.Body, release)
			} else {
				release()
			}
			return resp, err
		}
	}
}

// arrival sends a copy through base and notes when its response arrived:
// from then on the hedge's cancellation leaves the copy alone, so that a
// loser can drain its body and keep its connection.
type arrival struct {
	base    http.RoundTripper
	arrived atomic.Bool
}

func (a *arrival) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := a.base.RoundTrip(r)
	if err == nil {
		a.arrived.Store(true)
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
