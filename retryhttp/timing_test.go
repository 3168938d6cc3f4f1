package retryhttp_test

import (
	"context"
	"errors"
	"fmt"
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

// Timing tests run in a synctest bubble with the in-memory round tripper.

func TestRetryAfterTiming(t *testing.T) {
	policy := backoff.Policy{Initial: 100 * time.Millisecond, Retries: 1, Jitter: backoff.NoJitter}
	// The bubble's clock starts at 2000-01-01 00:00:00 UTC; the first attempt
	// is made 300 ms later, so a date 3 s after the start is 2.7 s away.
	dateIn := func(layout string) string {
		return time.Date(2000, 1, 1, 0, 0, 3, 0, time.UTC).Format(layout)
	}
	tests := []struct {
		name   string
		first  step
		wait   time.Duration // the wait made, and Event.Delay
		header string        // Event.HintHeader
		hint   time.Duration // Event.Hint: the server's, not floored
	}{
		{"delay-seconds", retryAfter(503, "2"), 2 * time.Second, retryhttp.HeaderRetryAfter, 2 * time.Second},
		{"delay-seconds with spaces", retryAfter(429, " 7 "), 7 * time.Second, retryhttp.HeaderRetryAfter, 7 * time.Second},
		{"IMF-fixdate", retryAfter(503, dateIn(http.TimeFormat)), 2700 * time.Millisecond, retryhttp.HeaderRetryAfter, 2700 * time.Millisecond},
		{"RFC 850 date", retryAfter(503, dateIn(time.RFC850)), 2700 * time.Millisecond, retryhttp.HeaderRetryAfter, 2700 * time.Millisecond},
		{"asctime date", retryAfter(503, dateIn(time.ANSIC)), 2700 * time.Millisecond, retryhttp.HeaderRetryAfter, 2700 * time.Millisecond},
		{"on a configured status", retryAfter(502, "4"), 4 * time.Second, retryhttp.HeaderRetryAfter, 4 * time.Second},
		{"past date ignored", retryAfter(503, "Fri, 31 Dec 1999 23:59:59 GMT"), 100 * time.Millisecond, "", 0},
		{"negative ignored", retryAfter(503, "-5"), 100 * time.Millisecond, "", 0},
		{"fraction ignored", retryAfter(503, "1.5"), 100 * time.Millisecond, "", 0},
		{"garbage ignored", retryAfter(503, "tomorrow"), 100 * time.Millisecond, "", 0},
		{"RateLimit reset", step{status: 429, header: http.Header{"Ratelimit": {`"default";r=0;t=30`}}}, 30 * time.Second, retryhttp.HeaderRateLimit, 30 * time.Second},
		{"RateLimit with quota left ignored", step{status: 429, header: http.Header{"Ratelimit": {`"default";r=5;t=30`}}}, 100 * time.Millisecond, "", 0},
		{"Retry-After beats RateLimit", step{status: 429, header: http.Header{"Retry-After": {"3"}, "Ratelimit": {`"d";r=0;t=30`}}}, 3 * time.Second, retryhttp.HeaderRetryAfter, 3 * time.Second},
		{"RateLimit-Reset seconds", step{status: 429, header: http.Header{"Ratelimit-Reset": {"5"}}}, 5 * time.Second, retryhttp.HeaderRateLimitReset, 5 * time.Second},
		{"X-RateLimit-Reset seconds", step{status: 429, header: http.Header{"X-Ratelimit-Reset": {"5"}, "X-Ratelimit-Remaining": {"0"}}}, 5 * time.Second, retryhttp.HeaderXRateLimitReset, 5 * time.Second},
		{"X-RateLimit-Reset epoch", step{status: 429, header: http.Header{"X-Ratelimit-Reset": {"946684803"}}}, 2700 * time.Millisecond, retryhttp.HeaderXRateLimitReset, 2700 * time.Millisecond},
		{"X-RateLimit-Reset with quota left ignored", step{status: 503, header: http.Header{"X-Ratelimit-Reset": {"5"}, "X-Ratelimit-Remaining": {"4999"}}}, 100 * time.Millisecond, "", 0},
		{"RateLimit beats RateLimit-Reset", step{status: 429, header: http.Header{"Ratelimit": {`"d";r=0;t=3`}, "Ratelimit-Reset": {"9"}}}, 3 * time.Second, retryhttp.HeaderRateLimit, 3 * time.Second},
		{"RateLimit-Reset beats X-RateLimit-Reset", step{status: 429, header: http.Header{"Ratelimit-Reset": {"4"}, "X-Ratelimit-Reset": {"9"}}}, 4 * time.Second, retryhttp.HeaderRateLimitReset, 4 * time.Second},
		{"no hint: the schedule", status(503), 100 * time.Millisecond, "", 0},
		// A hint shorter than the policy's first delay waits that delay:
		// a server answering Retry-After: 0 to every request must not be
		// retried in a hot loop.
		{"Retry-After 0 waits the first delay", retryAfter(503, "0"), 100 * time.Millisecond, retryhttp.HeaderRetryAfter, 0},
		{"RateLimit t=0 waits the first delay", step{status: 429, header: http.Header{"Ratelimit": {`"default";r=0;t=0`}}}, 100 * time.Millisecond, retryhttp.HeaderRateLimit, 0},
		{"X-RateLimit-Reset 0 seconds waits the first delay", step{status: 429, header: http.Header{"X-Ratelimit-Reset": {"0"}}}, 100 * time.Millisecond, retryhttp.HeaderXRateLimitReset, 0},
		{"X-RateLimit-Reset epoch past ignored", step{status: 429, header: http.Header{"X-Ratelimit-Reset": {"946684799"}}}, 100 * time.Millisecond, "", 0},
		{"RateLimit-Reset epoch past ignored", step{status: 429, header: http.Header{"Ratelimit-Reset": {"946684800"}}}, 100 * time.Millisecond, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newScript(map[string][]step{"/": {tt.first, status(200)}})
				var events []retryhttp.Event
				tr := &retryhttp.Transport{Base: memRT{s}, Policy: policy, RetryStatuses: []int{429, 502, 503},
					OnRetry: func(e retryhttp.Event) { events = append(events, e) }}
				time.Sleep(300 * time.Millisecond)
				req, _ := http.NewRequest("GET", "http://example.test/", nil)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatalf("RoundTrip: %v", err)
				}
				readBody(t, resp)
				reqs := s.requests("/")
				if len(reqs) != 2 {
					t.Fatalf("%d attempts, want 2", len(reqs))
				}
				if got := reqs[1].at.Sub(reqs[0].at); got != tt.wait {
					t.Errorf("second attempt %v after the first, want %v", got, tt.wait)
				}
				if len(events) != 1 || events[0].Delay != tt.wait || events[0].HintHeader != tt.header || events[0].Attempt != 1 {
					t.Errorf("OnRetry events %+v, want one with Attempt 1, Delay %v, HintHeader %q", events, tt.wait, tt.header)
				}
				if events[0].Hint != tt.hint {
					t.Errorf("OnRetry Hint = %v, want %v", events[0].Hint, tt.hint)
				}
			})
		})
	}
}

