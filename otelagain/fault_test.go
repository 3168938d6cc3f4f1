package otelagain_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/fault"
	"github.com/again-go/again/otelagain"
	"github.com/again-go/again/retryhttp"
	"go.opentelemetry.io/otel/attribute"
)

// Each injected fault counts by kind, and is an event on the span of the
// attempt it failed, next to that attempt's retry event.
func TestFaults(t *testing.T) {
	s := newSDK(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	in := &fault.Injector{Faults: []fault.Fault{{Status: 503, Times: 2}}}
	s.tel.Faults("api", in)
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	c := &http.Client{Transport: s.tel.Transport("api", &retryhttp.Transport{
		Base:   &fault.Transport{Injector: in, Base: base},
		Policy: backoff.Policy{Initial: 1, Max: 1},
	})}
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	host, _, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	want := "{again.fault.kind=status,again.fault.name=api,server.address=" + host + "}=2"
	if got := show(s.points(t, "again.fault.injected")); got != want {
		t.Errorf("again.fault.injected = %s, want %s", got, want)
	}
	both := 0 // spans with a fault event and a retry event
	for _, sp := range s.spans.Ended() {
		var faulted, retried bool
		for _, e := range sp.Events() {
			faulted = faulted || e.Name == otelagain.FaultEvent
			retried = retried || e.Name == "again.retry.wait"
		}
		if faulted && retried {
			both++
		}
	}
	if both != 2 {
		t.Errorf("%d attempt spans with a fault event and its retry, want 2", both)
	}
}

// The target of a fault, server.address (and server.port on the span
// event), is the request's host split at its port, never its path or
// query; the counter keeps a bounded number of addresses.
func TestFaultsTarget(t *testing.T) {
	for _, tc := range []struct {
		host, address string
		port          int64 // 0: no server.port
	}{
		{"api.example:8443", "api.example", 8443},
		{"api.example", "api.example", 0},
		{"[::1]:9090", "::1", 9090},
		{"[::1]", "::1", 0},
		{"10.0.0.1:80", "10.0.0.1", 80},
		{"", "", 0},
	} {
		t.Run(tc.host, func(t *testing.T) {
			s := newSDK(t)
			in := &fault.Injector{Faults: []fault.Fault{{Kind: fault.Reset}}}
			s.tel.Faults("api", in)
			ctx, span := s.tp.Tracer("test").Start(context.Background(), "call")
			j := in.Pick(&fault.Target{Method: "GET", Path: "/items?token=secret", Host: tc.host, Context: ctx})
			j.Done()
			span.End()

			want := "{again.fault.kind=reset,again.fault.name=api}=1"
			if tc.address != "" {
				want = "{again.fault.kind=reset,again.fault.name=api,server.address=" + tc.address + "}=1"
			}
			if got := show(s.points(t, "again.fault.injected")); got != want {
				t.Errorf("again.fault.injected = %s, want %s", got, want)
			}
			ended := s.spans.Ended()
			if len(ended) != 1 || len(ended[0].Events()) != 1 {
				t.Fatalf("%d spans, want 1 with 1 event", len(ended))
			}
			ev := attribute.NewSet(ended[0].Events()[0].Attributes...)
			addr, hasAddr := ev.Value("server.address")
			port, hasPort := ev.Value("server.port")
			if hasAddr != (tc.address != "") || addr.AsString() != tc.address {
				t.Errorf("event server.address = %q (%v), want %q", addr.AsString(), hasAddr, tc.address)
			}
			if hasPort != (tc.port != 0) || port.AsInt64() != tc.port {
				t.Errorf("event server.port = %d (%v), want %d", port.AsInt64(), hasPort, tc.port)
			}
			for _, kv := range ev.ToSlice() {
				if strings.Contains(kv.Value.String(), "secret") || strings.Contains(kv.Value.String(), "/items") {
					t.Errorf("event attribute %s = %q: the path or query leaked", kv.Key, kv.Value.String())
				}
			}
		})
	}
}

// A client choosing the Host header cannot make a series per request: past
// MaxFaultTargets addresses, faults count under _OTHER.
func TestFaultsTargetBound(t *testing.T) {
	s := newSDK(t)
	in := &fault.Injector{Faults: []fault.Fault{{}}}
	s.tel.Faults("api", in)
	extra := 5
	for i := range otelagain.MaxFaultTargets + extra {
		j := in.Pick(&fault.Target{Method: "GET", Host: fmt.Sprintf("h%d.example:80", i)})
		j.Done()
	}
	j := in.Pick(&fault.Target{Method: "GET", Host: "h0.example"}) // a known address still has its own series
	j.Done()
	got := s.points(t, "again.fault.injected")
	if n := len(got); n != otelagain.MaxFaultTargets+1 {
		t.Errorf("%d series, want %d (the bound and _OTHER)", n, otelagain.MaxFaultTargets+1)
	}
	if v := got["again.fault.kind=status,again.fault.name=api,server.address=_OTHER"]; v != fmt.Sprint(extra) {
		t.Errorf("_OTHER counted %s, want %d", v, extra)
	}
	if v := got["again.fault.kind=status,again.fault.name=api,server.address=h0.example"]; v != "2" {
		t.Errorf("h0.example counted %s, want 2", v)
	}
}
