package fault_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/fault"
)

// memory is an in-memory base RoundTripper: it counts its requests and
// answers 1000 bytes with a Content-Length, so that the Transport's
// waits run under testing/synctest.
type memory struct{ calls atomic.Int64 }

func (m *memory) RoundTrip(req *http.Request) (*http.Response, error) {
	m.calls.Add(1)
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body)), ContentLength: bodyLen, Request: req}, nil
}

func TestTransportKinds(t *testing.T) {
	isReset := func(err error) bool {
		var op *net.OpError
		return errors.Is(err, syscall.ECONNRESET) && errors.As(err, &op) && errors.Is(err, fault.ErrInjected)
	}
	for _, tc := range []struct {
		name      string
		f         fault.Fault
		wantCalls int
		wantTook  time.Duration // exact, in the bubble's time
		check     func(t *testing.T, o outcome)
	}{
		{"status", fault.Fault{Status: 429, RetryAfter: 1500 * time.Millisecond}, 0, 0, func(t *testing.T, o outcome) {
			if o.status != 429 || o.header.Get("Retry-After") != "2" {
				t.Errorf("got %d Retry-After %q, want 429, 2", o.status, o.header.Get("Retry-After"))
			}
		}},
		{"reset before headers", fault.Fault{Kind: fault.Reset}, 1, 0, func(t *testing.T, o outcome) {
			if !isReset(o.err) {
				t.Errorf("got %d, %v; want an injected connection reset", o.status, o.err)
			}
		}},
		{"reset after headers", fault.Fault{Kind: fault.Reset, Stage: fault.AfterHeaders}, 1, 0, func(t *testing.T, o outcome) {
			if o.status != 200 || o.read != 0 || !isReset(o.bodyErr) {
				t.Errorf("got %d, %d bytes, %v; want 200, 0 bytes, a reset", o.status, o.read, o.bodyErr)
			}
		}},
		{"reset mid-body", fault.Fault{Kind: fault.Reset, Stage: fault.MidBody}, 1, 0, func(t *testing.T, o outcome) {
			if o.status != 200 || o.read != bodyLen/2 || !isReset(o.bodyErr) {
				t.Errorf("got %d, %d bytes, %v; want 200, %d bytes, a reset", o.status, o.read, o.bodyErr, bodyLen/2)
			}
		}},
		{"content-length lie", fault.Fault{Kind: fault.CutBody, Bytes: 10}, 1, 0, func(t *testing.T, o outcome) {
			if o.status != 200 || o.read != 10 || !errors.Is(o.bodyErr, io.ErrUnexpectedEOF) {
				t.Errorf("got %d, %d bytes, %v; want 200, 10 bytes, unexpected EOF", o.status, o.read, o.bodyErr)
			}
		}},
		{"latency", fault.Fault{Kind: fault.Latency, Delay: 3 * time.Second}, 1, 3 * time.Second, func(t *testing.T, o outcome) {
			if o.status != 200 || o.read != bodyLen {
				t.Errorf("got %d, %d bytes; want 200 and the body", o.status, o.read)
			}
		}},
		{"slow first byte", fault.Fault{Kind: fault.SlowFirstByte, Delay: time.Second}, 1, time.Second, func(t *testing.T, o outcome) {
			if o.status != 200 || o.read != bodyLen {
				t.Errorf("got %d, %d bytes; want 200 and the body", o.status, o.read)
			}
		}},
		{"slow body", fault.Fault{Kind: fault.SlowBody, Delay: time.Second}, 1, time.Second, func(t *testing.T, o outcome) {
			if o.status != 200 || o.read != bodyLen {
				t.Errorf("got %d, %d bytes; want 200 and the body", o.status, o.read)
			}
		}},
		{"stall with a delay", fault.Fault{Kind: fault.Stall, Delay: 5 * time.Second}, 0, 5 * time.Second, func(t *testing.T, o outcome) {
			if !isReset(o.err) {
				t.Errorf("got %d, %v; want a reset after the stall", o.status, o.err)
			}
		}},
		{"stall until the deadline", fault.Fault{Kind: fault.Stall}, 0, time.Minute, func(t *testing.T, o outcome) {
			if !errors.Is(o.err, context.DeadlineExceeded) {
				t.Errorf("got %d, %v; want the deadline", o.status, o.err)
			}
		}},
		{"latency from a distribution", fault.Fault{Kind: fault.Latency, Dist: fault.Distribution{Name: fault.Pareto, Scale: time.Second, Alpha: 2}}, 1, -1, func(t *testing.T, o outcome) {
			if o.status != 200 {
				t.Errorf("got %d, want 200", o.status)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := &memory{}
				c := &http.Client{Transport: &fault.Transport{Injector: &fault.Injector{Faults: []fault.Fault{tc.f}}, Base: m}}
				ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
				defer cancel()
				start := time.Now()
				o := fetch(ctx, c, "http://example.com/")
				took := time.Since(start)
				tc.check(t, o)
				switch {
				case tc.wantTook >= 0 && took != tc.wantTook:
					t.Errorf("took %v, want %v", took, tc.wantTook)
				case tc.wantTook < 0 && took < time.Second:
					t.Errorf("took %v, want at least the Pareto's scale 1s", took)
				}
				if m.calls.Load() != int64(tc.wantCalls) {
					t.Errorf("the server ran %d times, want %d", m.calls.Load(), tc.wantCalls)
				}
			})
		})
	}
}

// The same seed draws the same latencies; another seed others.
func TestTransportLatencyIsSeeded(t *testing.T) {
	run := func(seed uint64) []time.Duration {
		var out []time.Duration
		synctest.Test(t, func(t *testing.T) {
			in := &fault.Injector{Seed: seed, Faults: []fault.Fault{{Kind: fault.Latency, Dist: fault.Distribution{Name: fault.Lognormal}}}}
			c := &http.Client{Transport: &fault.Transport{Injector: in, Base: &memory{}}}
			for range 5 {
				start := time.Now()
				fetch(t.Context(), c, "http://example.com/")
				out = append(out, time.Since(start))
			}
		})
		return out
	}
	a, b, c := run(7), run(7), run(8)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("seed 7 twice: latencies %v and %v", a, b)
		}
	}
	if a[0] == c[0] && a[1] == c[1] {
		t.Errorf("seeds 7 and 8: the same latencies %v", a)
	}
}
