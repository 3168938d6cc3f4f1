package retryhttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
)

func TestIdempotencyKey(t *testing.T) {
	srv, base := newServer(t, map[string][]step{
		"/a":   {status(503), status(503), status(200)},
		"/b":   {status(503), status(200)},
		"/own": {status(503), status(200)},
		"/put": {status(503), status(200)},
	})
	tr := &retryhttp.Transport{Base: base, Policy: noWait, GenerateIdempotencyKey: true}
	send := func(method, path, key string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.url(path), strings.NewReader("the same body"))
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("RoundTrip: %v", err)
		}
		readBody(t, resp)
	}
	send("POST", "/a", "")
	send("PATCH", "/b", "")
	send("POST", "/own", "caller-key-1")
	send("PUT", "/put", "")

	keyOf := func(path string) string {
		t.Helper()
		reqs := srv.requests(path)
		if len(reqs) < 2 {
			t.Fatalf("%s: server saw %d attempts, want at least 2", path, len(reqs))
		}
		for i, r := range reqs {
			if r.body != "the same body" {
				t.Errorf("%s attempt %d: body %q, want %q", path, i+1, r.body, "the same body")
			}
			if len(r.keys) > 1 || (len(r.keys) == 1) != (len(reqs[0].keys) == 1) ||
				(len(r.keys) == 1 && r.keys[0] != reqs[0].keys[0]) {
				t.Errorf("%s attempt %d: Idempotency-Key %q, want %q as on attempt 1", path, i+1, r.keys, reqs[0].keys)
			}
		}
		if len(reqs[0].keys) == 0 {
			return ""
		}
		return reqs[0].keys[0]
	}
	a, b := keyOf("/a"), keyOf("/b")
	for _, k := range []string{a, b} {
		if !uuidV4.MatchString(k) {
			t.Errorf("automatic key %q is not a UUID v4", k)
		}
	}
	if a == b {
		t.Errorf("two requests share the key %q, want a fresh key per request", a)
	}
	if got := keyOf("/own"); got != "caller-key-1" {
		t.Errorf("caller's key became %q, want it kept as %q", got, "caller-key-1")
	}
	if got := keyOf("/put"); got != "" {
		t.Errorf("PUT got key %q, want none: it is idempotent already", got)
	}
}

