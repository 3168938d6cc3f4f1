package otelagain

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/again-go/again/hedge"
	"github.com/again-go/again/retryhttp"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestHedgedAttemptSpans runs two attempts of one request at once, as
// hedging does: the slow one is canceled once the other answered. Their
// spans are siblings under the caller's, and the loser's ends at once with
// a status saying it was canceled.
func TestHedgedAttemptSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	tel := New(WithTracerProvider(tp))
	arrived := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(arrived)
			<-r.Context().Done()
			return
		}
		io.WriteString(w, "fast")
	}))
	defer srv.Close()

	caller, parent := tp.Tracer("test").Start(context.Background(), "caller")
	st := &callState{ctx: caller}
	ctx := context.WithValue(caller, stateKey{}, st)
	a := &attemptTransport{t: tel, next: http.DefaultTransport}
	loserCtx, cancel := context.WithCancel(ctx)
	lost := make(chan error)
	go func() {
		req, _ := http.NewRequestWithContext(loserCtx, http.MethodGet, srv.URL+"/slow", nil)
		_, err := a.RoundTrip(req)
		lost <- err
	}()
	<-arrived
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/fast", nil)
	resp, err := a.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	cancel() // the hedge won: the first attempt is canceled
	if err := <-lost; err == nil {
		t.Fatal("the canceled attempt succeeded")
	}
	st.finish(reasonSuccess, "")
	parent.End()

	ended := rec.Ended()
	if len(rec.Started()) != len(ended) || len(ended) != 3 {
		t.Fatalf("%d spans started, %d ended; want 3, all ended", len(rec.Started()), len(ended))
	}
	for _, sp := range ended[:2] {
		if sp.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("span %v is not a child of the caller's span", sp.SpanContext().SpanID())
		}
		slow := false
		for _, kv := range sp.Attributes() {
			slow = slow || kv.Key == "url.full" && kv.Value.AsString() == srv.URL+"/slow"
		}
		switch st := sp.Status(); {
		case slow && (st.Code != codes.Error || st.Description != "canceled: another attempt answered first"):
			t.Errorf("the loser's status is %v, want an error saying it was canceled", st)
		case !slow && st.Code == codes.Error:
			t.Errorf("the winner's status is %v", st)
		}
	}
}

// TestTransportHedgeSpans sends a request through Transport with hedging,
// with and without a HedgeBase: the server holds the first copy until the
// hedge arrives, so that every request has two copies, whatever the
// timing. Each copy the server gets carries a traceparent naming a span of
// its own, and both spans end, siblings under the caller's: the hedge is
// traced whichever RoundTripper sends it.
func TestTransportHedgeSpans(t *testing.T) {
	for _, tc := range []struct {
		name      string
		hedgeBase bool
	}{
		{"HedgeBase unset", false},
		{"HedgeBase set", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			defer tp.Shutdown(context.Background())
			tel := New(WithTracerProvider(tp), WithPropagators(propagation.TraceContext{}))

			var (
				mu          sync.Mutex
				traceparent []string
			)
			second := make(chan struct{}) // closed when the second copy arrives
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				traceparent = append(traceparent, r.Header.Get("Traceparent"))
				n := len(traceparent)
				mu.Unlock()
				if n == 1 {
					// The first copy waits for the other to arrive, and
					// then for its cancellation: it never answers.
					select {
					case <-second:
					case <-r.Context().Done():
					}
					<-r.Context().Done()
					return
				}
				if n == 2 {
					close(second)
				}
				io.WriteString(w, "hedge")
			}))
			defer srv.Close()

			base := &http.Transport{}
			defer base.CloseIdleConnections()
			rt := &retryhttp.Transport{Base: base, Hedge: &hedge.Hedger{After: time.Millisecond}}
			if tc.hedgeBase {
				hb := &http.Transport{}
				defer hb.CloseIdleConnections()
				rt.HedgeBase = hb
			}
			client := &http.Client{Transport: tel.Transport("x", rt)}

			caller, parent := tp.Tracer("test").Start(context.Background(), "caller")
			req, _ := http.NewRequestWithContext(caller, http.MethodGet, srv.URL, nil)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			parent.End()

			mu.Lock()
			defer mu.Unlock()
			if len(traceparent) != 2 {
				t.Fatalf("the server got %d requests, want 2", len(traceparent))
			}
			spans := map[string]bool{} // the span IDs of the attempts that ended
			for _, sp := range rec.Ended() {
				if sp.Parent().SpanID() == parent.SpanContext().SpanID() {
					spans[sp.SpanContext().SpanID().String()] = true
				}
			}
			if len(spans) != 2 {
				t.Errorf("%d attempt spans ended under the caller's, want 2", len(spans))
			}
			if n := len(rec.Started()); n != len(rec.Ended()) {
				t.Errorf("%d spans started, %d ended", n, len(rec.Ended()))
			}
			for i, tp := range traceparent {
				// version-traceid-spanid-flags
				if f := strings.Split(tp, "-"); len(f) != 4 || !spans[f[2]] {
					t.Errorf("request %d has traceparent %q, want one naming an attempt's span", i+1, tp)
				}
			}
		})
	}
}
