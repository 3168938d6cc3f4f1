package retryhttp_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
)

// noWait retries 3 times at once, so that tests against a real server need
// no timing; timing is tested inside synctest bubbles.
var noWait = backoff.Policy{Retries: 3, Jitter: backoff.NoJitter}

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
	tr := &retryhttp.Transport{Base: rt, Policy: backoff.Policy{Retries: 0, Jitter: backoff.NoJitter}}
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

type recordingRT struct {
	base http.RoundTripper
	reqs []*http.Request
	last *http.Response
}

func (r *recordingRT) RoundTrip(req *http.Request) (*http.Response, error) {
	r.reqs = append(r.reqs, req)
	resp, err := r.base.RoundTrip(req)
	r.last = resp
	return resp, err
}

type failingRT struct{ err error }

func (f failingRT) RoundTrip(*http.Request) (*http.Response, error) { return nil, f.err }

// closeCounter is a request body without GetBody that records Close.
type closeCounter struct {
	io.Reader
	closed atomic.Int32
}

func (c *closeCounter) Close() error { c.closed.Add(1); return nil }

func TestCallerRequestNotModified(t *testing.T) {
	srv, base := newServer(t, map[string][]step{"/": {status(503), status(503), status(200)}})
	tr := &retryhttp.Transport{Base: base, Policy: noWait}
	body := &closeCounter{Reader: strings.NewReader("payload")}
	req, _ := http.NewRequest("POST", srv.url("/")+"?q=1", body)
	req.Header.Set("X-Test", "a")
	before := req.Header.Clone()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("RoundTrip: %v", err)
	}
	readBody(t, resp)
	if len(req.Header) != len(before) || req.Header.Get("X-Test") != "a" || req.Header.Get("Idempotency-Key") != "" {
		t.Errorf("caller's header changed: %v, want %v", req.Header, before)
	}
	if req.Body != io.ReadCloser(body) || req.URL.RawQuery != "q=1" || req.Method != "POST" {
		t.Errorf("caller's request changed")
	}
	if got := body.closed.Load(); got != 1 {
		t.Errorf("request body closed %d times, want 1", got)
	}
}

func TestRequestBodyClosedOnError(t *testing.T) {
	tests := []struct {
		name string
		tr   *retryhttp.Transport
		ctx  func() context.Context
	}{
		{"invalid policy", &retryhttp.Transport{Policy: backoff.Policy{Multiplier: 0.5}}, context.Background},
		{"context already canceled", &retryhttp.Transport{Policy: noWait}, func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}},
		{"unsupported scheme", &retryhttp.Transport{Policy: noWait, Base: &http.Transport{}}, context.Background},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := &closeCounter{Reader: strings.NewReader("x")}
			req, _ := http.NewRequestWithContext(tt.ctx(), "PUT", "ftp://example.test/", body)
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("x")), nil }
			resp, err := tt.tr.RoundTrip(req)
			if err == nil || resp != nil {
				t.Fatalf("RoundTrip = %v, %v; want nil and an error", resp, err)
			}
			if got := body.closed.Load(); got != 1 {
				t.Errorf("request body closed %d times, want 1", got)
			}
		})
	}
}

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

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
		tr := &retryhttp.Transport{Base: base, Policy: backoff.Policy{Jitter: backoff.NoJitter},
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

// closedAddr returns a loopback address where nothing listens.
func closedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestExhaustedNetworkError(t *testing.T) {
	srv, base := newServer(t, map[string][]step{"/": {{reset: true}}})
	tr := &retryhttp.Transport{Base: base, Policy: backoff.Policy{Retries: 2, Jitter: backoff.NoJitter}}
	req, _ := http.NewRequest("GET", srv.url("/"), nil)
	err := roundTripErr(t, tr, req)
	var re *retry.Error
	if !errors.As(err, &re) || !errors.Is(err, retry.ErrExhausted) || re.Attempts != 3 {
		t.Fatalf("error %v, want a *retry.Error with ErrExhausted after 3 attempts", err)
	}
	if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("error %v does not wrap the last attempt's network error", err)
	}
	if got := len(srv.requests("/")); got != 3 {
		t.Errorf("server saw %d attempts, want 3", got)
	}
}

