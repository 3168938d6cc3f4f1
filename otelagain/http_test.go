package otelagain_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
	"github.com/again-go/again/hedge"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// server answers each request with the next status of statuses (the
// last one forever), and keeps the traceparent and body of each.
type server struct {
	*httptest.Server
	mu          sync.Mutex
	statuses    []int
	traceparent []string
	bodies      []string
}

func newServer(t *testing.T, statuses ...int) *server {
	s := &server{statuses: statuses}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.traceparent = append(s.traceparent, r.Header.Get("Traceparent"))
		s.bodies = append(s.bodies, string(body))
		status := s.statuses[min(len(s.traceparent), len(s.statuses))-1]
		s.mu.Unlock()
		w.WriteHeader(status)
		io.WriteString(w, "body")
	}))
	t.Cleanup(s.Close)
	return s
}

var fast = backoff.Policy{Initial: -1, Retries: 2}

// get sends one GET through rt under a parent span and reads and closes
// the response, returning the parent's span context.
func get(t *testing.T, s *sdk, rt http.RoundTripper, url string) (trace.SpanContext, *http.Response, error) {
	t.Helper()
	ctx, parent := s.tp.Tracer("test").Start(context.Background(), "caller")
	defer parent.End()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return parent.SpanContext(), resp, err
}

// attempts returns the ended CLIENT spans, in the order they started,
// and fails if any span was left open.
func attempts(t *testing.T, s *sdk) []sdktrace.ReadOnlySpan {
	t.Helper()
	if started, ended := len(s.spans.Started()), len(s.spans.Ended()); started != ended {
		t.Fatalf("%d spans started, %d ended: a span was left open", started, ended)
	}
	var out []sdktrace.ReadOnlySpan
	for _, sp := range s.spans.Started() {
		if sp.SpanKind() == trace.SpanKindClient {
			out = append(out, sp)
		}
	}
	return out
}

