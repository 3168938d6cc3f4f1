package retryhttp

import (
	"context"
	"net/http"

	"github.com/again-go/again/retry"
)

// admitterFor returns the Admitter of req's host in t.Throttles, or nil
// without Throttles.
func (t *Transport) admitterFor(req *http.Request) (retry.Admitter, error) {
	if t.Throttles == nil {
		return nil, nil
	}
	key := ""
	if req.URL != nil {
		key = req.URL.Host
	}
	return t.Throttles.Get(key)
}

// admit asks the request's Admitter for attempt a, and reports whether
// it may be sent; if not, a is the rejection.
func (c *call) admit(ctx context.Context, a *attempt) bool {
	if err := c.adm.Admit(ctx); err != nil {
		a.kind, a.err = rejected, err
		return false
	}
	return true
}

// settle reports to the Admitter how admitted attempt a ended, once try
// has filled it.
func (c *call) settle(a *attempt) { c.adm.Done(overloadedAttempt(a)) }

// overloadedAttempt says whether attempt a is an overload signal: a
// response of status 429 or 503 (retried or final), or a breaker's
// rejection.
func overloadedAttempt(a *attempt) bool {
	if a.kind == rejected {
		return true
	}
	if a.resp != nil {
		switch a.resp.StatusCode {
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			return true
		}
	}
	return false
}