func TestNotRetried(t *testing.T) {
	t.Run("TLS certificate", func(t *testing.T) {
		var conns atomic.Int32
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				conns.Add(1)
			}
		}
		srv.Config.ErrorLog = nopLogger()
		srv.StartTLS()
		defer srv.Close()
		base := &http.Transport{} // does not trust the test certificate
		defer base.CloseIdleConnections()
		tr := &retryhttp.Transport{Base: base, Policy: noWait}
		req, _ := http.NewRequest("GET", srv.URL, nil)
		err := roundTripErr(t, tr, req)
		if !errors.Is(err, retry.ErrPermanent) {
			t.Errorf("error %v, want retry.ErrPermanent", err)
		}
		if got := conns.Load(); got != 1 {
			t.Errorf("server saw %d connections, want 1: a certificate error is not retried", got)
		}
	})
	t.Run("caller's context canceled", func(t *testing.T) {
		srv, base := newServer(t, map[string][]step{"/": {{hang: true}, status(200)}})
		ctx, cancel := context.WithCancel(context.Background())
		var retried bool
		tr := &retryhttp.Transport{Base: base, Policy: noWait, OnRetry: func(retryhttp.Event) { retried = true }}
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.url("/"), nil)
		done := make(chan error)
		go func() {
			_, err := tr.RoundTrip(req)
			done <- err
		}()
		for len(srv.requests("/")) == 0 {
			runtimeGosched()
		}
		cancel()
		err := <-done
		if !errors.Is(err, context.Canceled) || !errors.Is(err, retry.ErrCanceled) {
			t.Errorf("error %v, want context.Canceled and retry.ErrCanceled", err)
		}
		if retried || len(srv.requests("/")) != 1 {
			t.Errorf("canceled request was retried")
		}
	})
	permanentErrors := []struct {
		name string
		base http.RoundTripper
		url  string
	}{
		// Such as a redirect policy's or a wrapping RoundTripper's own.
		{"unrecognised error", failingRT{errors.New("stopped after 10 redirects")}, "http://example.test/"},
		{"unknown host", failingRT{&net.OpError{Op: "dial", Net: "tcp",
			Err: &net.DNSError{Err: "no such host", Name: "nx.example", IsNotFound: true}}}, "http://nx.example/"},
		{"malformed URL", &http.Transport{}, "gopher://example.test/"},
		{"port out of range", &http.Transport{}, "http://127.0.0.1:99999/"},
	}
	for _, tt := range permanentErrors {
		t.Run(tt.name, func(t *testing.T) {
			rt := &recordingRT{base: tt.base}
			tr := &retryhttp.Transport{Base: rt, Policy: noWait}
			req, _ := http.NewRequest("GET", tt.url, nil)
			if err := roundTripErr(t, tr, req); !errors.Is(err, retry.ErrPermanent) {
				t.Errorf("error %v, want retry.ErrPermanent", err)
			}
			if len(rt.reqs) != 1 {
				t.Errorf("base called %d times, want 1", len(rt.reqs))
			}
		})
	}
}