func attr(sp sdktrace.ReadOnlySpan, key string) (attribute.Value, bool) {
	for _, kv := range sp.Attributes() {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// TestTransportSpans checks the conventions' shape: one CLIENT span per
// attempt, children of the caller's span, with the resend count on the
// retries, the wait as an event of the retried attempt, and the trace
// context sent to the server.
func TestTransportSpans(t *testing.T) {
	s := newSDK(t)
	srv := newServer(t, 503, 503, 200)
	rt := s.tel.Transport("api", &retryhttp.Transport{Policy: fast})
	parent, resp, err := get(t, s, rt, srv.URL+"/items?token=secret")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET: %v, %v", resp, err)
	}
	spans := attempts(t, s)
	if len(spans) != 3 {
		t.Fatalf("%d CLIENT spans, want 3 (one per attempt)", len(spans))
	}
	for i, sp := range spans {
		if sp.Parent().SpanID() != parent.SpanID() || sp.Name() != "GET" {
			t.Errorf("attempt %d: span %q with parent %v, want GET under the caller's span %v", i+1, sp.Name(), sp.Parent().SpanID(), parent.SpanID())
		}
		count, ok := attr(sp, "http.request.resend_count")
		if (i == 0) == ok || (ok && count.AsInt64() != int64(i)) {
			t.Errorf("attempt %d: http.request.resend_count = %v (set: %v), want %d, unset on the first", i+1, count.AsInt64(), ok, i)
		}
		if u, _ := attr(sp, "url.full"); u.AsString() != srv.URL+"/items?token=REDACTED" {
			t.Errorf("attempt %d: url.full = %q, want the query's value redacted", i+1, u.AsString())
		}
		status, _ := attr(sp, "http.response.status_code")
		waits := 0
		for _, ev := range sp.Events() {
			if ev.Name == "again.retry.wait" {
				waits++
			}
		}
		if want := []int64{503, 503, 200}[i]; status.AsInt64() != want || waits != []int{1, 1, 0}[i] {
			t.Errorf("attempt %d: status %d with %d wait events, want %d and %d", i+1, status.AsInt64(), waits, want, []int{1, 1, 0}[i])
		}
		if !strings.Contains(srv.traceparent[i], sp.SpanContext().SpanID().String()) {
			t.Errorf("attempt %d: the server got traceparent %q, want the attempt's span %v", i+1, srv.traceparent[i], sp.SpanContext().SpanID())
		}
	}
	if spans[2].Status().Code == codes.Error {
		t.Errorf("the successful attempt's status is %v", spans[2].Status())
	}
	if got := show(s.points(t, "again.retry.attempts")); got != "{again.retry.name=api,again.retry.reason=success}=1/3" {
		t.Errorf("again.retry.attempts = %s, want one call of 3 attempts", got)
	}
}

// TestTransportGiveUp checks the final status of a call that gave up:
// on the last attempt's span, an error saying why, for a response
// returned as it is and for a network failure.
func TestTransportGiveUp(t *testing.T) {
	t.Run("status", func(t *testing.T) {
		s := newSDK(t)
		srv := newServer(t, 503)
		rt := s.tel.Transport("api", &retryhttp.Transport{Policy: fast})
		_, resp, err := get(t, s, rt, srv.URL)
		if err != nil || resp.StatusCode != 503 {
			t.Fatalf("GET: %v, %v; want the last 503", resp, err)
		}
		spans := attempts(t, s)
		last := spans[len(spans)-1]
		reason, _ := attr(last, "again.retry.reason")
		if len(spans) != 3 || last.Status().Code != codes.Error || reason.AsString() != "exhausted" ||
			!strings.Contains(last.Status().Description, "exhausted") {
			t.Errorf("%d spans, the last with status %v and again.retry.reason %q; want 3, an error saying exhausted", len(spans), last.Status(), reason.AsString())
		}
		if got := show(s.points(t, "again.retry.calls")); got != "{again.retry.name=api,again.retry.reason=exhausted}=1" {
			t.Errorf("again.retry.calls = %s", got)
		}
	})
	t.Run("network", func(t *testing.T) {
		s := newSDK(t)
		srv := newServer(t, 200)
		srv.Close() // connections are refused from now on
		rt := s.tel.Transport("api", &retryhttp.Transport{Policy: fast})
		_, _, err := get(t, s, rt, srv.URL)
		if err == nil {
			t.Fatal("GET of a closed server succeeded")
		}
		spans := attempts(t, s)
		last := spans[len(spans)-1]
		et, _ := attr(last, "error.type")
		if len(spans) != 3 || last.Status().Code != codes.Error || et.AsString() == "" ||
			!strings.Contains(last.Status().Description, "retries exhausted") {
			t.Errorf("%d spans, the last with status %v, error.type %q; want 3, an error saying retries exhausted", len(spans), last.Status(), et.AsString())
		}
		if waits := len(spans[0].Events()); waits != 1 {
			t.Errorf("the first failed attempt has %d events, want its wait", waits)
		}
	})
}

// TestTransportOneLine checks what the quick start's one line promises:
// the Transport's own Budget and Breakers report their metrics too, under
// the Transport's name, with the host as the breaker's key.
func TestTransportOneLine(t *testing.T) {
	s := newSDK(t)
	srv := newServer(t, 503)
	rt := s.tel.Transport("api", &retryhttp.Transport{Policy: fast, Budget: &retry.TokenBucket{},
		Breakers: &breaker.Group{Config: breaker.Config{ConsecutiveFailures: 6, MinCalls: 100}}})
	for range 2 {
		if _, resp, err := get(t, s, rt, srv.URL); err == nil {
			resp.Body.Close()
		}
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	// 10 tokens: the first call's 3 failures leave 7 (it ends exhausted),
	// the second's leave 6, then 5, no more than half: refused.
	if got := show(s.points(t, "again.budget.rejections")); got != "{again.budget.name=api}=1" {
		t.Errorf("again.budget.rejections = %s, want 1", got)
	}
	if got := s.points(t, "again.budget.tokens")["again.budget.name=api"]; got != "5" {
		t.Errorf("again.budget.tokens = %q, want 5", got)
	}
	if got := s.points(t, "again.breaker.state")["again.breaker.key="+host+",again.breaker.name=api,again.breaker.state=closed"]; got != "1" {
		t.Errorf("again.breaker.state{%s, closed} = %q, want 1 (all: %s)", host, got, show(s.points(t, "again.breaker.state")))
	}
	if got := show(s.points(t, "again.retry.calls")); got != "{again.retry.name=api,again.retry.reason=budget}=1 {again.retry.name=api,again.retry.reason=exhausted}=1" {
		t.Errorf("again.retry.calls = %s", got)
	}
}

// TestTransportCloseIdleConnections checks that CloseIdleConnections
// reaches the pools under the instrumented Transport once each: Base's,
// and HedgeBase's when it is another, once only when it is Base.
func TestTransportCloseIdleConnections(t *testing.T) {
	one, other := &idleCounter{}, &idleCounter{}
	tests := []struct {
		name            string
		hedgeBase       *idleCounter
		wantOne, wantOt int
	}{
		{"no HedgeBase", nil, 1, 0},
		{"its own HedgeBase", other, 1, 1},
		{"HedgeBase is Base", one, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			one.closes, other.closes = 0, 0
			rt := &retryhttp.Transport{Base: one}
			if tt.hedgeBase != nil {
				rt.HedgeBase = tt.hedgeBase
			}
			s := newSDK(t)
			s.tel.Transport("x", rt).(interface{ CloseIdleConnections() }).CloseIdleConnections()
			if one.closes != tt.wantOne || other.closes != tt.wantOt {
				t.Errorf("Base closed %d times, the other HedgeBase %d; want %d, %d", one.closes, other.closes, tt.wantOne, tt.wantOt)
			}
		})
	}
}

// idleCounter is a RoundTripper that counts CloseIdleConnections calls.
// It sends nothing.
type idleCounter struct{ closes int }

func (c *idleCounter) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("idleCounter sends nothing")
}

