package retryhttp_test

import (
	"errors"
	"net/http"
	"slices"
	"strings"
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

// TestEventClass checks Event.Class against a real server that answers
// 503, then drops the connection: each hook is told the class of the
// failure (the class before the success in OnSuccess), and "" without
// classes or when no class matched.
func TestEventClass(t *testing.T) {
	noWaitClass := func(name string, match func(error) bool, retries int) retry.Class {
		return retry.Class{Name: name, Match: match, Policy: backoff.Policy{Initial: -1, Retries: retries}}
	}
	overload := noWaitClass("overload", retry.IsOverload, 5)
	transient := noWaitClass("transient", nil, 5)
	tests := []struct {
		name    string
		steps   []step
		classes []retry.Class
		events  []string // "hook class" of each event, in order
	}{
		{"503 then a reset", []step{status(503), {reset: true}, status(200)}, []retry.Class{overload, transient},
			[]string{"retry overload", "retry transient", "success transient"}},
		{"no classes", []step{status(503), {reset: true}, status(200)}, nil,
			[]string{"retry ", "retry ", "success "}},
		{"no class matched the reset", []step{status(503), {reset: true}, status(200)}, []retry.Class{overload},
			[]string{"retry overload", "retry ", "success "}},
		{"a class's cap ends the call", []step{status(503), {reset: true}, {reset: true}}, []retry.Class{overload, noWaitClass("transient", nil, 1)},
			[]string{"retry overload", "retry transient", "give up transient"}},
		{"first-try success", []step{status(200)}, []retry.Class{overload, transient}, []string{"success "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, base := newServer(t, map[string][]step{"/": tt.steps})
			var events []string
			record := func(hook string) func(retryhttp.Event) {
				return func(e retryhttp.Event) { events = append(events, hook+" "+e.Class) }
			}
			tr := &retryhttp.Transport{Base: base, Policy: backoff.Policy{Initial: -1, Retries: 5}, Classes: tt.classes,
				OnRetry: record("retry"), OnGiveUp: record("give up"), OnSuccess: record("success")}
			// PUT: retried as idempotent, but not replayed by net/http itself
			// on a reused connection, so the reset reaches the Transport.
			req, _ := http.NewRequest("PUT", srv.url("/"), strings.NewReader("body"))
			if resp, err := tr.RoundTrip(req); err == nil {
				readBody(t, resp)
			}
			if !slices.Equal(events, tt.events) {
				t.Errorf("events %q, want %q", events, tt.events)
			}
		})
	}
}
