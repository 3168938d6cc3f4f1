package fault_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/again-go/again/fault"
)

const bodyLen = 1000

var body = strings.Repeat("x", bodyLen)

// backend is the handler behind the faults: it counts its requests and
// answers 1000 bytes, with a Content-Length unless the path is /chunked.
type backend struct{ calls atomic.Int64 }

func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.calls.Add(1)
	if r.URL.Path != "/chunked" {
		w.Header().Set("Content-Length", strconv.Itoa(bodyLen))
	}
	w.WriteHeader(200)
	io.WriteString(w, body[:bodyLen/2])
	http.NewResponseController(w).Flush()
	io.WriteString(w, body[bodyLen/2:])
}

// serve starts a loopback server with the faults in front of a backend.
func serve(t *testing.T, faults ...fault.Fault) (*httptest.Server, *backend, *http.Client) {
	t.Helper()
	b := &backend{}
	srv := httptest.NewServer(&fault.Handler{Injector: &fault.Injector{Faults: faults}, Next: b})
	tr := &http.Transport{}
	t.Cleanup(func() { tr.CloseIdleConnections(); srv.Close() })
	return srv, b, &http.Client{Transport: tr}
}

// outcome is what a client saw of one request.
type outcome struct {
	status  int // 0: no response
	header  http.Header
	read    int   // body bytes read
	err     error // RoundTrip's error
	bodyErr error // the body's read error
}

