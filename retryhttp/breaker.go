package retryhttp

import (
	"context"
	"net/http"

	"github.com/again-go/again/breaker"
)

// breakerFor returns the breaker of req in t.Breakers, or nil without
// Breakers.
func (t *Transport) breakerFor(req *http.Request) (*breaker.Breaker, error) {
	if t.Breakers == nil {
		return nil, nil
	}
	key := ""
	if t.BreakerKey != nil {
		key = t.BreakerKey(req)
	} else if req.URL != nil {
		key = req.URL.Host
	}
	return t.Breakers.Get(key)
}

// guarded runs one attempt through the request's breaker, if it has one. A
// rejected attempt touches neither the network nor the request body; its
// error, an *breaker.OpenError, tells the retry loop to wait for the
// breaker's probe (RetryAfter) and to leave the budget alone (Rejected).
func (c *call) guarded(ctx context.Context) (*http.Response, error) {
	if c.br == nil {
		return c.attempt(ctx)
	}
	tk, err := c.br.Allow(ctx)
	if err != nil {
		c.resp, c.lim, c.hint, c.hintHeader, c.netErr = nil, nil, 0, "", err
		return nil, err
	}
	resp, err := c.attempt(ctx)
	tk.Record(c.outcome(ctx, err))
	return resp, err
}

// outcome says how the attempt that just ended counts for its breaker: a
// network failure or a retryable status is a failure of the host, a final
// response (whatever its status) a success, and what is not the host's
// doing (the caller's context ending, a body that could not be read,
// CheckRetry stopping on a response) neither.
func (c *call) outcome(ctx context.Context, err error) breaker.Outcome {
	switch {
	case err == nil:
		return breaker.Success
	case c.resp != nil:
		return breaker.Failure
	case ctx.Err() != nil:
		return breaker.Neutral
	case c.netErr != nil:
		return breaker.Failure
	}
	return breaker.Neutral
}
