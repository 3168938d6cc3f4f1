package retryhttp

import (
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/again-go/again/shed"
)

// shedHeaders returns r, attempt n's request, carrying what a server
// behind package shed reads: the criticality of r's context
// (shed.WithCriticality) whenever it has one, and with ShedHeaders the
// attempt number and the time left before r's deadline (the earlier of
// the caller's and AttemptTimeout's). The caller's request and its header
// are never modified: r is cloned, with a header of its own, when a
// header is to be set.
func (c *call) shedHeaders(r *http.Request, n int, rb io.ReadCloser) *http.Request {
	ctx := r.Context()
	crit := shed.CriticalityFrom(ctx)
	if crit == shed.Unspecified && !c.t.ShedHeaders {
		return r
	}
	if r == c.req {
		r = c.clone(ctx, rb)
	}
	h := make(http.Header, len(r.Header)+3)
	for k, v := range r.Header {
		h[k] = v // the values are not modified: no need to copy them
	}
	if crit != shed.Unspecified {
		h[shed.HeaderCriticality] = []string{crit.String()}
	}
	if c.t.ShedHeaders {
		h[shed.HeaderAttempt] = []string{strconv.Itoa(n)}
		if dl, ok := ctx.Deadline(); ok {
			left := max(time.Until(dl), 0)
			h[shed.HeaderTimeout] = []string{strconv.FormatInt(int64(left/time.Millisecond), 10)}
		} else {
			delete(h, shed.HeaderTimeout)
		}
	}
	r.Header = h
	return r
}
