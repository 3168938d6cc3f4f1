package retryhttp_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
)

// hosts is an in-memory network: each host answers with the statuses
// scripted for it, in order, then with its last one. It counts the requests
// that reached each host.
type hosts struct {
	mu      sync.Mutex
	scripts map[string][]int
	hits    map[string]int
}

func (h *hosts) RoundTrip(r *http.Request) (*http.Response, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r.Body != nil {
		r.Body.Close()
	}
	host := r.URL.Host
	h.hits[host]++
	s := h.scripts[host]
	code := s[min(h.hits[host], len(s))-1]
	return &http.Response{StatusCode: code, Status: http.StatusText(code), Header: http.Header{},
		Body: http.NoBody, Request: r}, nil
}

func (h *hosts) count(host string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[host]
}

func newHosts(scripts map[string][]int) *hosts {
	return &hosts{scripts: scripts, hits: map[string]int{}}
}

// tripsAfter3 opens a host's breaker after 3 failures of 3 calls, for 2 s,
// then 4 s.
var tripsAfter3 = breaker.Config{
	MinCalls: 3,
	Open:     backoff.Policy{Initial: 2 * time.Second, Multiplier: 2, Max: time.Minute, Jitter: backoff.NoJitter},
}

var breakerNoWait = backoff.Policy{Initial: -1, Retries: 2}

func get(t *testing.T, tr http.RoundTripper, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if resp != nil {
		resp.Body.Close()
	}
	return resp, err
}

func TestBreakerRejectsWithoutTouchingTheNetwork(t *testing.T) {
	net := newHosts(map[string][]int{"down.example": {503}})
	var logs bytes.Buffer
	var gaveUp []retryhttp.Event
	tr := &retryhttp.Transport{
		Base:          net,
		Policy:        breakerNoWait,
		MaxRetryAfter: time.Second, // shorter than the open period: stop at once
		Breakers:      &breaker.Group{Config: tripsAfter3},
		Logger:        slog.New(slog.NewTextHandler(&logs, nil)),
		OnGiveUp:      func(e retryhttp.Event) { gaveUp = append(gaveUp, e) },
	}
	// Three 503s: the request ends with its last response, and the host's
	// breaker opens.
	if resp, err := get(t, tr, "http://down.example/a"); err != nil || resp.StatusCode != 503 {
		t.Fatalf("first request: %v, %v; want the 503 response", resp, err)
	}
	resp, err := get(t, tr, "http://down.example/b")
	if resp != nil || !errors.Is(err, breaker.ErrOpen) || !errors.Is(err, retry.ErrRejected) {
		t.Fatalf("second request: %v, %v; want an error matching breaker.ErrOpen and retry.ErrRejected", resp, err)
	}
	if n := net.count("down.example"); n != 3 {
		t.Errorf("the host received %d requests, want 3 (none after the breaker opened)", n)
	}
	if len(gaveUp) != 2 || !errors.Is(gaveUp[1].Err, breaker.ErrOpen) {
		t.Errorf("OnGiveUp events %+v, want the second with Err matching breaker.ErrOpen", gaveUp)
	}
	if !strings.Contains(logs.String(), "rejected=true") || !strings.Contains(logs.String(), "breaker: open") {
		t.Errorf("the log does not say the breaker rejected the request:\n%s", logs.String())
	}
}

func TestBreakerPerHost(t *testing.T) {
	net := newHosts(map[string][]int{"down.example": {503}, "up.example": {200}})
	tr := &retryhttp.Transport{Base: net, Policy: breakerNoWait, MaxRetryAfter: -1, Breakers: &breaker.Group{Config: tripsAfter3}}
	get(t, tr, "http://down.example/")
	if _, err := get(t, tr, "http://down.example/"); !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("down.example: %v, want breaker.ErrOpen", err)
	}
	if resp, err := get(t, tr, "http://up.example/"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("up.example: %v, %v; want 200: one host's breaker must not stop another", resp, err)
	}
}

func TestBreakerKey(t *testing.T) {
	net := newHosts(map[string][]int{"api.example": {503}})
	tr := &retryhttp.Transport{
		Base: net, Policy: breakerNoWait, MaxRetryAfter: -1,
		Breakers:   &breaker.Group{Config: tripsAfter3},
		BreakerKey: func(r *http.Request) string { return r.URL.Path },
	}
	get(t, tr, "http://api.example/search")
	if _, err := get(t, tr, "http://api.example/search"); !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("/search: %v, want breaker.ErrOpen", err)
	}
	if _, err := get(t, tr, "http://api.example/users"); errors.Is(err, breaker.ErrOpen) {
		t.Fatal("/users was rejected by /search's breaker")
	}
}

