package retryhttp_test

import (
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
	"github.com/again-go/again/throttle"
)

// zeroRand draws 0: every attempt with p > 0 is rejected.
type zeroRand struct{}

func (zeroRand) Float64() float64 { return 0 }

func throttles() *throttle.Group {
	return &throttle.Group{New: func(string) (retry.Admitter, error) {
		return throttle.New(throttle.Config{Rand: zeroRand{}})
	}}
}

func TestThrottlesPerHost(t *testing.T) {
	for _, code := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			net := newHosts(map[string][]int{"busy.test": {code}, "calm.test": {200}})
			budget := &retry.TokenBucket{}
			g := throttles()
			tr := &retryhttp.Transport{Base: net, Throttles: g, Budget: budget,
				Policy: backoff.Policy{Initial: -1, Retries: 3}}
			req, _ := http.NewRequest("GET", "http://busy.test/", nil)
			resp, err := tr.RoundTrip(req)
			if resp != nil {
				resp.Body.Close()
			}
			if !errors.Is(err, retry.ErrExhausted) || !errors.Is(err, throttle.ErrRejected) {
				t.Fatalf("RoundTrip = %v, want retries exhausted on a local rejection", err)
			}
			if got := net.count("busy.test"); got != 1 {
				t.Errorf("the overloaded host got %d requests, want 1: the others are rejected locally", got)
			}
			if got := budget.Tokens(); got != retry.DefaultMaxTokens-1 {
				t.Errorf("budget has %v tokens, want %v: local rejections spend none", got, retry.DefaultMaxTokens-1)
			}
			// Another host has a throttle of its own.
			req2, _ := http.NewRequest("GET", "http://calm.test/", nil)
			resp, err = tr.RoundTrip(req2)
			if err != nil {
				t.Fatalf("RoundTrip to another host = %v", err)
			}
			resp.Body.Close()
			a, _ := g.Get("busy.test")
			if s := a.(*throttle.Throttler).Snapshot(); s.Requests != 1 || s.Accepts != 0 || s.Rejected != 3 {
				t.Errorf("busy host's throttle: %+v, want 1 request and 3 rejected (not counted: no accept in the window), 0 accepted", s)
			}
			c, _ := g.Get("calm.test")
			if s := c.(*throttle.Throttler).Snapshot(); s.Requests != 1 || s.Accepts != 1 {
				t.Errorf("calm host's throttle: %+v, want 1 request accepted", s)
			}
		})
	}
}

// Other failures are not overload signals: a 502 counts as accepted.
func TestThrottleCountsOtherStatusesAsAccepted(t *testing.T) {
	net := newHosts(map[string][]int{"h.test": {502, 502, 200}})
	g := throttles()
	tr := &retryhttp.Transport{Base: net, Throttles: g, Policy: backoff.Policy{Initial: -1, Retries: 3}}
	req, _ := http.NewRequest("GET", "http://h.test/", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	a, _ := g.Get("h.test")
	if s := a.(*throttle.Throttler).Snapshot(); s.Requests != 3 || s.Accepts != 3 {
		t.Errorf("throttle: %+v, want 3 requests, 3 accepted", s)
	}
}

// A throttle.Rate per host: the first 429 turns its bucket on, and the
// retry waits for the token the Rate's hint names instead of the policy's
// delay.
func TestThrottlesRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := newHosts(map[string][]int{"api.test": {429, 200}})
		g := &throttle.Group{New: func(string) (retry.Admitter, error) {
			return throttle.NewRate(throttle.RateConfig{FailFast: true})
		}}
		tr := &retryhttp.Transport{Base: net, Throttles: g, Policy: backoff.Policy{Initial: time.Millisecond, Retries: 3}}
		req, _ := http.NewRequest("GET", "http://api.test/", nil)
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		// Throttled with nothing measured: 0.5 requests/s, an empty
		// bucket, so the token is 2 s off.
		if got := time.Since(start); got != 2*time.Second+time.Millisecond && got != 2*time.Second {
			t.Errorf("RoundTrip took %v, want the 2 s the Rate asked for", got)
		}
		a, _ := g.Get("api.test")
		if st := a.(*throttle.Rate).Stats(); !st.Enabled || st.Rejected != 1 {
			t.Errorf("Rate: %+v, want on, with one rejection", st)
		}
		if got := net.count("api.test"); got != 2 {
			t.Errorf("host got %d requests, want 2", got)
		}
	})
}
