package otelagain_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/again-go/again/retryhttp"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/trace"
)

// TestOtelhttpAround checks the composition the package doc gives:
// otelhttp around Transport, as an INTERNAL span for the logical request,
// with the attempts' CLIENT spans as its children, every span ended; and a
// POST body, whose GetBody otelhttp replaces, sent whole on every attempt.
func TestOtelhttpAround(t *testing.T) {
	s := newSDK(t)
	srv := newServer(t, 503, 200)
	rt := otelhttp.NewTransport(s.tel.Transport("api", &retryhttp.Transport{Policy: fast}),
		otelhttp.WithTracerProvider(s.tp), otelhttp.WithSpanOptions(trace.WithSpanKind(trace.SpanKindInternal)))
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPut, srv.URL, strings.NewReader("the whole body"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("PUT: %v, %v", resp, err)
	}
	resp.Body.Close()
	spans := attempts(t, s)
	var logical trace.SpanContext
	for _, sp := range s.spans.Ended() {
		if sp.SpanKind() == trace.SpanKindInternal {
			logical = sp.SpanContext()
		}
	}
	if len(spans) != 2 || !logical.IsValid() {
		t.Fatalf("%d CLIENT spans and an INTERNAL one: %v; want 2 and one", len(spans), logical.IsValid())
	}
	for i, sp := range spans {
		if sp.Parent().SpanID() != logical.SpanID() {
			t.Errorf("attempt %d's parent is %v, want the logical span %v", i+1, sp.Parent().SpanID(), logical.SpanID())
		}
	}
	if got := strings.Join(srv.bodies, "|"); got != "the whole body|the whole body" {
		t.Errorf("the server got bodies %q, want the whole body twice", got)
	}
}

// TestOtelhttpAsBase checks what retryhttp does with otelhttp as its Base,
// without this package: one CLIENT span per attempt, and every one of
// them ended, the retried responses' included, because retryhttp closes
// each response it discards (an unclosed body leaves otelhttp's span
// open).
func TestOtelhttpAsBase(t *testing.T) {
	s := newSDK(t)
	srv := newServer(t, 503, 502, 200)
	rt := &retryhttp.Transport{Policy: fast, Base: otelhttp.NewTransport(nil, otelhttp.WithTracerProvider(s.tp))}
	parent, resp, err := get(t, s, rt, srv.URL)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET: %v, %v", resp, err)
	}
	spans := attempts(t, s) // fails if a span is open
	if len(spans) != 3 {
		t.Fatalf("%d CLIENT spans, want 3", len(spans))
	}
	for i, sp := range spans {
		if sp.Parent().SpanID() != parent.SpanID() {
			t.Errorf("attempt %d is not a child of the caller's span", i+1)
		}
	}
}
