package retryhttp_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
)

func TestLogRedacts(t *testing.T) {
	srv, base := newServer(t, map[string][]step{"/path": {status(503), {reset: true}, status(503)}})
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	tr := &retryhttp.Transport{Base: base, Policy: backoff.Policy{Initial: -1, Retries: 2, Jitter: backoff.NoJitter}, Logger: logger}
	u := strings.Replace(srv.url("/path"), "http://", "http://user:secret1@", 1) + "?token=secret2&secret5"
	req, _ := http.NewRequest("PUT", u, strings.NewReader("secret3"))
	req.Header.Set("Authorization", "secret4")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("RoundTrip: %v", err)
	}
	readBody(t, resp)
	out := buf.String()
	if strings.Contains(out, "secret") {
		t.Errorf("log reveals a secret:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("log has %d lines, want 2 retries and 1 give-up:\n%s", len(lines), out)
	}
	wantURL := "url=" + srv.URL + "/path?token&REDACTED"
	for i, want := range [][]string{
		{`msg="retryhttp: retrying"`, "method=PUT", wantURL, "attempt=1", "max_attempts=3", "status=503", "delay=0s"},
		{`msg="retryhttp: retrying"`, "attempt=2", "error="},
		{`msg="retryhttp: giving up"`, "attempt=3", "status=503", `reason="retry: retries exhausted"`},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("log line %d = %s, want it to contain %s", i+1, lines[i], w)
			}
		}
	}
}

func TestBudget(t *testing.T) {
	srv, base := newServer(t, map[string][]step{"/": {status(503)}})
	budget := &retry.TokenBucket{MaxTokens: 4}
	var reasons []error
	tr := &retryhttp.Transport{Base: base, Policy: noWait, Budget: budget,
		OnGiveUp: func(e retryhttp.Event) { reasons = append(reasons, e.Reason) }}
	for range 2 {
		roundTrip(t, tr, "GET", srv.url("/"), nil)
	}
	// Bucket of 4: two failures leave 2, not more than half, so the first
	// request makes 2 attempts and the second 1.
	if got := len(srv.requests("/")); got != 3 {
		t.Errorf("server saw %d attempts, want 3", got)
	}
	if len(reasons) != 2 || reasons[0] != retry.ErrBudget || reasons[1] != retry.ErrBudget {
		t.Errorf("give-up reasons %v, want ErrBudget twice", reasons)
	}
}

func TestNoGiveUpBeforeAnyAttempt(t *testing.T) {
	// OnGiveUp reports a failed attempt; a request whose context ended
	// before its first attempt has none, so a hook that reads Event.Err
	// when there is no Response must not be called with neither.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var events []retryhttp.Event
	var buf bytes.Buffer
	rt := &recordingRT{base: memRT{newScript(nil)}}
	tr := &retryhttp.Transport{Base: rt, Policy: noWait, Logger: slog.New(slog.NewTextHandler(&buf, nil)),
		OnGiveUp: func(e retryhttp.Event) { events = append(events, e) }}
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://example.test/", nil)
	if err := roundTripErr(t, tr, req); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if len(events) != 0 || buf.Len() != 0 || len(rt.reqs) != 0 {
		t.Errorf("OnGiveUp events %+v, log %q, %d attempts; want none of them", events, buf.String(), len(rt.reqs))
	}
}

// Which hook reports a request's end: OnSuccess for any response that is
// not retried, whatever its status; OnGiveUp for one that ends on a retried
// status or a network failure; neither for an error retrying cannot help.
// Retries are logged at Info, the give-up at Warn.
func TestHookOutcomes(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	tests := []struct {
		name    string
		base    http.RoundTripper
		success int // the status OnSuccess saw, 0 if it was not called
		gaveUp  bool
		log     []string // the levels and messages logged, in order
	}{
		{"200", newHosts(map[string][]int{"h": {200}}), 200, false, nil},
		{"404 is final", newHosts(map[string][]int{"h": {404}}), 404, false, nil},
		{"500 not in RetryStatuses is final", newHosts(map[string][]int{"h": {500}}), 500, false, nil},
		{"503 until retries run out", newHosts(map[string][]int{"h": {503}}), 0, true,
			[]string{`level=INFO msg="retryhttp: retrying"`, `level=WARN msg="retryhttp: giving up"`}},
		{"a network failure until retries run out", failingRT{reset}, 0, true,
			[]string{`level=INFO msg="retryhttp: retrying"`, `level=WARN msg="retryhttp: giving up"`}},
		{"an error retrying cannot help", failingRT{x509.UnknownAuthorityError{}}, 0, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			success, gaveUp := 0, false
			tr := &retryhttp.Transport{Base: tt.base, Policy: backoff.Policy{Initial: -1, Retries: 1},
				OnSuccess: func(e retryhttp.Event) { success = e.Response.StatusCode },
				OnGiveUp:  func(retryhttp.Event) { gaveUp = true },
				Logger:    slog.New(slog.NewTextHandler(&buf, nil)),
			}
			req, _ := http.NewRequest("GET", "http://h/", nil)
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
			if success != tt.success || gaveUp != tt.gaveUp {
				t.Errorf("OnSuccess saw %d, OnGiveUp called %v; want %d and %v", success, gaveUp, tt.success, tt.gaveUp)
			}
			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			if buf.Len() == 0 {
				lines = nil
			}
			if len(lines) != len(tt.log) {
				t.Fatalf("log:\n%s\nwant %d lines: %v", buf.String(), len(tt.log), tt.log)
			}
			for i, want := range tt.log {
				if !strings.Contains(lines[i], want) {
					t.Errorf("log line %d = %s, want %s", i+1, lines[i], want)
				}
			}
		})
	}
}
