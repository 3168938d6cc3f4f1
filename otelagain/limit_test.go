package otelagain_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/again-go/again/limiter"
	"github.com/again-go/again/retryhttp"
)

// TestLimitsMetrics checks a Transport's per-host limits: the limit, the
// calls in flight while a body is open, and the calls refused, by key.
func TestLimitsMetrics(t *testing.T) {
	s := newSDK(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	g := &limiter.Group{Config: limiter.Config{Limit: 1}}
	tr := &retryhttp.Transport{Limits: g}
	defer tr.CloseIdleConnections()
	rt := s.tel.Transport("api", tr)
	req, _ := http.NewRequest("GET", srv.URL, nil)
	held, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.RoundTrip(req); err == nil {
		t.Fatal("second request over a limit of 1 = nil error, want a refusal")
	}
	key := "{again.limit.key=" + req.URL.Host + ",again.limit.name=api}="
	for _, c := range []struct{ metric, want string }{
		{"again.limit.limit", key + "1"},
		{"again.limit.in_flight", key + "1"},
		{"again.limit.waiting", key + "0"},
		{"again.limit.refused", key + "1"},
	} {
		if got := show(s.points(t, c.metric)); got != c.want {
			t.Errorf("%s = %s, want %s", c.metric, got, c.want)
		}
	}
	held.Body.Close()
	if got := show(s.points(t, "again.limit.in_flight")); got != key+"0" {
		t.Errorf("again.limit.in_flight after the body was closed = %s, want %s0", got, key)
	}
	l, _ := limiter.New(limiter.Config{Limit: 7})
	s.tel.Limiter("db", l)
	s.tel.Limiter("nil", nil)
	s.tel.Limits("nil", nil)
	if got := show(s.points(t, "again.limit.limit")); got != key+"1 {again.limit.name=db}=7" {
		t.Errorf("again.limit.limit with a Limiter beside the Group = %s", got)
	}
}
