package retryhttp_test

import (
	"errors"
	"net/http"
	"slices"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
)

// TestClasses checks that a Transport's classes give 429s and 503s a slow
// schedule and network failures a fast one, in one request.
func TestClasses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(map[string][]step{"/": {status(429), {reset: true}, status(503), status(502), status(200)}})
		tr := &retryhttp.Transport{Base: memRT{s}, Policy: backoff.Policy{Initial: time.Second, Retries: 6, Jitter: backoff.NoJitter},
			Classes: []retry.Class{
				{Name: "overload", Match: retry.IsOverload, Policy: backoff.Policy{Initial: 2 * time.Second, Max: time.Minute, Jitter: backoff.NoJitter}},
				{Name: "network", Match: func(err error) bool { return errors.Is(err, syscall.ECONNRESET) },
					Policy: backoff.Policy{Initial: 10 * time.Millisecond, Jitter: backoff.NoJitter}},
			}}
		req, _ := http.NewRequest("GET", "http://example.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("RoundTrip: %v", err)
		}
		readBody(t, resp)
		reqs := s.requests("/")
		var waits []time.Duration
		for i := 1; i < len(reqs); i++ {
			waits = append(waits, reqs[i].at.Sub(reqs[i-1].at))
		}
		// 429: overload 2 s; reset: network 10 ms; 503: overload, its
		// second, 4 s; 502: no class, Policy's wait for the 4th attempt, 8 s.
		if want := []time.Duration{2 * time.Second, 10 * time.Millisecond, 4 * time.Second, 8 * time.Second}; !slices.Equal(waits, want) {
			t.Errorf("waits %v, want %v", waits, want)
		}
	})
}
