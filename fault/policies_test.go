package fault_test

// The project's own integration tests of its policies: each fault kind
// against retryhttp, hedge, breaker and retry, checking that the client
// reacts as its docs say. Where time matters, the faults act on the
// client side (fault.Transport over an in-memory base) under
// testing/synctest; the rest run against real loopback servers.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
	"github.com/again-go/again/fault"
	"github.com/again-go/again/hedge"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
)

var quick = backoff.Policy{Initial: 10 * time.Millisecond, Max: 10 * time.Millisecond, Retries: 3}

// attempts is an OnSuccess/OnGiveUp pair that records the attempts of the
// last request.
type attempts struct{ n atomic.Int64 }

func (a *attempts) hook(e retryhttp.Event) { a.n.Store(int64(e.Attempt)) }

// inMemory returns a client whose attempts go through the faults to an
// in-memory server, and that server.
func inMemory(rt *retryhttp.Transport, faults ...fault.Fault) (*http.Client, *memory, *fault.Injector) {
	m := &memory{}
	in := &fault.Injector{Faults: faults}
	rt.Base = &fault.Transport{Injector: in, Base: m}
	return &http.Client{Transport: rt}, m, in
}

func TestRetryHTTPHonoursRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name     string
		f        fault.Fault
		maxAfter time.Duration
		wantWait time.Duration // from the first attempt to the answer
		wantCode int
		wantN    int
	}{
		{"seconds", fault.Fault{Status: 503, RetryAfter: 3 * time.Second, Times: 1}, 0, 3 * time.Second, 200, 2},
		{"a date", fault.Fault{Status: 503, RetryAfter: 3 * time.Second, RetryAfterDate: true, Times: 1}, 0, 3 * time.Second, 200, 2},
		{"429", fault.Fault{Status: 429, RetryAfter: 2 * time.Second, Times: 1}, 0, 2 * time.Second, 200, 2},
		{"too long: returned at once", fault.Fault{Status: 503, RetryAfter: 2 * time.Minute}, time.Minute, 0, 503, 1},
		{"shorter than the first delay: the delay", fault.Fault{Status: 503, RetryAfter: time.Nanosecond, Times: 1}, 0, time.Second, 200, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var a attempts
				p := quick
				if tc.name == "shorter than the first delay: the delay" {
					p = backoff.Policy{Initial: 2 * time.Second, Max: 2 * time.Second, Jitter: backoff.NoJitter}
				}
				c, _, _ := inMemory(&retryhttp.Transport{Policy: p, MaxRetryAfter: tc.maxAfter, OnSuccess: a.hook, OnGiveUp: a.hook}, tc.f)
				start := time.Now()
				o := fetch(t.Context(), c, "http://api.test/")
				took := time.Since(start)
				if o.status != tc.wantCode || a.n.Load() != int64(tc.wantN) {
					t.Errorf("got %d after %d attempts, want %d after %d", o.status, a.n.Load(), tc.wantCode, tc.wantN)
				}
				if took < tc.wantWait || took > tc.wantWait+time.Second {
					t.Errorf("took %v, want %v (at most a second more: rounding)", took, tc.wantWait)
				}
			})
		})
	}
}

// A 429 whose RateLimit field says the quota is exhausted until the
// window's end: retryhttp waits for that end.
func TestRetryHTTPWaitsForTheRateLimitReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var a attempts
		c, m, in := inMemory(&retryhttp.Transport{Policy: quick, OnSuccess: a.hook, OnGiveUp: a.hook},
			fault.Fault{Kind: fault.RateLimit, Limit: 1, Window: 2 * time.Second})
		fetch(t.Context(), c, "http://api.test/") // the window's one request
		start := time.Now()
		o := fetch(t.Context(), c, "http://api.test/")
		if took := time.Since(start); o.status != 200 || took != 2*time.Second || a.n.Load() != 2 {
			t.Errorf("got %d after %v and %d attempts, want 200 after 2s and 2", o.status, took, a.n.Load())
		}
		if in.Injected(fault.RateLimit) != 1 || m.calls.Load() != 2 {
			t.Errorf("%d 429s and %d requests served, want 1 and 2", in.Injected(fault.RateLimit), m.calls.Load())
		}
	})
}