func TestRetryAfterTooLong(t *testing.T) {
	tests := []struct {
		name       string
		value      string
		max        time.Duration
		deadline   time.Duration
		wantReason error
	}{
		{"above the default maximum", "61", 0, 0, retry.ErrRetryAfterTooLong},
		{"above a set maximum", "11", 10 * time.Second, 0, retry.ErrRetryAfterTooLong},
		{"negative maximum: no hint honoured", "1", -1, 0, retry.ErrRetryAfterTooLong},
		{"past the deadline", "10", 0, 5 * time.Second, retry.ErrDeadline},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newScript(map[string][]step{"/": {retryAfter(503, tt.value), status(200)}})
				var gaveUp []retryhttp.Event
				tr := &retryhttp.Transport{Base: memRT{s}, Policy: noWait, MaxRetryAfter: tt.max,
					OnGiveUp: func(e retryhttp.Event) { gaveUp = append(gaveUp, e) }}
				ctx := context.Background()
				if tt.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.deadline)
					defer cancel()
				}
				start := time.Now()
				resp, got := roundTripCtx(t, ctx, tr, "GET", "http://example.test/", nil)
				if elapsed := time.Since(start); elapsed != 0 {
					t.Errorf("RoundTrip took %v, want it to return at once", elapsed)
				}
				if resp.StatusCode != 503 || got != "503 body" || resp.Header.Get("Retry-After") != tt.value {
					t.Errorf("response %d %q, want the 503 unchanged", resp.StatusCode, got)
				}
				if got := len(s.requests("/")); got != 1 {
					t.Errorf("%d attempts, want 1", got)
				}
				if len(gaveUp) != 1 || gaveUp[0].Reason != tt.wantReason || gaveUp[0].HintHeader != retryhttp.HeaderRetryAfter {
					t.Errorf("OnGiveUp events %+v, want one with Reason %v and the Retry-After hint", gaveUp, tt.wantReason)
				}
			})
		})
	}
}