func TestBodyReplay(t *testing.T) {
	big := strings.Repeat("b", 100)
	tests := []struct {
		name         string
		body         func() io.Reader // not one http.NewRequest knows, so no GetBody
		limit        int64
		wantAttempts int
		wantStatus   int
		wantGiveUp   error
	}{
		{"small body without GetBody is buffered", func() io.Reader { return io.MultiReader(strings.NewReader(big)) }, 0, 2, 200, nil},
		{"body at the limit is buffered", func() io.Reader { return io.MultiReader(strings.NewReader(big)) }, 100, 2, 200, nil},
		{"body over the limit is sent once", func() io.Reader { return io.MultiReader(strings.NewReader(big)) }, 99, 1, 503, retryhttp.ErrNotReplayable},
		{"largest limit buffers any body", func() io.Reader { return io.MultiReader(strings.NewReader(big)) }, math.MaxInt64, 2, 200, nil},
		{"negative limit never buffers", func() io.Reader { return io.MultiReader(strings.NewReader(big)) }, -1, 1, 503, retryhttp.ErrNotReplayable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, base := newServer(t, map[string][]step{"/": {status(503), status(200)}})
			var reason error
			tr := &retryhttp.Transport{Base: base, Policy: noWait, MaxBufferedBody: tt.limit,
				OnGiveUp: func(e retryhttp.Event) { reason = e.Reason }}
			req, _ := http.NewRequest("PUT", srv.url("/"), tt.body())
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatalf("RoundTrip: %v", err)
			}
			readBody(t, resp)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			reqs := srv.requests("/")
			if len(reqs) != tt.wantAttempts {
				t.Errorf("server saw %d attempts, want %d", len(reqs), tt.wantAttempts)
			}
			for i, r := range reqs {
				if r.body != big {
					t.Errorf("attempt %d: body of %d bytes, want the whole %d", i+1, len(r.body), len(big))
				}
			}
			if (reason == nil) != (tt.wantGiveUp == nil) || !errors.Is(reason, tt.wantGiveUp) {
				t.Errorf("OnGiveUp reason %v, want %v", reason, tt.wantGiveUp)
			}
		})
	}
}

func TestBodyTooLargeNetworkFailure(t *testing.T) {
	// A body without GetBody over the limit is streamed once: after a reset
	// it is gone, so the error says the request cannot be replayed.
	srv, base := newServer(t, map[string][]step{"/": {{reset: true}, status(200)}})
	var reason error
	tr := &retryhttp.Transport{Base: base, Policy: noWait, MaxBufferedBody: 4,
		OnGiveUp: func(e retryhttp.Event) { reason = e.Reason }}
	req, _ := http.NewRequest("PUT", srv.url("/"), io.MultiReader(strings.NewReader("too large")))
	err := roundTripErr(t, tr, req)
	if !errors.Is(err, retryhttp.ErrNotReplayable) || !errors.Is(err, retryhttp.ErrBodyTooLarge) || !errors.Is(err, retry.ErrPermanent) {
		t.Errorf("error %v, want ErrNotReplayable, ErrBodyTooLarge and retry.ErrPermanent", err)
	}
	if !errors.Is(reason, retryhttp.ErrBodyTooLarge) {
		t.Errorf("OnGiveUp reason %v, want ErrBodyTooLarge", reason)
	}
	if got := len(srv.requests("/")); got != 1 {
		t.Errorf("server saw %d attempts, want 1", got)
	}
}

func TestRedirectPolicyErrorNotRetried(t *testing.T) {
	// The Client applies its redirect policy between round trips: its error
	// must end the request, with each hop sent once.
	srv, base := newServer(t, map[string][]step{
		"/from": {{status: http.StatusFound, header: http.Header{"Location": {"/to"}}}},
		"/to":   {status(200)},
	})
	errStop := errors.New("no redirects, please")
	client := &http.Client{Transport: &retryhttp.Transport{Base: base, Policy: noWait},
		CheckRedirect: func(*http.Request, []*http.Request) error { return errStop }}
	resp, err := client.Get(srv.url("/from"))
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, errStop) {
		t.Errorf("Get error %v, want the redirect policy's", err)
	}
	if from, to := len(srv.requests("/from")), len(srv.requests("/to")); from != 1 || to != 0 {
		t.Errorf("server saw /from %d times and /to %d times, want 1 and 0", from, to)
	}
}

