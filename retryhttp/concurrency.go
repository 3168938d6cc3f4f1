package retryhttp

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync/atomic"

	"github.com/again-go/again/limiter"
)

// limiterFor returns the Limiter of req's host in t.Limits, or nil without
// Limits.
func (t *Transport) limiterFor(req *http.Request) (*limiter.Limiter, error) {
	if t.Limits == nil {
		return nil, nil
	}
	key := ""
	if req.URL != nil {
		key = req.URL.Host
	}
	return t.Limits.Get(key)
}

// errNoPermit is what prepareHedge returns for a hedge that found no free
// permit: the hedge is not sent (hedge.Call.Prepare), and never seen.
var errNoPermit = errors.New("retryhttp: no permit for the hedge")

// acquire takes attempt a's permit, and reports whether it may be sent; if
// not, a is the refusal. A hedge (a.hedge > 0) has its permit already,
// from prepareHedgePermit.
func (c *call) acquire(ctx context.Context, a *attempt) bool {
	if a.hedge > 0 {
		return true
	}
	p, err := c.conc.Acquire(ctx)
	if err != nil {
		a.kind, a.err = rejected, err
		return false
	}
	a.permit = p
	return true
}

// prepareHedgePermit takes hedge k's permit, if one is free now: a hedge
// does not wait for one.
func (hc *hedgedCall) prepareHedgePermit(k int) bool {
	if hc.c.conc == nil {
		return true
	}
	p, ok := hc.c.conc.TryAcquire()
	hc.permits[k] = p
	return ok
}

// settlePermit tells the limit how attempt a ended, once try (or
// readWinner) filled it, and gives its permit back unless a response is
// still open: the final response's body then holds it (keepPermit), and a
// response to retry keeps it until it is drained (attempt.release). A
// copy whose body ReadBody has yet to read is judged once it has.
func (c *call) settlePermit(a *attempt) {
	if a.unread && a.resp != nil {
		return // readWinner, or the loser's release, settles it
	}
	a.permit.Record(limitOutcome(a))
	switch {
	case a.resp == nil:
		a.permit.Release()
	case a.kind == final:
		a.keepPermit(a.resp)
	}
}

// limitOutcome is what attempt a teaches an adaptive limit: a loss for a
// timeout (AttemptTimeout, a network timeout, or the request context's
// deadline) or an overload answer (429, 503), an RTT for any other
// response, and nothing for the rest (the caller canceling, a refusal, a
// network failure that says nothing of the host's load).
func limitOutcome(a *attempt) limiter.Outcome {
	switch {
	case a.resp != nil:
		if s := a.resp.StatusCode; s == http.StatusTooManyRequests || s == http.StatusServiceUnavailable {
			return limiter.Dropped
		}
		return limiter.Success
	case a.ctxErr == context.DeadlineExceeded:
		return limiter.Dropped // the caller's deadline: the host did not answer in time
	case a.ctxErr != nil || a.kind != netFailure:
		return limiter.Ignored
	}
	var ne net.Error
	if errors.As(a.err, &ne) && ne.Timeout() {
		return limiter.Dropped
	}
	return limiter.Ignored
}

// keepPermit moves a's permit, if it holds one, into resp's body, which
// gives it back when it is read to EOF or fails, or is closed, and returns
// resp. A body already consumed (http.NoBody) gives it back at once.
func (a *attempt) keepPermit(resp *http.Response) *http.Response {
	if a.permit == (limiter.Permit{}) {
		return resp // no Limits: the body is the caller's as it came
	}
	p := a.permit
	a.permit = limiter.Permit{}
	if resp.Body == http.NoBody || resp.Body == nil {
		p.Release()
		return resp
	}
	held := &heldPermit{p: p}
	b := &permitBody{rc: resp.Body, held: held}
	// A body never closed would keep the permit for good: give it back
	// when the body is garbage.
	runtime.AddCleanup(b, (*heldPermit).release, held)
	resp.Body = b
	return resp
}

// heldPermit is a permit that a body gives back once, whichever of Read,
// Close and the garbage collector's cleanup comes first, from any
// goroutine.
type heldPermit struct {
	p    limiter.Permit
	done atomic.Bool
}

func (h *heldPermit) release() {
	if h.done.CompareAndSwap(false, true) {
		h.p.Release()
	}
}

// permitBody is the final response's body while it holds its attempt's
// permit.
type permitBody struct {
	rc   io.ReadCloser
	held *heldPermit
}

func (b *permitBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil {
		b.held.release() // EOF, or the body failed: the attempt is over
	}
	return n, err
}

func (b *permitBody) Close() error {
	err := b.rc.Close()
	b.held.release()
	return err
}
