package retryhttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/hedge"
	"github.com/again-go/again/retryhttp"
	"github.com/again-go/again/shed"
)

// shedHeaderServer answers 503 to the first attempt of each request and
// 200 to the next, and records the shed headers of each attempt.
type shedHeaderServer struct {
	mu   sync.Mutex
	seen []http.Header
}

func (s *shedHeaderServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seen = append(s.seen, http.Header{
		shed.HeaderCriticality: r.Header[shed.HeaderCriticality],
		shed.HeaderAttempt:     r.Header[shed.HeaderAttempt],
		shed.HeaderTimeout:     r.Header[shed.HeaderTimeout],
	})
	n := len(s.seen)
	s.mu.Unlock()
	if n%2 == 1 {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
}

func TestShedHeaders(t *testing.T) {
	for _, tt := range []struct {
		name     string
		headers  bool
		crit     shed.Criticality
		deadline time.Duration
		// want per attempt: criticality, attempt, whether a timeout is sent
		wantCrit    string
		wantAttempt [2]string
		wantTimeout bool
	}{
		{"off, no criticality: nothing", false, shed.Unspecified, time.Minute, "", [2]string{"", ""}, false},
		{"off, a criticality: it alone", false, shed.Sheddable, time.Minute, "SHEDDABLE", [2]string{"", ""}, false},
		{"on, without a deadline: no timeout", true, shed.Unspecified, 0, "", [2]string{"1", "2"}, false},
		{"on: all three", true, shed.CriticalPlus, time.Minute, "CRITICAL_PLUS", [2]string{"1", "2"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := &shedHeaderServer{}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			tr := &retryhttp.Transport{Base: ts.Client().Transport, ShedHeaders: tt.headers,
				Policy: backoff.Policy{Initial: -1, Retries: 1}}
			ctx := context.Background()
			if tt.crit != shed.Unspecified {
				ctx = shed.WithCriticality(ctx, tt.crit)
			}
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL, nil)
			req.Header.Set("X-Mine", "kept")
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatalf("RoundTrip: %v", err)
			}
			resp.Body.Close()
			if len(req.Header) != 1 || req.Header.Get("X-Mine") != "kept" {
				t.Errorf("the caller's header after RoundTrip = %v, want only X-Mine", req.Header)
			}
			if len(srv.seen) != 2 {
				t.Fatalf("attempts = %d, want 2", len(srv.seen))
			}
			for i, h := range srv.seen {
				if got := h.Get(shed.HeaderCriticality); got != tt.wantCrit {
					t.Errorf("attempt %d: %s = %q, want %q", i+1, shed.HeaderCriticality, got, tt.wantCrit)
				}
				if got := h.Get(shed.HeaderAttempt); got != tt.wantAttempt[i] {
					t.Errorf("attempt %d: %s = %q, want %q", i+1, shed.HeaderAttempt, got, tt.wantAttempt[i])
				}
				v := h.Get(shed.HeaderTimeout)
				ms, err := strconv.Atoi(v)
				switch {
				case !tt.wantTimeout && v != "":
					t.Errorf("attempt %d: %s = %q, want none", i+1, shed.HeaderTimeout, v)
				case tt.wantTimeout && (err != nil || ms <= 0 || ms > int(tt.deadline/time.Millisecond)):
					t.Errorf("attempt %d: %s = %q, want the milliseconds left, at most %d", i+1, shed.HeaderTimeout, v, tt.deadline/time.Millisecond)
				}
			}
		})
	}
}

// TestShedRetryAfterObeyedEndToEnd puts a handler behind shed on a
// loopback server, at its limit, and checks that a retryhttp client waits
// the Retry-After the shed 503 says before its retry, and is served then.
func TestShedRetryAfterObeyedEndToEnd(t *testing.T) {
	s, err := shed.New(shed.Config{Limit: 1, MaxQueue: -1, Rand: zeroRand{}})
	if err != nil {
		t.Fatal(err)
	}
	busy, release := make(chan struct{}), make(chan struct{})
	var attempts []string
	var mu sync.Mutex
	h := s.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			close(busy)
			<-release
			return
		}
		mu.Lock()
		attempts = append(attempts, r.Header.Get(shed.HeaderAttempt))
		mu.Unlock()
		_, _ = io.WriteString(w, "served")
	}))
	ts := httptest.NewServer(h)
	defer ts.Close()
	held := make(chan error, 1)
	go func() {
		resp, err := ts.Client().Get(ts.URL + "/hold")
		if err == nil {
			resp.Body.Close()
		}
		held <- err
	}()
	<-busy

	var events []retryhttp.Event
	tr := &retryhttp.Transport{Base: ts.Client().Transport, ShedHeaders: true,
		Policy: backoff.Policy{Initial: time.Millisecond, Retries: 2},
		OnRetry: func(e retryhttp.Event) {
			events = append(events, e)
			close(release) // the permit is free by the retry
		}}
	start := time.Now()
	resp, err := (&http.Client{Transport: tr}).Get(ts.URL + "/work")
	if err != nil {
		t.Fatalf("GET through retryhttp: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if resp.StatusCode != 200 || string(body) != "served" {
		t.Errorf("GET = %d %q, want 200 \"served\"", resp.StatusCode, body)
	}
	if len(events) != 1 {
		t.Fatalf("retries = %d, want 1", len(events))
	}
	e := events[0]
	if e.Response == nil || e.Response.StatusCode != 503 || e.HintHeader != retryhttp.HeaderRetryAfter || e.Hint != time.Second || e.Delay != time.Second {
		t.Errorf("the retry after the shed: status %v, hint %q %v, delay %v; want 503, Retry-After 1s, 1s", e.Response, e.HintHeader, e.Hint, e.Delay)
	}
	if took < time.Second {
		t.Errorf("GET took %v, want at least the 1s Retry-After", took)
	}
	if len(attempts) != 1 || attempts[0] != "2" {
		t.Errorf("attempts served %q, want only the retry, [\"2\"]", attempts)
	}
	if err := <-held; err != nil {
		t.Errorf("the held request: %v", err)
	}
}

// TestShedHeadersSentByHedges: each copy of a hedged request carries the
// time left before the caller's deadline (shed.HeaderTimeout), so that a
// server behind shed tells the losing copy's cancel from a timeout.
func TestShedHeadersSentByHedges(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get(shed.HeaderTimeout))
		first := len(seen) == 1
		mu.Unlock()
		if first {
			<-r.Context().Done() // the loser, canceled once the hedge answers
		}
	}))
	defer ts.Close()
	tr := &retryhttp.Transport{Base: ts.Client().Transport, ShedHeaders: true,
		Hedge: &hedge.Hedger{After: 10 * time.Millisecond}}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("RoundTrip: %v", err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("copies = %d, want 2 (the stalled copy and the hedge)", len(seen))
	}
	for i, v := range seen {
		if ms, err := strconv.Atoi(v); err != nil || ms <= 0 || ms > 60000 {
			t.Errorf("copy %d: %s = %q, want the milliseconds left, at most 60000", i+1, shed.HeaderTimeout, v)
		}
	}
}
