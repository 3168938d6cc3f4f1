package retryhttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retryhttp"
)

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

// TestCloseIdleConnectionsHedgeBase checks that CloseIdleConnections
// reaches HedgeBase, whose pool is not Base's, once, and not a second time
// when it is Base itself.
func TestCloseIdleConnectionsHedgeBase(t *testing.T) {
	var fn int // calls of closeFunc's function
	closeFunc := idleFunc(func() { fn++ })
	one, other := &idleCounter{}, &idleCounter{}
	tests := []struct {
		name            string
		base, hedgeBase http.RoundTripper
		wantBase        int // closes of one
		wantHedge       int // closes of other
		wantFunc        int
	}{
		{name: "no HedgeBase", base: one, wantBase: 1},
		{name: "its own HedgeBase", base: one, hedgeBase: other, wantBase: 1, wantHedge: 1},
		{name: "HedgeBase is Base", base: one, hedgeBase: one, wantBase: 1},
		{name: "HedgeBase beside the default", hedgeBase: other, wantHedge: 1},
		// A func value cannot be compared: both are called, without the
		// panic of ==.
		{name: "the same func", base: closeFunc, hedgeBase: closeFunc, wantFunc: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			one.closes, other.closes, fn = 0, 0, 0
			(&retryhttp.Transport{Base: tt.base, HedgeBase: tt.hedgeBase}).CloseIdleConnections()
			if one.closes != tt.wantBase || other.closes != tt.wantHedge || fn != tt.wantFunc {
				t.Errorf("CloseIdleConnections reached Base %d, HedgeBase %d, the func %d times; want %d, %d, %d",
					one.closes, other.closes, fn, tt.wantBase, tt.wantHedge, tt.wantFunc)
			}
		})
	}
}

// idleFunc is a RoundTripper of a func type, which == cannot compare,
// whose CloseIdleConnections calls it. It sends nothing.
type idleFunc func()

func (f idleFunc) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("idleFunc sends nothing")
}

func (f idleFunc) CloseIdleConnections() { f() }

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
			tr := &retryhttp.Transport{Base: base, Policy: backoff.Policy{Initial: -1, Retries: 1, Jitter: backoff.NoJitter}}
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