// Over a real loopback server: network failures are retried for a GET,
// and a body cut off is retried only when ReadBody reads it within the
// attempt, as retryhttp's docs say.
func TestRetryHTTPNetworkFaults(t *testing.T) {
	for _, tc := range []struct {
		name      string
		f         fault.Fault
		readBody  bool
		method    string
		wantN     int  // attempts
		wantBody  bool // the whole body read
		wantCalls int64
	}{
		{"reset before headers: retried", fault.Fault{Kind: fault.Reset, Times: 2}, false, "GET", 3, true, 3},
		{"reset before headers, a POST: not retried", fault.Fault{Kind: fault.Reset, Times: 1}, false, "POST", 1, false, 1},
		{"reset mid-body, ReadBody: retried", fault.Fault{Kind: fault.Reset, Stage: fault.MidBody, Times: 1}, true, "GET", 2, true, 2},
		{"reset mid-body without ReadBody: the caller's error", fault.Fault{Kind: fault.Reset, Stage: fault.MidBody, Times: 1}, false, "GET", 1, false, 1},
		{"reset after headers, ReadBody: retried", fault.Fault{Kind: fault.Reset, Stage: fault.AfterHeaders, Times: 1}, true, "GET", 2, true, 2},
		{"content-length lie, ReadBody: retried", fault.Fault{Kind: fault.CutBody, Times: 1}, true, "GET", 2, true, 2},
		{"503 twice: retried", fault.Fault{Times: 2}, false, "GET", 3, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, b, _ := serve(t, tc.f)
			var a attempts
			var got []byte
			base := &http.Transport{}
			defer base.CloseIdleConnections()
			rt := &retryhttp.Transport{Base: base, Policy: quick, OnSuccess: a.hook, OnGiveUp: a.hook}
			if tc.readBody {
				rt.ReadBody = func(r *http.Response) (err error) { got, err = io.ReadAll(r.Body); return err }
			}
			var n atomic.Int64
			rt.OnRetry = func(e retryhttp.Event) { n.Store(int64(e.Attempt) + 1) }
			req, _ := http.NewRequestWithContext(t.Context(), tc.method, srv.URL, nil)
			resp, err := (&http.Client{Transport: rt}).Do(req)
			if err == nil {
				if !tc.readBody {
					got, err = io.ReadAll(resp.Body)
				}
				resp.Body.Close()
			}
			attempts := max(a.n.Load(), n.Load(), 1)
			if attempts != int64(tc.wantN) {
				t.Errorf("%d attempts, want %d (err %v)", attempts, tc.wantN, err)
			}
			if whole := err == nil && len(got) == bodyLen; whole != tc.wantBody {
				t.Errorf("whole body %v (%d bytes, %v), want %v", whole, len(got), err, tc.wantBody)
			}
			if b.calls.Load() != tc.wantCalls {
				t.Errorf("the server ran %d times, want %d", b.calls.Load(), tc.wantCalls)
			}
		})
	}
}

// AttemptTimeout bounds the time to the headers: a slow first byte is
// cut short and retried, a slow body is not (only ReadBody brings the
// body within the attempt).
func TestRetryHTTPAttemptTimeoutSlowFirstByteAgainstSlowBody(t *testing.T) {
	t.Run("slow first byte: retried", func(t *testing.T) {
		srv, _, _ := serve(t, fault.Fault{Kind: fault.SlowFirstByte, Delay: time.Hour, Times: 1})
		var a attempts
		base := &http.Transport{}
		defer base.CloseIdleConnections()
		c := &http.Client{Transport: &retryhttp.Transport{Base: base, Policy: quick, AttemptTimeout: time.Second, OnSuccess: a.hook}}
		o := fetch(t.Context(), c, srv.URL)
		if o.status != 200 || o.read != bodyLen || a.n.Load() < 2 {
			t.Errorf("got %d, %d bytes after %d attempts; want 200, the body, at least 2", o.status, o.read, a.n.Load())
		}
	})
	t.Run("slow body: the caller's", func(t *testing.T) {
		srv, _, _ := serve(t, fault.Fault{Kind: fault.SlowBody, Delay: time.Hour, Times: 1})
		var a attempts
		base := &http.Transport{}
		defer base.CloseIdleConnections()
		c := &http.Client{Transport: &retryhttp.Transport{Base: base, Policy: quick, AttemptTimeout: time.Second, OnSuccess: a.hook}}
		ctx, cancel := context.WithCancel(t.Context())
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
		resp, err := c.Do(req)
		if err != nil || a.n.Load() != 1 {
			t.Fatalf("got %v after %d attempts; want the headers at the first", err, a.n.Load())
		}
		cancel() // the caller's deadline: the body was still held back
		if b, err := io.ReadAll(resp.Body); len(b) != 0 || err == nil {
			t.Errorf("body %d bytes, %v; want none, held back", len(b), err)
		}
		resp.Body.Close()
	})
}