// A reset that is a Unix time already past is no hint: the schedule's wait
// applies, not a wait of 0 (a retry storm while the server's clock is
// wrong) nor the floor of a hint. The past reset comes on the second
// failure, where the schedule's wait (200 ms) differs from its first delay.
func TestPastRateLimitResetIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The bubble's clock reads 2000-01-01: 1998-07-09 is past.
		past := step{status: 503, header: http.Header{"X-Ratelimit-Reset": {"900000000"}, "X-Ratelimit-Remaining": {"0"}}}
		s := newScript(map[string][]step{"/": {status(503), past, status(200)}})
		var events []retryhttp.Event
		tr := &retryhttp.Transport{Base: memRT{s}, Policy: backoff.Policy{Initial: 100 * time.Millisecond, Jitter: backoff.NoJitter},
			OnRetry: func(e retryhttp.Event) { events = append(events, e) }}
		start := time.Now()
		if resp, _ := roundTripCtx(t, context.Background(), tr, "GET", "http://example.test/", nil); resp.StatusCode != 200 {
			t.Errorf("status %d, want 200", resp.StatusCode)
		}
		var offsets []time.Duration
		for _, r := range s.requests("/") {
			offsets = append(offsets, r.at.Sub(start))
		}
		if want := []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond}; !slices.Equal(offsets, want) {
			t.Errorf("attempts at %v, want %v", offsets, want)
		}
		if len(events) != 2 || events[1].Delay != 200*time.Millisecond || events[1].HintHeader != "" || events[1].Hint != 0 {
			t.Errorf("OnRetry events %+v, want the second with Delay 200ms and no hint", events)
		}
	})
}

// Waits 1 s and 2 s fit in 5 s; the next, 4 s, would end after the
// deadline, so it is shortened to leave the reserve for one more attempt:
// backoff.DeadlineReserve, or AttemptTimeout when set. Then no more than
// the reserve is left, and the last 503 is returned without sleeping.
func TestScheduleAndDeadline(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration // AttemptTimeout
		want    []time.Duration
	}{
		{"the default reserve", 0, []time.Duration{0, time.Second, 3 * time.Second, 4900 * time.Millisecond}},
		{"the attempt timeout as reserve", 1500 * time.Millisecond, []time.Duration{0, time.Second, 3 * time.Second, 3500 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newScript(map[string][]step{"/": {status(503)}})
				p := backoff.Policy{Initial: time.Second, Multiplier: 2, Retries: 5, Jitter: backoff.NoJitter}
				tr := &retryhttp.Transport{Base: memRT{s}, Policy: p, AttemptTimeout: tt.timeout}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				start := time.Now()
				if resp, _ := roundTripCtx(t, ctx, tr, "GET", "http://example.test/", nil); resp == nil || resp.StatusCode != 503 {
					t.Errorf("RoundTrip = %v, want the last 503", resp)
				}
				var offsets []time.Duration
				for _, r := range s.requests("/") {
					offsets = append(offsets, r.at.Sub(start))
				}
				if !slices.Equal(offsets, tt.want) {
					t.Errorf("attempts at %v, want %v", offsets, tt.want)
				}
				if got, want := time.Since(start), tt.want[len(tt.want)-1]; got != want {
					t.Errorf("RoundTrip took %v, want %v", got, want)
				}
			})
		})
	}
}

func TestAttemptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(map[string][]step{
			"/slow-once": {{hang: true}, status(200)},
			"/late":      {{delay: 3 * time.Second}, status(200)},
			"/always":    {{hang: true}},
		})
		tr := &retryhttp.Transport{Base: memRT{s}, Policy: backoff.Policy{Initial: -1, Retries: 2, Jitter: backoff.NoJitter},
			AttemptTimeout: 2 * time.Second}
		get := func(path string) (*http.Response, error) {
			req, _ := http.NewRequest("GET", "http://example.test"+path, nil)
			return tr.RoundTrip(req)
		}
		for _, path := range []string{"/slow-once", "/late"} {
			start := time.Now()
			resp, err := get(path)
			if err != nil {
				t.Fatalf("%s: RoundTrip: %v", path, err)
			}
			if got := readBody(t, resp); got != "200 body" {
				t.Errorf("%s: body %q, want %q", path, got, "200 body")
			}
			if got := time.Since(start); got != 2*time.Second {
				t.Errorf("%s: took %v, want 2s (one timed-out attempt)", path, got)
			}
		}
		_, err := get("/always")
		if !errors.Is(err, retryhttp.ErrAttemptTimeout) || !errors.Is(err, retry.ErrExhausted) {
			t.Errorf("error %v, want ErrAttemptTimeout and retry.ErrExhausted", err)
		}
		if got := len(s.requests("/always")); got != 3 {
			t.Errorf("%d attempts, want 3", got)
		}
	})
}

func TestAttemptTimeoutBoundsDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(map[string][]step{"/": {{status: 503, body: "partial", stall: true}, status(200)}})
		tr := &retryhttp.Transport{Base: memRT{s}, Policy: noWait, AttemptTimeout: 2 * time.Second}
		start := time.Now()
		_, body := roundTrip(t, tr, "GET", "http://example.test/", nil)
		if body != "200 body" {
			t.Errorf("body %q, want %q", body, "200 body")
		}
		if got := time.Since(start); got != 2*time.Second {
			t.Errorf("took %v, want 2s: draining a stalled 503 ends at the attempt's limit", got)
		}
	})
}

func TestAttemptTimeoutSparesFinalBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(map[string][]step{"/": {status(200)}})
		tr := &retryhttp.Transport{Base: memRT{s}, Policy: noWait, AttemptTimeout: time.Second}
		req, _ := http.NewRequest("GET", "http://example.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("RoundTrip: %v", err)
		}
		time.Sleep(5 * time.Second)
		if err := resp.Request.Context().Err(); err != nil {
			t.Errorf("attempt context ended (%v) before the body was closed", err)
		}
		readBody(t, resp)
		if resp.Request.Context().Err() == nil {
			t.Errorf("attempt context still live after the body was closed")
		}
	})
}

func TestErrorCountsEveryAttempt(t *testing.T) {
	for _, budget := range []retry.Budget{nil, &retry.TokenBucket{MaxTokens: 100}} {
		t.Run(fmt.Sprintf("budget %v", budget != nil), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newScript(map[string][]step{"/": {{delay: time.Second, reset: true}}})
				tr := &retryhttp.Transport{Base: memRT{s}, Policy: backoff.Policy{Initial: -1, Retries: 2, Jitter: backoff.NoJitter}, Budget: budget}
				req, _ := http.NewRequest("GET", "http://example.test/", nil)
				var re *retry.Error
				if err := roundTripErr(t, tr, req); !errors.As(err, &re) {
					t.Fatalf("error %v, want a *retry.Error", err)
				}
				// Elapsed is timed from the start of the call, as the retry
				// package defines it.
				if re.Attempts != 3 || re.Elapsed != 3*time.Second || !errors.Is(re, syscall.ECONNRESET) {
					t.Errorf("*retry.Error{Attempts: %d, Elapsed: %v, Last: %v}, want 3 attempts in 3s, wrapping ECONNRESET", re.Attempts, re.Elapsed, re.Last)
				}
			})
		})
	}
}

