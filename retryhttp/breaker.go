package retryhttp

import (
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

// outcome says how attempt a counts for its breaker: a network failure or
// a retryable status is a failure of the host, a final response (whatever
// its status) a success, and what is not the host's doing (the caller's
// context ending, a body that could not be read, CheckRetry stopping on a
// response) neither.
func outcome(a *attempt) breaker.Outcome {
	switch {
	case a.kind == final:
		return breaker.Success
	case a.kind == badStatus:
		return breaker.Failure
	case a.ctxErr != nil:
		return breaker.Neutral
	case a.kind == netFailure:
		return breaker.Failure
	}
	return breaker.Neutral
}