func (c *idleCounter) CloseIdleConnections() { c.closes++ }

// TestTransportOneLineHedge checks that the one line counts the hedges of
// the Transport's own Hedger, without a second call, and once only when
// the Hedger was also given to Hedger; the Hedger's own OnHedge still runs.
func TestTransportOneLineHedge(t *testing.T) {
	for _, alsoHedger := range []bool{false, true} {
		t.Run(fmt.Sprintf("also Hedger: %v", alsoHedger), func(t *testing.T) {
			s := newSDK(t)
			var mu sync.Mutex
			own := 0
			h := &hedge.Hedger{After: time.Millisecond, OnHedge: func(hedge.Event) { mu.Lock(); own++; mu.Unlock() }}
			if alsoHedger {
				s.tel.Hedger("api", h)
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hedge") }))
			defer srv.Close()
			// The first copy goes through Base, which hangs until the
			// hedge, through HedgeBase, has won: whichever reached a
			// server first, the hedge wins.
			hang := roundTripper(func(r *http.Request) (*http.Response, error) {
				<-r.Context().Done()
				return nil, r.Context().Err()
			})
			rt := s.tel.Transport("api", &retryhttp.Transport{Policy: fast, Hedge: h, Base: hang, HedgeBase: http.DefaultTransport})
			if _, resp, err := get(t, s, rt, srv.URL); err != nil || resp.StatusCode != 200 {
				t.Fatalf("GET: %v", err)
			}
			sent, won := show(s.points(t, "again.hedge.sent")), show(s.points(t, "again.hedge.won"))
			if sent != "{again.hedge.name=api}=1" || won != "{again.hedge.name=api}=1" {
				t.Errorf("again.hedge.sent = %q, again.hedge.won = %q; want 1 each under the Transport's name", sent, won)
			}
			mu.Lock()
			defer mu.Unlock()
			if own != 2 {
				t.Errorf("the Hedger's own OnHedge saw %d events, want 2 (sent, won)", own)
			}
		})
	}
}

// TestTransportRedirectResend checks that a redirect is a resend, as the
// HTTP conventions count it: with http.Client over the Transport,
// / → 302 → /hello gives the /hello span http.request.resend_count 1, and
// a redirect after a retry continues the count of its attempts.
func TestTransportRedirectResend(t *testing.T) {
	tests := []struct {
		name     string
		statuses map[string][]int // per path: the status of each request to it
		want     []string         // each attempt's path and resend count ("-" for none)
	}{
		{"one redirect", map[string][]int{"/": {302}, "/hello": {200}}, []string{"/ -", "/hello 1"}},
		{"two redirects", map[string][]int{"/": {302}, "/hello": {302}, "/bye": {200}}, []string{"/ -", "/hello 1", "/bye 2"}},
		{"a retry, then a redirect", map[string][]int{"/": {503, 302}, "/hello": {200}}, []string{"/ -", "/ 1", "/hello 2"}},
		{"a redirect, then a retry", map[string][]int{"/": {302}, "/hello": {503, 200}}, []string{"/ -", "/hello 1", "/hello 2"}},
	}
	next := map[string]string{"/": "/hello", "/hello": "/bye"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSDK(t)
			var mu sync.Mutex
			seen := map[string]int{}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				st := tt.statuses[r.URL.Path]
				status := st[min(seen[r.URL.Path], len(st)-1)]
				seen[r.URL.Path]++
				mu.Unlock()
				if status == 302 {
					w.Header().Set("Location", next[r.URL.Path])
				}
				w.WriteHeader(status)
			}))
			defer srv.Close()
			rt := s.tel.Transport("api", &retryhttp.Transport{Policy: fast})
			if _, resp, err := get(t, s, rt, srv.URL+"/"); err != nil || resp.StatusCode != 200 {
				t.Fatalf("GET: %v", err)
			}
			var got []string
			for _, sp := range attempts(t, s) {
				u, _ := attr(sp, "url.full")
				count := "-"
				if v, ok := attr(sp, "http.request.resend_count"); ok {
					count = v.String()
				}
				got = append(got, strings.TrimPrefix(u.AsString(), srv.URL)+" "+count)
			}
			if strings.Join(got, ", ") != strings.Join(tt.want, ", ") {
				t.Errorf("attempts (path, resend count): %v, want %v", got, tt.want)
			}
		})
	}
}