func TestCanceledDuringWait(t *testing.T) {
	// The caller giving up during a Retry-After wait gets its context's
	// error; the response that asked for the wait was already closed.
	synctest.Test(t, func(t *testing.T) {
		rt := &closingRT{status: 503, header: http.Header{"Retry-After": {"10"}}}
		var reasons []error
		tr := &retryhttp.Transport{Base: rt, Policy: noWait,
			OnGiveUp: func(e retryhttp.Event) { reasons = append(reasons, e.Reason) }}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		time.AfterFunc(3*time.Second, cancel)
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://example.test/", nil)
		start := time.Now()
		err := roundTripErr(t, tr, req)
		if !errors.Is(err, context.Canceled) || !errors.Is(err, retry.ErrCanceled) {
			t.Errorf("error %v, want context.Canceled and retry.ErrCanceled", err)
		}
		if got := time.Since(start); got != 3*time.Second {
			t.Errorf("RoundTrip returned after %v, want 3s, when the context ended", got)
		}
		if len(rt.bodies) != 1 || rt.bodies[0].closed.Load() != 1 {
			t.Errorf("%d attempts; want 1, its response body closed once", len(rt.bodies))
		}
		if len(reasons) != 1 || reasons[0] != retry.ErrCanceled {
			t.Errorf("OnGiveUp reasons %v, want [retry.ErrCanceled]", reasons)
		}
	})
}

func TestRateLimitTooLong(t *testing.T) {
	// A RateLimit reset is a hint like Retry-After, bounded the same way.
	synctest.Test(t, func(t *testing.T) {
		s := newScript(map[string][]step{"/": {{status: 429, body: "slow down",
			header: http.Header{"Ratelimit": {`"default";r=0;t=120`}}}, status(200)}})
		var gaveUp []retryhttp.Event
		tr := &retryhttp.Transport{Base: memRT{s}, Policy: noWait,
			OnGiveUp: func(e retryhttp.Event) { gaveUp = append(gaveUp, e) }}
		start := time.Now()
		resp, body := roundTrip(t, tr, "GET", "http://example.test/", nil)
		if resp.StatusCode != 429 || body != "slow down" || time.Since(start) != 0 {
			t.Errorf("response %d %q after %v, want the 429 unchanged at once", resp.StatusCode, body, time.Since(start))
		}
		if len(gaveUp) != 1 || gaveUp[0].Reason != retry.ErrRetryAfterTooLong || gaveUp[0].Hint != 2*time.Minute {
			t.Errorf("OnGiveUp events %+v, want one with ErrRetryAfterTooLong and a 2m hint", gaveUp)
		}
	})
}

// A negative AttemptTimeout means no limit, as zero does.
func TestAttemptTimeoutNegative(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(map[string][]step{"/": {{delay: time.Hour}}})
		tr := &retryhttp.Transport{Base: memRT{s}, Policy: noWait, AttemptTimeout: -1}
		start := time.Now()
		resp, _ := roundTrip(t, tr, "GET", "http://example.test/", nil)
		if resp.StatusCode != 200 || time.Since(start) != time.Hour || len(s.requests("/")) != 1 {
			t.Errorf("status %d after %v and %d attempts, want 200 after 1h and 1 attempt", resp.StatusCode, time.Since(start), len(s.requests("/")))
		}
	})
}

// A partly filled Policy takes the defaults for its zero fields: the issue's
// Policy{Retries: 5} waited nothing and sent 6 requests in 2 ms, and
// Policy{Max: 5s} made no retries.
func TestPartlyFilledPolicy(t *testing.T) {
	tests := []struct {
		p        backoff.Policy
		attempts int
		first    time.Duration // the wait before the first retry, before jitter
	}{
		{backoff.Policy{Retries: 5, Jitter: backoff.NoJitter}, 6, 500 * time.Millisecond},
		{backoff.Policy{Max: 5 * time.Second, Jitter: backoff.NoJitter}, 4, 500 * time.Millisecond},
		{backoff.Policy{Jitter: backoff.NoJitter}, 4, 500 * time.Millisecond},
	}
	for _, tt := range tests {
		synctest.Test(t, func(t *testing.T) {
			s := newScript(map[string][]step{"/": {status(503)}})
			tr := &retryhttp.Transport{Base: memRT{s}, Policy: tt.p}
			roundTrip(t, tr, "GET", "http://example.test/", nil)
			reqs := s.requests("/")
			if len(reqs) != tt.attempts || reqs[1].at.Sub(reqs[0].at) != tt.first {
				t.Errorf("%+v: %d attempts, first retry after %v; want %d, %v", tt.p, len(reqs), reqs[1].at.Sub(reqs[0].at), tt.attempts, tt.first)
			}
		})
	}
}