func fetch(ctx context.Context, c *http.Client, url string) outcome {
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := c.Do(req)
	if err != nil {
		return outcome{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return outcome{status: resp.StatusCode, header: resp.Header, read: len(b), bodyErr: err}
}

func TestHandlerKinds(t *testing.T) {
	for _, tc := range []struct {
		name      string
		f         fault.Fault
		path      string
		wantCalls int64 // the backend's calls: whether the server did the work
		check     func(t *testing.T, o outcome)
	}{
		{"status with retry-after", fault.Fault{RetryAfter: 2 * time.Second, Header: http.Header{"X-Why": {"test"}}}, "/", 0, func(t *testing.T, o outcome) {
			if o.status != 503 || o.header.Get("Retry-After") != "2" || o.header.Get("X-Why") != "test" {
				t.Errorf("got %d Retry-After %q X-Why %q, want 503, 2, test", o.status, o.header.Get("Retry-After"), o.header.Get("X-Why"))
			}
		}},
		{"rate limit", fault.Fault{Kind: fault.RateLimit, Limit: 1}, "/", 1, func(t *testing.T, o outcome) {
			if o.status != 200 {
				t.Errorf("first request: %d, want 200", o.status)
			}
		}},
		{"reset before headers", fault.Fault{Kind: fault.Reset}, "/", 1, func(t *testing.T, o outcome) {
			if o.err == nil {
				t.Errorf("got a response %d, want an error", o.status)
			}
		}},
		{"reset after headers", fault.Fault{Kind: fault.Reset, Stage: fault.AfterHeaders}, "/", 1, func(t *testing.T, o outcome) {
			if o.status != 200 || o.read != 0 || o.bodyErr == nil {
				t.Errorf("got %d, %d bytes, %v; want 200, 0 bytes, an error", o.status, o.read, o.bodyErr)
			}
		}},
		{"reset mid-body", fault.Fault{Kind: fault.Reset, Stage: fault.MidBody}, "/", 1, func(t *testing.T, o outcome) {
			if o.status != 200 || o.read != bodyLen/2 || o.bodyErr == nil {
				t.Errorf("got %d, %d bytes, %v; want 200, %d bytes, an error", o.status, o.read, o.bodyErr, bodyLen/2)
			}
		}},
		{"reset mid-body, chunked", fault.Fault{Kind: fault.Reset, Stage: fault.MidBody, Bytes: 100}, "/chunked", 1, func(t *testing.T, o outcome) {
			if o.status != 200 || o.read != 100 || o.bodyErr == nil {
				t.Errorf("got %d, %d bytes, %v; want 200, 100 bytes, an error", o.status, o.read, o.bodyErr)
			}
		}},
		{"content-length lie", fault.Fault{Kind: fault.CutBody, Bytes: 300}, "/", 1, func(t *testing.T, o outcome) {
			if o.status != 200 || o.read != 300 || !errors.Is(o.bodyErr, io.ErrUnexpectedEOF) {
				t.Errorf("got %d, %d bytes, %v; want 200, 300 bytes, unexpected EOF", o.status, o.read, o.bodyErr)
			}
		}},
		{"content-length lie, chunked", fault.Fault{Kind: fault.CutBody, Bytes: 300}, "/chunked", 1, func(t *testing.T, o outcome) {
			if o.status != 200 || o.read != 300 || !errors.Is(o.bodyErr, io.ErrUnexpectedEOF) {
				t.Errorf("got %d, %d bytes, %v; want 200, 300 bytes, unexpected EOF", o.status, o.read, o.bodyErr)
			}
		}},
		{"latency", fault.Fault{Kind: fault.Latency, Delay: 30 * time.Millisecond}, "/", 1, func(t *testing.T, o outcome) {
			if o.status != 200 || o.read != bodyLen || o.bodyErr != nil {
				t.Errorf("got %d, %d bytes, %v; want 200 and the body", o.status, o.read, o.bodyErr)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, b, c := serve(t, tc.f)
			start := time.Now()
			tc.check(t, fetch(t.Context(), c, srv.URL+tc.path))
			if took := time.Since(start); took < tc.f.Delay {
				t.Errorf("took %v, want at least the delay %v", took, tc.f.Delay)
			}
			if n := b.calls.Load(); n != tc.wantCalls {
				t.Errorf("the server ran %d times, want %d", n, tc.wantCalls)
			}
		})
	}
}

func TestHandlerRateLimited(t *testing.T) {
	srv, _, c := serve(t, fault.Fault{Kind: fault.RateLimit, Limit: 2, Window: time.Hour})
	var got []int
	for range 3 {
		got = append(got, fetch(t.Context(), c, srv.URL).status)
	}
	if got[0] != 200 || got[1] != 200 || got[2] != 429 {
		t.Errorf("limit 2: statuses %v, want 200 200 429", got)
	}
}

// A slow first byte holds the headers back; a slow body sends them at
// once and holds the body: a client bounding the time to the headers
// (retryhttp's AttemptTimeout) catches the first and not the second.
func TestHandlerSlowFirstByteAgainstSlowBody(t *testing.T) {
	t.Run("slow first byte", func(t *testing.T) {
		srv, _, c := serve(t, fault.Fault{Kind: fault.SlowFirstByte, Delay: time.Hour})
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		if o := fetch(ctx, c, srv.URL); !errors.Is(o.err, context.DeadlineExceeded) {
			t.Errorf("got %d, %v; want the headers held back past the deadline", o.status, o.err)
		}
	})
	t.Run("slow body", func(t *testing.T) {
		srv, _, c := serve(t, fault.Fault{Kind: fault.SlowBody, Delay: time.Hour})
		ctx, cancel := context.WithCancel(t.Context())
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
		resp, err := c.Do(req) // would hang for an hour if the headers waited
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		cancel()
		if b, err := io.ReadAll(resp.Body); len(b) != 0 || err == nil {
			t.Errorf("body: %d bytes, %v; want none, held back", len(b), err)
		}
	})
	t.Run("stall", func(t *testing.T) {
		srv, b, c := serve(t, fault.Fault{Kind: fault.Stall})
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		if o := fetch(ctx, c, srv.URL); !errors.Is(o.err, context.DeadlineExceeded) || b.calls.Load() != 0 {
			t.Errorf("got %d, %v, the server ran %d times; want a deadline and no work", o.status, o.err, b.calls.Load())
		}
	})
}

func BenchmarkHandlerNoMatch(b *testing.B) {
	in := &fault.Injector{Faults: []fault.Fault{
		{Match: fault.Match{Path: "/api/"}},
		{Kind: fault.Reset, Match: fault.Match{Method: "POST"}},
		{Kind: fault.Latency, Match: fault.Match{Header: "X-Fault", Value: "slow"}, Delay: time.Second},
	}}
	h := &fault.Handler{Injector: in, Next: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})}
	req := httptest.NewRequest("GET", "/web/index.html", nil)
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, req)
	}
}

// Over HTTP/2 a connection cannot be hijacked: a Reset aborts the
// handler, which resets the stream, and the client still sees the body
// cut off.
func TestHandlerResetHTTP2(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stage fault.Stage
		read  int
	}{{"mid-body", fault.MidBody, bodyLen / 2}, {"after headers", fault.AfterHeaders, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			b := &backend{}
			srv := httptest.NewUnstartedServer(&fault.Handler{Injector: &fault.Injector{Faults: []fault.Fault{{Kind: fault.Reset, Stage: tc.stage}}}, Next: b})
			srv.EnableHTTP2 = true
			srv.StartTLS()
			defer srv.Close()
			c := srv.Client()
			defer c.CloseIdleConnections()
			req, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL, nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, err := io.ReadAll(resp.Body)
			if resp.ProtoMajor != 2 || resp.StatusCode != 200 || len(got) != tc.read || err == nil {
				t.Errorf("HTTP/%d %d, %d bytes, %v; want HTTP/2 200, %d bytes, a stream error", resp.ProtoMajor, resp.StatusCode, len(got), err, tc.read)
			}
		})
	}
}