func TestNoRetryWithoutKey(t *testing.T) {
	for _, method := range []string{"POST", "PATCH"} {
		t.Run(method+" gets no key by default", func(t *testing.T) {
			srv, base := newServer(t, map[string][]step{"/": {status(502), status(200)}})
			tr := &retryhttp.Transport{Base: base, Policy: noWait}
			resp, _ := roundTrip(t, tr, method, srv.url("/"), strings.NewReader("x"))
			reqs := srv.requests("/")
			if resp.StatusCode != 502 || len(reqs) != 1 || len(reqs[0].keys) != 0 {
				t.Errorf("status %d, %d attempts, keys %q; want the 502 after one attempt without Idempotency-Key", resp.StatusCode, len(reqs), reqs[0].keys)
			}
		})
	}
	t.Run("503", func(t *testing.T) {
		srv, base := newServer(t, map[string][]step{"/": {status(503), status(200)}})
		var gaveUp []retryhttp.Event
		tr := &retryhttp.Transport{Base: base, Policy: noWait,
			OnGiveUp: func(e retryhttp.Event) { gaveUp = append(gaveUp, e) }}
		req, _ := http.NewRequest("POST", srv.url("/"), strings.NewReader("x"))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("RoundTrip: %v", err)
		}
		if got := readBody(t, resp); resp.StatusCode != 503 || got != "503 body" {
			t.Errorf("response %d %q, want the 503 unchanged", resp.StatusCode, got)
		}
		if got := len(srv.requests("/")); got != 1 {
			t.Errorf("server saw %d attempts, want 1", got)
		}
		if len(gaveUp) != 1 || !errors.Is(gaveUp[0].Reason, retryhttp.ErrNotReplayable) {
			t.Errorf("OnGiveUp events %+v, want one with Reason ErrNotReplayable", gaveUp)
		}
	})
	t.Run("no retries planned", func(t *testing.T) {
		srv, base := newServer(t, map[string][]step{"/": {status(503), status(200)}})
		var reasons []error
		tr := &retryhttp.Transport{Base: base, Policy: backoff.Policy{Retries: backoff.NoRetries, Jitter: backoff.NoJitter},
			OnGiveUp: func(e retryhttp.Event) { reasons = append(reasons, e.Reason) }}
		roundTrip(t, tr, "POST", srv.url("/"), io.MultiReader(strings.NewReader("x")))
		if len(reasons) != 1 || reasons[0] != retry.ErrExhausted {
			t.Errorf("OnGiveUp reasons %v, want [ErrExhausted]: with Retries 0 the request is not refused", reasons)
		}
	})
	for name, fault := range map[string]step{"reset": {reset: true}, "EOF": {close: true}} {
		t.Run(name, func(t *testing.T) {
			srv, base := newServer(t, map[string][]step{"/": {fault, status(200)}})
			tr := &retryhttp.Transport{Base: base, Policy: noWait}
			req, _ := http.NewRequest("POST", srv.url("/"), strings.NewReader("x"))
			err := roundTripErr(t, tr, req)
			if !errors.Is(err, retryhttp.ErrNotReplayable) || errors.Is(err, retryhttp.ErrBodyTooLarge) {
				t.Errorf("error %v: want ErrNotReplayable and not ErrBodyTooLarge", err)
			}
			if got := len(srv.requests("/")); got != 1 {
				t.Errorf("server saw %d attempts, want 1", got)
			}
		})
	}
	t.Run("dial failure is retried", func(t *testing.T) {
		srv, _ := newServer(t, map[string][]step{"/": {status(200)}})
		var dials atomic.Int32
		base := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if dials.Add(1) == 1 {
				addr = closedAddr(t) // nothing listens: connection refused
			}
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}}
		defer base.CloseIdleConnections()
		var retries int
		tr := &retryhttp.Transport{Base: base, Policy: noWait,
			OnRetry: func(retryhttp.Event) { retries++ }}
		req, _ := http.NewRequest("POST", srv.url("/"), strings.NewReader("x"))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("RoundTrip: %v", err)
		}
		readBody(t, resp)
		if resp.StatusCode != 200 || retries != 1 {
			t.Errorf("status %d after %d retries, want 200 after 1", resp.StatusCode, retries)
		}
		if reqs := srv.requests("/"); len(reqs) != 1 || reqs[0].body != "x" {
			t.Errorf("server saw %+v, want one request with body %q", reqs, "x")
		}
	})
}

