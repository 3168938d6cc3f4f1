package bench

import (
	"bytes"
	"io"
	"log"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retryhttp"
)

const fromRetryablehttp = "From hashicorp/go-retryablehttp"

// script is an in-memory server: the n-th request gets statuses[n] (the
// last status once they run out). It records when each request came.
type script struct {
	mu       sync.Mutex
	statuses []int
	at       []time.Time
}

func (s *script) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at = append(s.at, time.Now())
	code := s.statuses[min(len(s.at), len(s.statuses))-1]
	return &http.Response{StatusCode: code, Status: http.StatusText(code), Header: http.Header{},
		Body: io.NopCloser(strings.NewReader("body")), Request: r, ProtoMajor: 1, ProtoMinor: 1}, nil
}

func (s *script) attempts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.at)
}

func (s *script) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var w []time.Duration
	for i := 1; i < len(s.at); i++ {
		w = append(w, s.at[i].Sub(s.at[i-1]))
	}
	return w
}

// peerClient is a go-retryablehttp client on s, quiet unless logger is set.
func peerClient(s *script) *retryablehttp.Client {
	c := retryablehttp.NewClient()
	c.HTTPClient = &http.Client{Transport: s}
	c.Logger = nil
	return c
}

// get sends a GET (or method) with c and returns the status, or 0 and the
// error.
func get(t *testing.T, c *http.Client, method string) (int, error) {
	t.Helper()
	req, _ := http.NewRequest(method, "http://example.test/items?token=secret", strings.NewReader("x"))
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

var _ = row(fromRetryablehttp, "the defaults: 4 retries, waits 1 s to 30 s doubling, no jitter; every 5xx but 501 retried", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		peer := &script{statuses: []int{503}}
		get(t, peerClient(peer).StandardClient(), "GET")
		if got, want := peer.waits(), []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}; !slices.Equal(got, want) {
			t.Errorf("retryablehttp: waits %v, want %v", got, want)
		}
		ours := &script{statuses: []int{503}}
		get(t, &http.Client{Transport: &retryhttp.Transport{Base: ours}}, "GET")
		wantCalls(t, "again", ours.attempts(), 4)
		for i, w := range ours.waits() {
			if limit := 500 * time.Millisecond << i; w > limit {
				t.Errorf("again: wait %d %v, want at most %v (full jitter)", i+1, w, limit)
			}
		}
		for _, code := range []int{500, 501, 502, 503, 504, 505} {
			peer, ours := &script{statuses: []int{code, 200}}, &script{statuses: []int{code, 200}}
			get(t, peerClient(peer).StandardClient(), "GET")
			get(t, &http.Client{Transport: &retryhttp.Transport{Base: ours}}, "GET")
			peerRetried, oursRetried := peer.attempts() == 2, ours.attempts() == 2
			if peerRetried != (code != 501) {
				t.Errorf("retryablehttp retried %d: %v", code, peerRetried)
			}
			if oursRetried != (code >= 502 && code <= 504) {
				t.Errorf("again retried %d: %v", code, oursRetried)
			}
		}
	})
})

var _ = row(fromRetryablehttp, "`retryablehttp.NewClient()`, `StandardClient()`", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		peer, ours := &script{statuses: []int{503, 503, 200}}, &script{statuses: []int{503, 503, 200}}
		cp, errp := get(t, peerClient(peer).StandardClient(), "GET")
		ca, erra := get(t, &http.Client{Transport: &retryhttp.Transport{Base: ours}}, "GET")
		if cp != 200 || ca != 200 || errp != nil || erra != nil || peer.attempts() != 3 || ours.attempts() != 3 {
			t.Errorf("503, 503, 200: retryablehttp %d %v in %d, again %d %v in %d; want 200 in 3", cp, errp, peer.attempts(), ca, erra, ours.attempts())
		}
	})
})