func TestGetBodyReplay(t *testing.T) {
	srv, base := newServer(t, map[string][]step{"/": {{reset: true}, status(503), status(200)}})
	var calls int
	tr := &retryhttp.Transport{Base: base, Policy: noWait}
	req, _ := http.NewRequest("PUT", srv.url("/"), strings.NewReader("data"))
	getBody := req.GetBody
	req.GetBody = func() (io.ReadCloser, error) { calls++; return getBody() }
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("RoundTrip: %v", err)
	}
	readBody(t, resp)
	if calls != 2 {
		t.Errorf("GetBody called %d times, want 2 (once per retry)", calls)
	}
	for i, r := range srv.requests("/") {
		if r.body != "data" {
			t.Errorf("attempt %d: body %q, want %q", i+1, r.body, "data")
		}
	}
}

func TestConnectionReuse(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		wantConns int64
	}{
		{"short bodies are drained", strings.Repeat("x", 1000), 1},
		{"64 KiB body is drained", strings.Repeat("x", 64<<10), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			failed := step{status: 503, body: tt.body}
			srv, base := newServer(t, map[string][]step{"/": {failed, failed, status(200)}})
			tr := &retryhttp.Transport{Base: base, Policy: noWait}
			for range 2 {
				roundTrip(t, tr, "GET", srv.url("/"), nil)
			}
			if got := srv.conns.Load(); got != tt.wantConns {
				t.Errorf("server saw %d connections for 4 attempts, want %d", got, tt.wantConns)
			}
		})
	}
}