// roundTripper is a RoundTripper of a function.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestTransportWaitClass checks that the wait event of a retried attempt
// names the class whose schedule set the wait, and has no class
// attribute when no class matched: a 503 is an overload, a 502 no class's.
func TestTransportWaitClass(t *testing.T) {
	s := newSDK(t)
	srv := newServer(t, 503, 502, 200)
	overload := retry.Class{Name: "overload", Match: retry.IsOverload, Policy: fast}
	rt := s.tel.Transport("api", &retryhttp.Transport{Policy: fast, Classes: []retry.Class{overload}})
	if _, resp, err := get(t, s, rt, srv.URL); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET: %v, %v", resp, err)
	}
	spans := attempts(t, s)
	if len(spans) != 3 {
		t.Fatalf("%d CLIENT spans, want 3 (one per attempt)", len(spans))
	}
	for i, want := range []string{"overload", ""} {
		var class []string
		for _, ev := range spans[i].Events() {
			if ev.Name != "again.retry.wait" {
				continue
			}
			set := attribute.NewSet(ev.Attributes...)
			v, ok := set.Value("again.retry.class")
			if ok && v.AsString() == "" {
				t.Errorf("attempt %d: again.retry.class set to \"\", want it unset when no class matched", i+1)
			}
			class = append(class, v.AsString())
		}
		if len(class) != 1 || class[0] != want {
			t.Errorf("attempt %d: again.retry.class of its wait events %q, want one %q (\"\": unset)", i+1, class, want)
		}
	}
}