var _ = row(fromRetryablehttp, "`RetryMax`, `RetryWaitMin`, `RetryWaitMax`", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		peer := &script{statuses: []int{503}}
		c := peerClient(peer)
		c.RetryMax, c.RetryWaitMin, c.RetryWaitMax = 3, 100*time.Millisecond, 250*time.Millisecond
		get(t, c.StandardClient(), "GET")
		ours := &script{statuses: []int{503}}
		tr := &retryhttp.Transport{Base: ours, Policy: backoff.Policy{Retries: 3, Initial: 100 * time.Millisecond, Max: 250 * time.Millisecond, Jitter: backoff.NoJitter}}
		get(t, &http.Client{Transport: tr}, "GET")
		want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 250 * time.Millisecond}
		if got := peer.waits(); !slices.Equal(got, want) {
			t.Errorf("retryablehttp: waits %v, want %v", got, want)
		}
		if got := ours.waits(); !slices.Equal(got, want) {
			t.Errorf("again: waits %v, want %v", got, want)
		}
	})
	// Zero is none in retryablehttp and the default in again.
	bubble(t, func(t *testing.T) {
		peer, ours, naive := &script{statuses: []int{503}}, &script{statuses: []int{503}}, &script{statuses: []int{503}}
		c := peerClient(peer)
		c.RetryMax = 0
		get(t, c.StandardClient(), "GET")
		get(t, &http.Client{Transport: &retryhttp.Transport{Base: ours, Policy: backoff.Policy{Retries: backoff.NoRetries}}}, "GET")
		get(t, &http.Client{Transport: &retryhttp.Transport{Base: naive, Policy: backoff.Policy{Retries: 0}}}, "GET")
		if peer.attempts() != 1 || ours.attempts() != 1 || naive.attempts() != 4 {
			t.Errorf("attempts: retryablehttp RetryMax 0 %d, again NoRetries %d, again Retries 0 %d; want 1, 1, 4", peer.attempts(), ours.attempts(), naive.attempts())
		}
	})
	bubble(t, func(t *testing.T) {
		peer, ours := &script{statuses: []int{503}}, &script{statuses: []int{503}}
		c := peerClient(peer)
		c.RetryMax, c.RetryWaitMin = 2, 0
		get(t, c.StandardClient(), "GET")
		get(t, &http.Client{Transport: &retryhttp.Transport{Base: ours, Policy: backoff.Policy{Retries: 2, Initial: -1}}}, "GET")
		want := []time.Duration{0, 0}
		if !slices.Equal(peer.waits(), want) || !slices.Equal(ours.waits(), want) {
			t.Errorf("waits: retryablehttp RetryWaitMin 0 %v, again Initial -1 %v; want %v", peer.waits(), ours.waits(), want)
		}
	})
})

var _ = row(fromRetryablehttp, "`CheckRetry`", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		for _, policy := range []struct {
			name  string
			check retryablehttp.CheckRetry
		}{{"DefaultRetryPolicy", retryablehttp.DefaultRetryPolicy}, {"ErrorPropagatedRetryPolicy", retryablehttp.ErrorPropagatedRetryPolicy}} {
			peer, ours := &script{statuses: []int{503, 503, 200}}, &script{statuses: []int{503, 503, 200}}
			c := peerClient(peer)
			c.CheckRetry = policy.check
			get(t, c.StandardClient(), "GET")
			tr := &retryhttp.Transport{Base: ours, Policy: backoff.Policy{Initial: -1}, CheckRetry: policy.check} // the same function, unchanged
			code, err := get(t, &http.Client{Transport: tr}, "GET")
			if peer.attempts() != 3 || ours.attempts() != 3 || code != 200 || err != nil {
				t.Errorf("%s on 503, 503, 200: retryablehttp %d attempts, again %d (%d, %v); want 3, and 200", policy.name, peer.attempts(), ours.attempts(), code, err)
			}
			// The one difference: a POST without an Idempotency-Key.
			peer, ours = &script{statuses: []int{503, 200}}, &script{statuses: []int{503, 200}}
			c = peerClient(peer)
			c.CheckRetry = policy.check
			get(t, c.StandardClient(), "POST")
			tr.Base = ours
			get(t, &http.Client{Transport: tr}, "POST")
			if peer.attempts() != 2 || ours.attempts() != 1 {
				t.Errorf("%s, a POST on 503, 200: retryablehttp %d attempts, again %d; want 2 and 1", policy.name, peer.attempts(), ours.attempts())
			}
		}
	})
})

