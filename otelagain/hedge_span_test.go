package otelagain

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/codes"
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