// An outage opens the host's breaker: requests then fail at once with
// breaker.ErrOpen and stop reaching the server, and once the outage has
// passed and the breaker's open period too, a probe closes it.
func TestOutageOpensTheBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		group := &breaker.Group{Config: breaker.Config{ConsecutiveFailures: 3, Open: backoff.Policy{Initial: 5 * time.Second, Jitter: backoff.NoJitter}}}
		c, _, in := inMemory(&retryhttp.Transport{Policy: backoff.Policy{Retries: backoff.NoRetries}, Breakers: group},
			fault.Fault{Kind: fault.Outage, Start: 0, Duration: 3 * time.Second})
		var rejected int
		for range 10 {
			o := fetch(t.Context(), c, "http://api.test/")
			if errors.Is(o.err, breaker.ErrOpen) {
				rejected++
			}
		}
		if served := in.Requests(); served != 3 || rejected != 7 {
			t.Errorf("outage: %d requests reached the faults, %d rejected by the breaker; want 3 and 7", served, rejected)
		}
		time.Sleep(time.Until(start.Add(6 * time.Second))) // past the outage and the open period
		if o := fetch(t.Context(), c, "http://api.test/"); o.status != 200 {
			t.Errorf("after the outage: %d, %v; want the probe's 200", o.status, o.err)
		}
		if o := fetch(t.Context(), c, "http://api.test/"); o.status != 200 {
			t.Errorf("after the probe: %d, %v; want 200, closed", o.status, o.err)
		}
	})
}

// hedges counts a Hedger's hedges sent and won.
type hedges struct{ sent, won atomic.Int64 }

func (h *hedges) hook(e hedge.Event) {
	if e.Won {
		h.won.Add(1)
	} else {
		h.sent.Add(1)
	}
}

// A latency fault on the first copy: the hedge sent after the Hedger's
// delay answers. A 503 stops the attempt's hedging, as retryhttp's docs
// say: a hedge that got one is followed by no other.
func TestHedgeAgainstLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var h hedges
		c, m, _ := inMemory(&retryhttp.Transport{Policy: quick, Hedge: &hedge.Hedger{After: 100 * time.Millisecond, OnHedge: h.hook}},
			fault.Fault{Kind: fault.Latency, Delay: time.Hour, Times: 1})
		start := time.Now()
		o := fetch(t.Context(), c, "http://api.test/")
		if took := time.Since(start); o.status != 200 || took != 100*time.Millisecond || h.sent.Load() != 1 || h.won.Load() != 1 {
			t.Errorf("got %d after %v with %d hedges sent, %d won; want 200 after 100ms, 1 and 1", o.status, took, h.sent.Load(), h.won.Load())
		}
		if m.calls.Load() != 1 {
			t.Errorf("%d requests served, want 1: the slow copy was canceled before it was sent", m.calls.Load())
		}
	})
	synctest.Test(t, func(t *testing.T) {
		var h hedges
		c, _, _ := inMemory(&retryhttp.Transport{Policy: quick, Hedge: &hedge.Hedger{After: 100 * time.Millisecond, MaxHedges: 2, OnHedge: h.hook}},
			fault.Fault{Kind: fault.Latency, Delay: time.Hour, Times: 1}, // the first copy
			fault.Fault{Status: 503, Skip: 1, Times: 1})                  // the first hedge
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if o := fetch(ctx, c, "http://api.test/"); !errors.Is(o.err, context.DeadlineExceeded) || h.sent.Load() != 1 {
			t.Errorf("a slow copy, then a 503 hedge: got %d, %v with %d hedges sent; want the deadline and no second hedge", o.status, o.err, h.sent.Load())
		}
	})
}

// retry.Do around a client that does not retry: the injected resets are
// ordinary errors, retried until the script lets a request through.
func TestRetryDoAgainstScript(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := &fault.Injector{Faults: []fault.Fault{{Kind: fault.Reset, Times: 2}}}
		c := &http.Client{Transport: &fault.Transport{Injector: in, Base: &memory{}}}
		n := 0
		status, err := retry.Do(t.Context(), quick, func(ctx context.Context) (int, error) {
			n++
			o := fetch(ctx, c, "http://api.test/")
			return o.status, o.err
		})
		if err != nil || status != 200 || n != 3 {
			t.Errorf("retry.Do = %d, %v after %d calls, want 200 after 3", status, err, n)
		}
	})
}
