package retryhttp_test

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
)

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
		{"invalid budget", &retryhttp.Transport{Policy: noWait, Budget: &retry.TokenBucket{MaxTokens: -1}}, context.Background},
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

func TestUntilDeadlineNeedsADeadline(t *testing.T) {
	rec := &recordingRT{base: fixedRT{&http.Response{StatusCode: 200, Body: http.NoBody}}}
	tr := &retryhttp.Transport{Base: rec, Policy: backoff.Policy{Retries: backoff.UntilDeadline}}
	req, _ := http.NewRequest("GET", "http://example.test/", nil)
	if _, err := tr.RoundTrip(req); !errors.Is(err, retry.ErrNoDeadline) || len(rec.reqs) != 0 {
		t.Fatalf("RoundTrip without a deadline = %v after %d requests, want ErrNoDeadline and none sent", err, len(rec.reqs))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	resp, err := tr.RoundTrip(req.WithContext(ctx))
	if err != nil || resp.StatusCode != 200 || len(rec.reqs) != 1 {
		t.Fatalf("RoundTrip with a deadline = %v, %v after %d requests, want 200 after 1", resp, err, len(rec.reqs))
	}
}