// longChunked answers 100 KB without a Content-Length, in writes of 8 KB
// flushed one by one: a stream whose length the fault cannot know.
var longChunked = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	chunk := strings.Repeat("y", 8<<10)
	for range 100 << 10 / len(chunk) {
		io.WriteString(w, chunk)
		http.NewResponseController(w).Flush()
	}
})

// Of a body of unknown length, MidBody and CutBody let through a number of
// bytes drawn with the seed, from 1 to MaxDrawnBytes: a part of it, never
// nothing (it was nothing), the same for the same seed, on the server side
// and the client side alike.
func TestUnknownLengthCutIsSeeded(t *testing.T) {
	for _, kind := range []fault.Kind{fault.Reset, fault.CutBody} {
		t.Run(kind.String(), func(t *testing.T) {
			seen := map[int]bool{}
			for seed := range uint64(8) {
				f := fault.Fault{Kind: kind, Stage: fault.MidBody}
				srv := httptest.NewServer(&fault.Handler{Injector: &fault.Injector{Seed: seed, Faults: []fault.Fault{f}}, Next: longChunked})
				tr := &http.Transport{}
				o := fetch(t.Context(), &http.Client{Transport: tr}, srv.URL)
				tr.CloseIdleConnections()
				srv.Close()
				if o.status != 200 || o.read < 1 || o.read > fault.MaxDrawnBytes || o.bodyErr == nil {
					t.Errorf("seed %d, server side: %d, %d bytes, %v; want 200, 1 to %d bytes of 100 KB, an error", seed, o.status, o.read, o.bodyErr, fault.MaxDrawnBytes)
				}
				if kind == fault.CutBody && o.header.Get("Content-Length") != strconv.Itoa(o.read+1) {
					t.Errorf("seed %d: Content-Length %q for %d bytes, want one more", seed, o.header.Get("Content-Length"), o.read)
				}
				// The client side, on the same chunked body, draws the same.
				up := httptest.NewServer(longChunked)
				tr = &http.Transport{}
				c := &http.Client{Transport: &fault.Transport{Injector: &fault.Injector{Seed: seed, Faults: []fault.Fault{f}}, Base: tr}}
				co := fetch(t.Context(), c, up.URL)
				tr.CloseIdleConnections()
				up.Close()
				if co.read != o.read || co.bodyErr == nil {
					t.Errorf("seed %d, client side: %d bytes, %v; want %d as the server side, an error", seed, co.read, co.bodyErr, o.read)
				}
				seen[o.read] = true
			}
			if len(seen) < 4 {
				t.Errorf("8 seeds cut at %d distinct lengths %v, want them spread", len(seen), seen)
			}
		})
	}
}

// A 204 or a 304 has no body: the fault's answer has none either, on
// either side, and the client reads it cleanly.
func TestBodilessStatus(t *testing.T) {
	for _, st := range []int{http.StatusNoContent, http.StatusNotModified} {
		in := &fault.Injector{Faults: []fault.Fault{{Status: st}}}
		srv := httptest.NewServer(&fault.Handler{Injector: in, Next: http.NotFoundHandler()})
		tr := &http.Transport{}
		o := fetch(t.Context(), &http.Client{Transport: tr}, srv.URL)
		tr.CloseIdleConnections()
		srv.Close()
		if o.status != st || o.read != 0 || o.bodyErr != nil || o.err != nil {
			t.Errorf("server side %d: got %d, %d bytes, %v %v; want %d, no body, no error", st, o.status, o.read, o.err, o.bodyErr, st)
		}
		co := fetch(t.Context(), &http.Client{Transport: &fault.Transport{Injector: in, Base: &memory{}}}, "http://example.com/")
		if co.status != st || co.read != 0 || co.bodyErr != nil || co.header.Get("Content-Length") != "" {
			t.Errorf("client side %d: got %d, %d bytes, Content-Length %q, %v; want %d, no body", st, co.status, co.read, co.header.Get("Content-Length"), co.bodyErr, st)
		}
	}
}
