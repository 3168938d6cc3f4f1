//go:build !race

// The race detector's sync.Pool drops some of what it is given, on
// purpose, so pooled objects are allocated again now and then: these
// counts hold only without it. scripts/test runs them in a step of their
// own (go test -run Alloc, without -race).

package retryhttp_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/again-go/again/hedge"
	"github.com/again-go/again/retryhttp"
	"github.com/again-go/again/throttle"
)

// Being ready to hedge, when the first copy answers before the delay,
// costs a request only what its first copy needs of its own, counted here
// against the same request without Hedge so that the count cannot grow
// unnoticed: the copy's context, a shallow copy of the request carrying
// it, the body that releases that context when the caller closes it, and
// the Release function it calls (4); and, for a base that derives a
// context from the request's as net/http does, the copy context's Done
// channel and the registration of the derived context with it (4). The
// rest (the call's state, the copies' goroutines, the channel they answer
// on, the timer) is reused. BENCHMARKS.md has the same through net/http.
func TestHedgeArmedAllocations(t *testing.T) {
	get, _ := http.NewRequest("GET", "http://example.test/", nil)
	for _, tt := range []struct {
		name  string
		base  http.RoundTripper
		extra float64
	}{
		{"a base that ignores the context", freshRT{&http.Response{StatusCode: 200}}, 4},
		{"a base that derives a context, as net/http does", derivingRT{freshRT{&http.Response{StatusCode: 200}}}, 8},
	} {
		t.Run(tt.name, func(t *testing.T) {
			allocs := func(h *hedge.Hedger) float64 {
				tr := &retryhttp.Transport{Base: tt.base, Hedge: h}
				return testing.AllocsPerRun(100, func() {
					resp, err := tr.RoundTrip(get)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
				})
			}
			plain, armed := allocs(nil), allocs(&hedge.Hedger{After: time.Hour})
			if armed-plain > tt.extra {
				t.Errorf("RoundTrip with Hedge armed allocated %v times, %v without: want at most %v more", armed, plain, tt.extra)
			}
		})
	}
}

// derivingRT is freshRT that also waits on the derived context's Done, as
// net/http's Transport selects on it.
type derivingRT struct{ freshRT }

func (d derivingRT) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	select {
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	default:
	}
	return d.freshRT.RoundTrip(r)
}

// A host's throttle costs a successful request no allocation.
func TestThrottleSuccessAllocatesNothing(t *testing.T) {
	get, _ := http.NewRequest("GET", "http://example.test/", nil)
	allocs := func(tr *retryhttp.Transport) float64 {
		return testing.AllocsPerRun(100, func() {
			resp, err := tr.RoundTrip(get)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		})
	}
	base := freshRT{&http.Response{StatusCode: 200}}
	plain := allocs(&retryhttp.Transport{Base: base})
	throttled := allocs(&retryhttp.Transport{Base: base, Throttles: &throttle.Group{}})
	if throttled > plain {
		t.Errorf("RoundTrip with Throttles allocated %v times, %v without", throttled, plain)
	}
}