func TestSlowBodyStreams(t *testing.T) {
	srv, base := newServer(t, map[string][]step{"/": {{status: 200, body: "first part", stall: true}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := &retryhttp.Transport{Base: base, Policy: noWait, AttemptTimeout: time.Hour}
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.url("/"), nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("RoundTrip: %v", err)
	}
	buf := make([]byte, len("first part"))
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "first part" {
		t.Fatalf("read %q, %v; want the start of the body while the rest is pending", buf, err)
	}
	cancel()
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Errorf("reading a stalled body after cancel succeeded, want an error")
	}
	resp.Body.Close()
}

func TestConcurrent(t *testing.T) {
	// Every request fails once (503 or reset) and then succeeds.
	var mu sync.Mutex
	attempts := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("id")
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		attempts[id]++
		n := attempts[id]
		mu.Unlock()
		if n == 1 {
			w.WriteHeader(503)
			return
		}
		w.Write(body)
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	var retries atomic.Int32
	tr := &retryhttp.Transport{Base: base, Policy: noWait, GenerateIdempotencyKey: true, OnRetry: func(retryhttp.Event) { retries.Add(1) }}
	client := &http.Client{Transport: tr}
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			id := string(rune('a'+i%26)) + strings.Repeat("z", i/26)
			resp, err := client.Post(srv.URL+"/?id="+id, "text/plain", strings.NewReader(id))
			if err != nil {
				errs <- err
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(b) != id {
				errs <- errors.New("request " + id + ": got " + resp.Status + " " + string(b))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := retries.Load(); got != n {
		t.Errorf("%d retries, want %d", got, n)
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

func TestLogRedacts(t *testing.T) {
	srv, base := newServer(t, map[string][]step{"/path": {status(503), {reset: true}, status(503)}})
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	tr := &retryhttp.Transport{Base: base, Policy: backoff.Policy{Retries: 2, Jitter: backoff.NoJitter}, Logger: logger}
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
		wait   time.Duration
		header string // Event.HintHeader
	}{
		{"delay-seconds", retryAfter(503, "2"), 2 * time.Second, retryhttp.HeaderRetryAfter},
		{"delay-seconds with spaces", retryAfter(429, " 7 "), 7 * time.Second, retryhttp.HeaderRetryAfter},
		{"IMF-fixdate", retryAfter(503, dateIn(http.TimeFormat)), 2700 * time.Millisecond, retryhttp.HeaderRetryAfter},
		{"RFC 850 date", retryAfter(503, dateIn(time.RFC850)), 2700 * time.Millisecond, retryhttp.HeaderRetryAfter},
		{"asctime date", retryAfter(503, dateIn(time.ANSIC)), 2700 * time.Millisecond, retryhttp.HeaderRetryAfter},
		{"on a configured status", retryAfter(502, "4"), 4 * time.Second, retryhttp.HeaderRetryAfter},
		{"past date ignored", retryAfter(503, "Fri, 31 Dec 1999 23:59:59 GMT"), 100 * time.Millisecond, ""},
		{"negative ignored", retryAfter(503, "-5"), 100 * time.Millisecond, ""},
		{"fraction ignored", retryAfter(503, "1.5"), 100 * time.Millisecond, ""},
		{"garbage ignored", retryAfter(503, "tomorrow"), 100 * time.Millisecond, ""},
		{"RateLimit reset", step{status: 429, header: http.Header{"Ratelimit": {`"default";r=0;t=30`}}}, 30 * time.Second, retryhttp.HeaderRateLimit},
		{"RateLimit with quota left ignored", step{status: 429, header: http.Header{"Ratelimit": {`"default";r=5;t=30`}}}, 100 * time.Millisecond, ""},
		{"Retry-After beats RateLimit", step{status: 429, header: http.Header{"Retry-After": {"3"}, "Ratelimit": {`"d";r=0;t=30`}}}, 3 * time.Second, retryhttp.HeaderRetryAfter},
		{"no hint: the schedule", status(503), 100 * time.Millisecond, ""},
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
				if tt.header != "" && events[0].Hint != tt.wait {
					t.Errorf("OnRetry Hint = %v, want %v", events[0].Hint, tt.wait)
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

func TestScheduleAndDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(map[string][]step{"/": {status(503)}})
		p := backoff.Policy{Initial: time.Second, Multiplier: 2, Retries: 5, Jitter: backoff.NoJitter}
		tr := &retryhttp.Transport{Base: memRT{s}, Policy: p}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		start := time.Now()
		roundTripCtx(t, ctx, tr, "GET", "http://example.test/", nil)
		// Waits 1 s and 2 s fit in 5 s; the next, 4 s, would end after the
		// deadline, so the third 503 is returned at 3 s without sleeping.
		var offsets []time.Duration
		for _, r := range s.requests("/") {
			offsets = append(offsets, r.at.Sub(start))
		}
		want := []time.Duration{0, time.Second, 3 * time.Second}
		if len(offsets) != len(want) || offsets[1] != want[1] || offsets[2] != want[2] {
			t.Errorf("attempts at %v, want %v", offsets, want)
		}
		if got := time.Since(start); got != 3*time.Second {
			t.Errorf("RoundTrip took %v, want 3s", got)
		}
	})
}

func TestAttemptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(map[string][]step{
			"/slow-once": {{hang: true}, status(200)},
			"/late":      {{delay: 3 * time.Second}, status(200)},
			"/always":    {{hang: true}},
		})
		tr := &retryhttp.Transport{Base: memRT{s}, Policy: backoff.Policy{Retries: 2, Jitter: backoff.NoJitter},
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

// fixedRT answers every request with the same response, allocating nothing.
type fixedRT struct{ resp *http.Response }

func (f fixedRT) RoundTrip(*http.Request) (*http.Response, error) { return f.resp, nil }

func TestSuccessAllocatesNothing(t *testing.T) {
	// A first-attempt success must cost nothing beyond the base's own work:
	// the transport is meant to sit under every request of a program.
	resp := &http.Response{StatusCode: 200, Body: http.NoBody}
	get, _ := http.NewRequest("GET", "http://example.test/", nil)
	put, _ := http.NewRequest("PUT", "http://example.test/", strings.NewReader("x"))
	tests := []struct {
		name string
		tr   *retryhttp.Transport
		req  *http.Request
	}{
		{"zero Transport, GET", &retryhttp.Transport{Base: fixedRT{resp}}, get},
		{"404 is a success for the transport", &retryhttp.Transport{Base: fixedRT{&http.Response{StatusCode: 404, Body: http.NoBody}}}, get},
		{"PUT with GetBody", &retryhttp.Transport{Base: fixedRT{resp}, Policy: noWait}, put},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			allocs := testing.AllocsPerRun(100, func() {
				if _, err := tt.tr.RoundTrip(tt.req); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("RoundTrip allocated %v times, want 0", allocs)
			}
		})
	}
}

func TestErrorCountsEveryAttempt(t *testing.T) {
	for _, budget := range []retry.Budget{nil, &retry.TokenBucket{MaxTokens: 100}} {
		t.Run(fmt.Sprintf("budget %v", budget != nil), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newScript(map[string][]step{"/": {{delay: time.Second, reset: true}}})
				tr := &retryhttp.Transport{Base: memRT{s}, Policy: backoff.Policy{Retries: 2, Jitter: backoff.NoJitter}, Budget: budget}
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

// idleCounter is a RoundTripper that counts CloseIdleConnections calls.
type idleCounter struct {
	memRT
	closes int
}

func (c *idleCounter) CloseIdleConnections() { c.closes++ }

func TestCloseIdleConnections(t *testing.T) {
	base := &idleCounter{memRT: memRT{newScript(map[string][]step{"/": {status(503), status(503), status(200)}})}}
	client := &http.Client{Transport: &retryhttp.Transport{Base: base, Policy: noWait}}
	resp, err := client.Get("http://example.test/")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	readBody(t, resp)
	if base.closes != 0 {
		t.Errorf("retrying closed the shared pool's idle connections %d times, want 0", base.closes)
	}
	client.CloseIdleConnections()
	if base.closes != 1 {
		t.Errorf("Client.CloseIdleConnections reached the base %d times, want 1", base.closes)
	}
}

// failFirstRT fails its first call with err, then plays its script.
type failFirstRT struct {
	memRT
	err   error
	calls atomic.Int32
}

func (f *failFirstRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.calls.Add(1) == 1 {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, f.err
	}
	return f.memRT.RoundTrip(r)
}

// headerTimeout is like net/http's "timeout awaiting response headers".
type headerTimeout struct{}

func (headerTimeout) Error() string { return "net/http: timeout awaiting response headers" }
func (headerTimeout) Timeout() bool { return true }

func TestBaseErrors(t *testing.T) {
	// How each kind of error from the base is treated. A POST without key
	// is retried only when nothing can have been sent: a dial error or a
	// failed lookup, even when a custom DialContext returns the resolver's
	// error unwrapped. A name that does not exist will not exist a moment
	// later; certificate errors repeat too.
	dial := func(err error) error { return &net.OpError{Op: "dial", Net: "tcp", Err: err} }
	read := func(err error) error { return &net.OpError{Op: "read", Net: "tcp", Err: err} }
	tests := []struct {
		name      string
		method    string // GET, or POST without Idempotency-Key
		err       error
		wantCalls int32
	}{
		{"connection refused", "POST", dial(os.NewSyscallError("connect", syscall.ECONNREFUSED)), 2},
		{"bare ECONNREFUSED", "POST", os.NewSyscallError("connect", syscall.ECONNREFUSED), 2},
		{"reset, GET", "GET", read(syscall.ECONNRESET), 2},
		{"reset, POST", "POST", read(syscall.ECONNRESET), 1},
		{"unexpected EOF, GET", "GET", io.ErrUnexpectedEOF, 2},
		{"unexpected EOF, POST", "POST", io.ErrUnexpectedEOF, 1},
		{"response header timeout, GET", "GET", headerTimeout{}, 2},
		{"response header timeout, POST", "POST", headerTimeout{}, 1},
		{"DNS temporary", "POST", dial(&net.DNSError{Err: "server misbehaving", Name: "api.example", IsTemporary: true}), 2},
		{"DNS timeout", "POST", dial(&net.DNSError{Err: "i/o timeout", Name: "api.example", IsTimeout: true}), 2},
		{"DNS other failure", "POST", dial(&net.DNSError{Err: "no answer from DNS server", Name: "api.example"}), 2},
		{"DNS temporary, unwrapped", "POST", &net.DNSError{Err: "server misbehaving", Name: "api.example", IsTemporary: true}, 2},
		{"DNS timeout, unwrapped", "POST", &net.DNSError{Err: "i/o timeout", Name: "api.example", IsTimeout: true}, 2},
		{"DNS no such host", "GET", dial(&net.DNSError{Err: "no such host", Name: "nx.example", IsNotFound: true}), 1},
		{"DNS no such host, unwrapped", "GET", &net.DNSError{Err: "no such host", Name: "nx.example", IsNotFound: true}, 1},
		{"certificate verification", "GET", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, 1},
		{"unknown authority", "GET", x509.UnknownAuthorityError{}, 1},
		{"wrong host name", "GET", x509.HostnameError{Host: "api.example", Certificate: &x509.Certificate{}}, 1},
		{"expired certificate", "GET", x509.CertificateInvalidError{Reason: x509.Expired, Cert: &x509.Certificate{}}, 1},
		{"TLS alert", "GET", read(tls.AlertError(40)), 1},
		{"unrecognised error", "GET", errors.New("some wrapping transport's own failure"), 1},
		{"invalid port", "GET", dial(&net.AddrError{Err: "invalid port", Addr: "99999"}), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := &failFirstRT{memRT: memRT{newScript(nil)}, err: tt.err}
			tr := &retryhttp.Transport{Base: rt, Policy: noWait}
			req, _ := http.NewRequest(tt.method, "http://api.example/", strings.NewReader("x"))
			resp, err := tr.RoundTrip(req)
			if tt.wantCalls == 1 {
				if err == nil || !errors.Is(err, tt.err) {
					t.Errorf("RoundTrip error %v, want one wrapping %v", err, tt.err)
				}
			} else if err != nil {
				t.Errorf("RoundTrip: %v, want the retry to succeed", err)
			} else {
				readBody(t, resp)
			}
			if got := rt.calls.Load(); got != tt.wantCalls {
				t.Errorf("base called %d times, want %d", got, tt.wantCalls)
			}
		})
	}
}

// errReader fails every read.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestUnreadableBody(t *testing.T) {
	// A body without GetBody is buffered before the first attempt; if
	// reading it fails, nothing is sent and the body is still closed.
	errDisk := errors.New("disk on fire")
	body := &closeCounter{Reader: errReader{errDisk}}
	rt := &recordingRT{base: memRT{newScript(nil)}}
	tr := &retryhttp.Transport{Base: rt, Policy: noWait}
	req, _ := http.NewRequest("PUT", "http://example.test/", body)
	err := roundTripErr(t, tr, req)
	if !errors.Is(err, errDisk) {
		t.Errorf("error %v, want it to wrap the body's read error", err)
	}
	if got := body.closed.Load(); got != 1 {
		t.Errorf("request body closed %d times, want 1", got)
	}
	if len(rt.reqs) != 0 {
		t.Errorf("base called %d times, want 0", len(rt.reqs))
	}
}

// brokenRT breaks the RoundTripper contract in the way its fields say.
type brokenRT struct {
	resp *http.Response
	err  error
}

func (b brokenRT) RoundTrip(*http.Request) (*http.Response, error) { return b.resp, b.err }

func TestBrokenBase(t *testing.T) {
	// Whatever the base does, RoundTrip returns a response or an error,
	// never both, and closes a response it does not return.
	body := &closeCounter{Reader: strings.NewReader("ignored")}
	tests := []struct {
		name string
		base brokenRT
	}{
		{"response and error", brokenRT{&http.Response{StatusCode: 200, Body: body}, errors.New("both")}},
		{"neither", brokenRT{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &retryhttp.Transport{Base: tt.base, Policy: noWait}
			req, _ := http.NewRequest("GET", "http://example.test/", nil)
			resp, err := tr.RoundTrip(req)
			if resp != nil || err == nil {
				t.Errorf("RoundTrip = %v, %v; want nil and an error", resp, err)
			}
		})
	}
	if got := body.closed.Load(); got != 1 {
		t.Errorf("ignored response body closed %d times, want 1", got)
	}
}

// closingRT answers with a retryable status whose body records Close.
type closingRT struct {
	status int
	header http.Header
	bodies []*closeCounter
}

func (c *closingRT) RoundTrip(r *http.Request) (*http.Response, error) {
	b := &closeCounter{Reader: strings.NewReader("busy")}
	c.bodies = append(c.bodies, b)
	return &http.Response{StatusCode: c.status, Status: http.StatusText(c.status), Header: c.header.Clone(),
		Body: b, ContentLength: -1, Request: r}, nil
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

// countingBody is a 1 MiB response body that counts the bytes read.
type countingBody struct {
	read   int64
	closed bool
}

func (b *countingBody) Read(p []byte) (int, error) {
	n := min(int64(len(p)), 1<<20-b.read)
	if n == 0 {
		return 0, io.EOF
	}
	b.read += n
	return int(n), nil
}

func (b *countingBody) Close() error { b.closed = true; return nil }

func TestDrainIsBounded(t *testing.T) {
	// Draining a retried response frees its connection, but reading a
	// large body costs more than a new connection: at most 64 KiB is read.
	tests := []struct {
		name     string
		length   int64
		wantRead int64
	}{
		{"unknown length", -1, 64 << 10},
		{"known to be longer than 64 KiB", 1 << 20, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var bodies []*countingBody
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				b := &countingBody{}
				bodies = append(bodies, b)
				return &http.Response{StatusCode: 503, Body: b, ContentLength: tt.length, Request: r}, nil
			})
			tr := &retryhttp.Transport{Base: base, Policy: backoff.Policy{Retries: 1, Jitter: backoff.NoJitter}}
			req, _ := http.NewRequest("GET", "http://example.test/", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatalf("RoundTrip: %v", err)
			}
			if len(bodies) != 2 || resp.Body != bodies[1] {
				t.Fatalf("%d attempts, want 2 and the last response returned", len(bodies))
			}
			if b := bodies[0]; b.read > tt.wantRead || !b.closed {
				t.Errorf("retried response: read %d bytes, closed %v; want at most %d and closed", b.read, b.closed, tt.wantRead)
			}
			if b := bodies[1]; b.read != 0 || b.closed {
				t.Errorf("final response: read %d bytes, closed %v; want it untouched", b.read, b.closed)
			}
		})
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

func TestHTTP2StreamReset(t *testing.T) {
	// An HTTP/2 server resetting a stream is, for that request, what a
	// connection reset is in HTTP/1: it may have reached the server, so a
	// GET is retried and a POST without key is not.
	for _, tt := range []struct {
		method       string
		wantAttempts int32
	}{{"GET", 2}, {"POST", 1}} {
		t.Run(tt.method, func(t *testing.T) {
			var attempts atomic.Int32
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if attempts.Add(1) == 1 {
					panic(http.ErrAbortHandler) // RST_STREAM with INTERNAL_ERROR
				}
				io.WriteString(w, "ok")
			}))
			srv.EnableHTTP2 = true
			srv.Config.ErrorLog = nopLogger()
			srv.StartTLS()
			defer srv.Close()
			base := srv.Client().Transport.(*http.Transport)
			defer base.CloseIdleConnections()
			tr := &retryhttp.Transport{Base: base, Policy: noWait}
			req, _ := http.NewRequest(tt.method, srv.URL, strings.NewReader("x"))
			resp, err := tr.RoundTrip(req)
			if tt.wantAttempts == 2 {
				if err != nil {
					t.Fatalf("RoundTrip: %v", err)
				}
				if body := readBody(t, resp); resp.ProtoMajor != 2 || body != "ok" {
					t.Errorf("response %s %q, want HTTP/2 and %q", resp.Proto, body, "ok")
				}
			} else if !errors.Is(err, retryhttp.ErrNotReplayable) {
				t.Errorf("RoundTrip error %v, want ErrNotReplayable", err)
			}
			if got := attempts.Load(); got != tt.wantAttempts {
				t.Errorf("server saw %d attempts, want %d", got, tt.wantAttempts)
			}
		})
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
