package retryhttp_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/again-go/again/hedge"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
)

func TestSuccessAllocatesNothing(t *testing.T) {
	// A first-attempt success must cost nothing beyond the base's own work:
	// the transport is meant to sit under every request of a program.
	resp := &http.Response{StatusCode: 200, Body: http.NoBody}
	get, _ := http.NewRequest("GET", "http://example.test/", nil)
	put, _ := http.NewRequest("PUT", "http://example.test/", strings.NewReader("x"))
	tests := []struct {
		name string
		tr   *retryhttp.Transport
		req  *http.Request
	}{
		{"zero Transport, GET", &retryhttp.Transport{Base: fixedRT{resp}}, get},
		{"404 is a success for the transport", &retryhttp.Transport{Base: fixedRT{&http.Response{StatusCode: 404, Body: http.NoBody}}}, get},
		{"PUT with GetBody", &retryhttp.Transport{Base: fixedRT{resp}, Policy: noWait}, put},
		{"with a budget and hooks", &retryhttp.Transport{Base: fixedRT{resp}, Budget: &retry.TokenBucket{},
			OnRetry: func(retryhttp.Event) {}, OnSuccess: func(retryhttp.Event) {}, CheckRetry: retryhttp.DefaultCheckRetry}, get},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			allocs := testing.AllocsPerRun(100, func() {
				if _, err := tt.tr.RoundTrip(tt.req); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("RoundTrip allocated %v times, want 0", allocs)
			}
		})
	}
}

// freshRT answers every request with the same response, its body reset
// (the Transport wraps the body it returns).
type freshRT struct{ resp *http.Response }

func (f freshRT) RoundTrip(r *http.Request) (*http.Response, error) {
	f.resp.Body = http.NoBody
	return f.resp, nil
}

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
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops pooled objects at random")
	}
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