// An idempotency key counts only if it has a value that is not blank: a
// header present with no value (which net/http does not send), an empty
// one or spaces identify nothing, so the server could not recognise the
// repeat. Such a POST is sent once, or gets a generated key like a POST
// without the header.
func TestBlankIdempotencyKey(t *testing.T) {
	const (
		none  = "<none>" // the server saw no such header
		fresh = "<uuid>" // a generated key, the same on every attempt
	)
	type want struct {
		attempts    int
		key, xkey   string // what the server saw on each attempt
		notReplayed bool   // OnGiveUp with ErrNotReplayable
	}
	tests := []struct {
		header   string
		value    []string
		generate bool
		want     want
	}{
		{"Idempotency-Key", nil, false, want{1, none, none, true}},
		{"Idempotency-Key", []string{""}, false, want{1, "", none, true}},
		{"Idempotency-Key", []string{"  "}, false, want{1, "", none, true}}, // net/http trims what it sends
		{"Idempotency-Key", []string{"k"}, false, want{2, "k", none, false}},
		{"Idempotency-Key", []string{"", "k"}, false, want{2, "", none, false}}, // any value that is not blank counts
		{"Idempotency-Key", nil, true, want{2, fresh, none, false}},
		{"Idempotency-Key", []string{""}, true, want{2, fresh, none, false}},
		{"Idempotency-Key", []string{"  "}, true, want{2, fresh, none, false}},
		{"Idempotency-Key", []string{"k"}, true, want{2, "k", none, false}},
		{"X-Idempotency-Key", nil, false, want{1, none, none, true}},
		{"X-Idempotency-Key", []string{""}, false, want{1, none, "", true}},
		{"X-Idempotency-Key", []string{"  "}, false, want{1, none, "", true}},
		{"X-Idempotency-Key", []string{"k"}, false, want{2, none, "k", false}},
		{"X-Idempotency-Key", nil, true, want{2, fresh, none, false}},
		{"X-Idempotency-Key", []string{""}, true, want{2, fresh, "", false}},
		{"X-Idempotency-Key", []string{"  "}, true, want{2, fresh, "", false}},
		{"X-Idempotency-Key", []string{"k"}, true, want{2, none, "k", false}},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%s %q generate=%v", tt.header, tt.value, tt.generate)
		if tt.value == nil {
			name = fmt.Sprintf("%s nil generate=%v", tt.header, tt.generate)
		}
		t.Run(name, func(t *testing.T) {
			srv, base := newServer(t, map[string][]step{"/": {status(503), status(200)}})
			var reasons []error
			tr := &retryhttp.Transport{Base: base, Policy: noWait, GenerateIdempotencyKey: tt.generate,
				OnGiveUp: func(e retryhttp.Event) { reasons = append(reasons, e.Reason) }}
			req, _ := http.NewRequest("POST", srv.url("/"), strings.NewReader("x"))
			req.Header[tt.header] = tt.value
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatalf("RoundTrip: %v", err)
			}
			readBody(t, resp)
			reqs := srv.requests("/")
			if len(reqs) != tt.want.attempts {
				t.Fatalf("server saw %d attempts, want %d (status %d)", len(reqs), tt.want.attempts, resp.StatusCode)
			}
			if wantStatus := map[int]int{1: 503, 2: 200}[tt.want.attempts]; resp.StatusCode != wantStatus {
				t.Errorf("status %d, want %d", resp.StatusCode, wantStatus)
			}
			if notReplayed := len(reasons) == 1 && errors.Is(reasons[0], retryhttp.ErrNotReplayable); notReplayed != tt.want.notReplayed || len(reasons) > 1 {
				t.Errorf("OnGiveUp reasons %v, want ErrNotReplayable: %v", reasons, tt.want.notReplayed)
			}
			seenAs := func(values []string) string {
				switch {
				case len(values) == 0:
					return none
				case len(values) == 1 && uuidV4.MatchString(values[0]):
					return fresh
				}
				return values[0]
			}
			for i, r := range reqs {
				if got := seenAs(r.keys); got != tt.want.key || got == fresh && r.keys[0] != reqs[0].keys[0] {
					t.Errorf("attempt %d: Idempotency-Key %q, want %s, the same on every attempt", i+1, r.keys, tt.want.key)
				}
				if got := seenAs(r.xkeys); got != tt.want.xkey {
					t.Errorf("attempt %d: X-Idempotency-Key %q, want %s", i+1, r.xkeys, tt.want.xkey)
				}
			}
			if got, ok := req.Header[tt.header]; !ok || !slices.Equal(got, tt.value) || len(req.Header) != 1 {
				t.Errorf("caller's header became %v, want only %s %q", req.Header, tt.header, tt.value)
			}
		})
	}
}

func TestKeyWithNilHeader(t *testing.T) {
	// A request built by hand may have no Header map at all.
	rt := &recordingRT{base: memRT{newScript(nil)}}
	tr := &retryhttp.Transport{Base: rt, Policy: noWait, GenerateIdempotencyKey: true}
	req := &http.Request{Method: "POST", URL: &url.URL{Scheme: "http", Host: "example.test", Path: "/"}}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("RoundTrip: %v", err)
	}
	resp.Body.Close()
	if req.Header != nil {
		t.Errorf("caller's nil Header became %v", req.Header)
	}
	if len(rt.reqs) != 1 || !uuidV4.MatchString(rt.reqs[0].Header.Get("Idempotency-Key")) {
		t.Errorf("sent %d requests, want 1 with an automatic key", len(rt.reqs))
	}
}