// With BreakerWait, the retry loop waits for the breaker's probe as for a
// Retry-After, and rejections cost the budget nothing.
func TestBreakerRetryWaitsForTheProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := newHosts(map[string][]int{"flaky.example": {503, 503, 503, 200}})
		budget := &retry.TokenBucket{}
		var retries []time.Duration
		tr := &retryhttp.Transport{
			Base:        net,
			Policy:      backoff.Policy{Initial: -1, Retries: 5},
			Breakers:    &breaker.Group{Config: tripsAfter3},
			BreakerWait: time.Minute,
			Budget:      budget,
			OnRetry:     func(e retryhttp.Event) { retries = append(retries, e.Delay) },
		}
		start := time.Now()
		resp, err := get(t, tr, "http://flaky.example/")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%v, %v; want 200 after the probe", resp, err)
		}
		if d := time.Since(start); d != 2*time.Second {
			t.Errorf("took %v, want 2s: the open period, waited once", d)
		}
		// 3 failures (no wait), a rejection (wait 2s), the probe succeeds.
		if len(retries) != 4 || retries[3] != 2*time.Second {
			t.Errorf("retry delays %v, want [0s 0s 0s 2s]", retries)
		}
		if n := net.count("flaky.example"); n != 4 {
			t.Errorf("the host received %d requests, want 4", n)
		}
		// Three failures cost a token each, the success refunds 0.1, the
		// rejection costs nothing.
		if tokens, want := budget.Tokens(), retry.DefaultMaxTokens-3+retry.DefaultTokenRatio; tokens != want {
			t.Errorf("budget holds %v tokens, want %v", tokens, want)
		}
	})
}

func TestBreakerInvalidConfig(t *testing.T) {
	tr := &retryhttp.Transport{Base: newHosts(nil), Breakers: &breaker.Group{Config: breaker.Config{Window: -1}}}
	if _, err := get(t, tr, "http://x.example/"); !errors.Is(err, breaker.ErrInvalid) {
		t.Fatalf("RoundTrip: %v, want breaker.ErrInvalid", err)
	}
}

// The caller's own context ending counts neither way.
func TestBreakerCallerCancelIsNeutral(t *testing.T) {
	g := &breaker.Group{Config: breaker.Config{MinCalls: -1}}
	ctx, cancel := context.WithCancel(context.Background())
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		cancel()
		return nil, r.Context().Err()
	})
	tr := &retryhttp.Transport{Base: base, Breakers: g}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://x.example/", nil)
	if _, err := tr.RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("RoundTrip: %v, want context.Canceled", err)
	}
	b, _ := g.Get("x.example")
	if s := b.Snapshot(); s.State != breaker.Closed || s.Calls != 0 {
		t.Fatalf("breaker %+v, want closed with no call counted", s)
	}
}

// A first-attempt success through a host's breaker costs no allocation
// either (after the host's breaker was made).
func TestBreakerSuccessAllocatesNothing(t *testing.T) {
	tr := &retryhttp.Transport{Base: fixedRT{&http.Response{StatusCode: 200, Body: http.NoBody}}, Breakers: &breaker.Group{}}
	get, _ := http.NewRequest("GET", "http://example.test/", nil)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := tr.RoundTrip(get); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("RoundTrip with Breakers allocated %v times, want 0", allocs)
	}
}

// By default a request that meets an open breaker fails at once, without
// a wait, without reaching the host and without spending budget, so that
// the caller can fall back; an isolated breaker says so.
func TestBreakerFailsFast(t *testing.T) {
	tests := []struct {
		name    string
		isolate bool
		wait    time.Duration // BreakerWait
		timeout time.Duration // the request's deadline, 0 for none
		reason  error
	}{
		{"open", false, 0, 0, retry.ErrRejected},
		{"open, BreakerWait shorter than the open period", false, time.Second, 0, retry.ErrRejected},
		{"open, BreakerWait past the deadline", false, time.Minute, time.Second, retry.ErrDeadline},
		{"isolated", true, 0, 0, breaker.ErrIsolated},
		{"isolated, even with BreakerWait", true, time.Minute, 0, breaker.ErrIsolated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				net := newHosts(map[string][]int{"down.example": {503}})
				budget := &retry.TokenBucket{}
				var gaveUp []retryhttp.Event
				tr := &retryhttp.Transport{
					Base: net, Policy: backoff.Policy{Initial: -1, Retries: 2},
					Breakers: &breaker.Group{Config: tripsAfter3}, BreakerWait: tt.wait,
					OnGiveUp: func(e retryhttp.Event) { gaveUp = append(gaveUp, e) },
				}
				get(t, tr, "http://down.example/") // 3 failures: the breaker opens for 2 s
				if tt.isolate {
					b, _ := tr.Breakers.Get("down.example")
					b.Isolate()
				}
				tr.Budget, gaveUp = budget, nil
				ctx := context.Background()
				if tt.timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.timeout)
					defer cancel()
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://down.example/", nil)
				start := time.Now()
				resp, err := tr.RoundTrip(req)
				if resp != nil || !errors.Is(err, breaker.ErrOpen) || !errors.Is(err, tt.reason) {
					t.Fatalf("RoundTrip = %v, %v; want breaker.ErrOpen and %v", resp, err, tt.reason)
				}
				if d := time.Since(start); d != 0 {
					t.Errorf("RoundTrip took %v, want no wait", d)
				}
				if n := net.count("down.example"); n != 3 {
					t.Errorf("the host received %d requests, want the 3 before the breaker opened", n)
				}
				if tokens := budget.Tokens(); tokens != retry.DefaultMaxTokens {
					t.Errorf("budget holds %v tokens, want %v: a rejection costs nothing", tokens, float64(retry.DefaultMaxTokens))
				}
				if !tt.isolate && (len(gaveUp) != 1 || !errors.Is(gaveUp[0].Err, breaker.ErrOpen)) {
					t.Errorf("OnGiveUp saw %+v, want one event with the rejection", gaveUp)
				}
			})
		})
	}
}