var _ = row(fromRetryablehttp, "`Backoff`", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		peer := &script{statuses: []int{503}}
		c := peerClient(peer)
		c.RetryMax = 3
		c.Backoff = func(_, _ time.Duration, _ int, _ *http.Response) time.Duration { return 300 * time.Millisecond }
		get(t, c.StandardClient(), "GET")
		ours := &script{statuses: []int{503}}
		get(t, &http.Client{Transport: &retryhttp.Transport{Base: ours, Policy: fixed(300*time.Millisecond, 3)}}, "GET")
		want := []time.Duration{300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond}
		if !slices.Equal(peer.waits(), want) || !slices.Equal(ours.waits(), want) {
			t.Errorf("waits: retryablehttp %v, again %v; want %v", peer.waits(), ours.waits(), want)
		}
	})
})

var _ = row(fromRetryablehttp, "`ErrorHandler`; without it, an error once retries run out (the body closed)", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		peer := &script{statuses: []int{503}}
		c := peerClient(peer)
		c.RetryMax = 1
		cp, errp := get(t, c.StandardClient(), "GET")
		ours := &script{statuses: []int{503}}
		ca, erra := get(t, &http.Client{Transport: &retryhttp.Transport{Base: ours, Policy: backoff.Policy{Retries: 1}}}, "GET")
		if cp != 0 || errp == nil {
			t.Errorf("retryablehttp: %d, %v; want an error and no response", cp, errp)
		}
		if ca != 503 || erra != nil {
			t.Errorf("again: %d, %v; want the final 503 and a nil error", ca, erra)
		}
	})
})

var _ = row(fromRetryablehttp, "`RequestLogHook` (before every attempt, the first included)", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		peer := &script{statuses: []int{503, 503, 200}}
		c := peerClient(peer)
		var hooked []int
		c.RequestLogHook = func(_ retryablehttp.Logger, _ *http.Request, n int) { hooked = append(hooked, n) }
		get(t, c.StandardClient(), "GET")
		if len(hooked) != 3 || hooked[0] != 0 {
			t.Errorf("retryablehttp RequestLogHook: %v, want [0 1 2]", hooked)
		}
		ours := &script{statuses: []int{503, 503, 200}}
		var sent, onRetry int
		logging := roundTripFunc(func(r *http.Request) (*http.Response, error) { sent++; return ours.RoundTrip(r) })
		get(t, &http.Client{Transport: &retryhttp.Transport{Base: logging, OnRetry: func(retryhttp.Event) { onRetry++ }}}, "GET")
		if sent != 3 || onRetry != 2 {
			t.Errorf("again: Base saw %d attempts and OnRetry ran %d times; want 3 and 2", sent, onRetry)
		}
	})
})

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

var _ = row(fromRetryablehttp, "`ResponseLogHook` (after every response)", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		peer := &script{statuses: []int{503, 503, 200}}
		c := peerClient(peer)
		var responses int
		c.ResponseLogHook = func(retryablehttp.Logger, *http.Response) { responses++ }
		get(t, c.StandardClient(), "GET")
		ours := &script{statuses: []int{503, 503, 200}}
		var retries, successes, giveUps int
		tr := &retryhttp.Transport{Base: ours,
			OnRetry:   func(retryhttp.Event) { retries++ },
			OnSuccess: func(retryhttp.Event) { successes++ },
			OnGiveUp:  func(retryhttp.Event) { giveUps++ }}
		get(t, &http.Client{Transport: tr}, "GET")
		if responses != 3 || retries != 2 || successes != 1 || giveUps != 0 {
			t.Errorf("retryablehttp ResponseLogHook %d; again OnRetry %d, OnSuccess %d, OnGiveUp %d; want 3; 2, 1, 0", responses, retries, successes, giveUps)
		}
	})
})

var _ = row(fromRetryablehttp, "`Logger`", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var peerLog, ourLog bytes.Buffer
		c := peerClient(&script{statuses: []int{503, 200}})
		c.Logger = log.New(&peerLog, "", 0)
		get(t, c.StandardClient(), "GET")
		tr := &retryhttp.Transport{Base: &script{statuses: []int{503, 200}}, Logger: slog.New(slog.NewTextHandler(&ourLog, nil))}
		get(t, &http.Client{Transport: tr}, "GET")
		if !strings.Contains(peerLog.String(), "retrying") || !strings.Contains(ourLog.String(), "example.test") {
			t.Fatalf("no retry logged: retryablehttp %q, again %q", peerLog.String(), ourLog.String())
		}
		if strings.Contains(ourLog.String(), "secret") {
			t.Errorf("again logged the query value: %q", ourLog.String())
		}
	})
})
