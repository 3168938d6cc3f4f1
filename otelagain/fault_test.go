package otelagain_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/fault"
	"github.com/again-go/again/otelagain"
	"github.com/again-go/again/retryhttp"
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

	want := "{again.fault.kind=status,again.fault.name=api}=2"
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
