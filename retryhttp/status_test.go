package retryhttp_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retryhttp"
)

func TestStatusScripts(t *testing.T) {
	tests := []struct {
		name         string
		method       string
		steps        []step
		retryOn      []int
		wantAttempts int
		wantStatus   int
		key          string // "auto": GenerateIdempotencyKey; else the caller's key, if any
	}{
		{"success at once", "GET", []step{status(200)}, nil, 1, 200, ""},
		{"503 then 200", "GET", []step{status(503), status(503), status(200)}, nil, 3, 200, ""},
		{"429 502 504 then 200", "GET", []step{status(429), status(502), status(504), status(200)}, nil, 4, 200, ""},
		{"retries exhausted returns the last 503", "GET", []step{status(503)}, nil, 4, 503, ""},
		{"404 is final", "GET", []step{status(404), status(200)}, nil, 1, 404, ""},
		{"500 is final by default", "GET", []step{status(500), status(200)}, nil, 1, 500, ""},
		{"500 retried when configured", "GET", []step{status(500), status(200)}, []int{500, 408}, 2, 200, ""},
		{"408 retried when configured", "GET", []step{status(408), status(200)}, []int{500, 408}, 2, 200, ""},
		{"503 final when not configured", "GET", []step{status(503), status(200)}, []int{500}, 1, 503, ""},
		{"empty set retries nothing", "GET", []step{status(503), status(200)}, []int{}, 1, 503, ""},
		{"HEAD retried", "HEAD", []step{status(503), status(200)}, nil, 2, 200, ""},
		{"PUT retried", "PUT", []step{status(503), status(200)}, nil, 2, 200, ""},
		{"DELETE retried", "DELETE", []step{status(503), status(200)}, nil, 2, 200, ""},
		{"OPTIONS retried", "OPTIONS", []step{status(503), status(200)}, nil, 2, 200, ""},
		{"POST retried with a generated key", "POST", []step{status(503), status(200)}, nil, 2, 200, "auto"},
		{"PATCH retried with a generated key", "PATCH", []step{status(503), status(200)}, nil, 2, 200, "auto"},
		{"POST retried with the caller's key", "POST", []step{status(503), status(200)}, nil, 2, 200, "k1"},
		{"POST without a key is final", "POST", []step{status(503), status(200)}, nil, 1, 503, ""},
		{"PATCH without a key is final", "PATCH", []step{status(503), status(200)}, nil, 1, 503, ""},
		{"connection reset then 200", "GET", []step{{reset: true}, status(200)}, nil, 2, 200, ""},
		{"EOF before a response then 200", "GET", []step{{close: true}, status(200)}, nil, 2, 200, ""},
		{"EOF before a response, POST with a generated key", "POST", []step{{close: true}, status(200)}, nil, 2, 200, "auto"},
		{"Retry-After garbage falls back to the schedule", "GET", []step{retryAfter(503, "soon"), status(200)}, nil, 2, 200, ""},
		{"Retry-After 0 retries at once", "GET", []step{retryAfter(429, "0"), status(200)}, nil, 2, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, base := newServer(t, map[string][]step{"/": tt.steps})
			tr := &retryhttp.Transport{Base: base, Policy: noWait, RetryStatuses: tt.retryOn, GenerateIdempotencyKey: tt.key == "auto"}
			req, _ := http.NewRequest(tt.method, srv.url("/"), nil)
			if tt.key != "" && tt.key != "auto" {
				req.Header.Set("Idempotency-Key", tt.key)
			}
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatalf("RoundTrip: %v", err)
			}
			body := readBody(t, resp)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			if want := status(tt.wantStatus).body; tt.method != "HEAD" && body != want {
				t.Errorf("body = %q, want %q (the final response, unread)", body, want)
			}
			if got := len(srv.requests("/")); got != tt.wantAttempts {
				t.Errorf("server saw %d attempts, want %d", got, tt.wantAttempts)
			}
		})
	}
}

func TestFinalResponseUntouched(t *testing.T) {
	// With no AttemptTimeout the caller gets the base's own *http.Response.
	rt := &recordingRT{base: memRT{newScript(map[string][]step{"/": {retryAfter(503, "1")}})}}
	tr := &retryhttp.Transport{Base: rt, Policy: backoff.Policy{Retries: backoff.NoRetries, Jitter: backoff.NoJitter}}
	req, _ := http.NewRequest("GET", "http://example.test/", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("RoundTrip: %v", err)
	}
	if resp != rt.last {
		t.Errorf("RoundTrip returned a different *http.Response than the base produced")
	}
	if got := readBody(t, resp); got != "503 body" {
		t.Errorf("body = %q, want %q", got, "503 body")
	}
	if got := resp.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After = %q, want %q", got, "1")
	}
}

func TestZeroTransport(t *testing.T) {
	srv, _ := newServer(t, map[string][]step{"/": {status(200)}})
	t.Cleanup(http.DefaultTransport.(*http.Transport).CloseIdleConnections)
	client := &http.Client{Transport: &retryhttp.Transport{}}
	resp, err := client.Get(srv.url("/"))
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if got := readBody(t, resp); got != "200 body" {
		t.Errorf("body %q, want %q", got, "200 body")
	}
}

func TestNilResponseBody(t *testing.T) {
	// Test doubles often answer without a Body; net/http's Client accepts
	// that from a RoundTripper, so the Transport must not panic on it.
	for _, timeout := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprintf("AttemptTimeout %v", timeout), func(t *testing.T) {
			var n int
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				n++
				if n == 1 {
					return &http.Response{StatusCode: 503, Request: r}, nil
				}
				return &http.Response{StatusCode: 204, Request: r}, nil
			})
			tr := &retryhttp.Transport{Base: base, Policy: noWait, AttemptTimeout: timeout}
			resp, body := roundTrip(t, tr, "GET", "http://example.test/", nil)
			if resp.StatusCode != 204 || body != "" || n != 2 {
				t.Errorf("status %d, body %q after %d attempts; want 204, empty, after 2", resp.StatusCode, body, n)
			}
		})
	}
}
