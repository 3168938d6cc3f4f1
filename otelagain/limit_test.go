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

// TestLimitsMetricsGRPCKeys checks Limits on a Group driven as
// retrygrpc.Interceptor drives its Limits (otelagain does not import
// grpc: Limits takes the Interceptor's Group): given before the first
// call, it reports each key made later (a method, with the Interceptor's
// LimitKey), the adaptive limit where it moved, the calls in flight and
// refused, and the keys beyond MaxKeys under limiter.OverflowKey.
func TestLimitsMetricsGRPCKeys(t *testing.T) {
	s := newSDK(t)
	g := &limiter.Group{Config: limiter.Config{Algorithm: limiter.AIMD{Min: 1, Initial: 2, Timeout: -1}}, MaxKeys: 2}
	s.tel.Limits("orders", g) // as the Interceptor is made, before any call
	if got := show(s.points(t, "again.limit.limit")); got != "" {
		t.Errorf("again.limit.limit before any call = %s, want no point", got)
	}
	get := func(method string) *limiter.Limiter {
		l, err := g.Get(method)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	ctx := t.Context()
	held, _ := get("/orders.Orders/Get").Acquire(ctx)
	defer held.Release()
	lost, _ := get("/orders.Orders/List").Acquire(ctx)
	lost.Done(limiter.Dropped) // UNAVAILABLE: 2 → ⌊1.8⌋ = 1
	w := get("/orders.Orders/Watch")
	for range 2 {
		p, _ := w.Acquire(ctx)
		defer p.Release()
	}
	for range 2 {
		if _, err := w.Acquire(ctx); err == nil {
			t.Fatal("a third call in flight on the overflow key under a limit of 2 = nil error, want a refusal")
		}
	}
	name := ",again.limit.name=orders}="
	get1, list, over := "{again.limit.key=/orders.Orders/Get"+name, "{again.limit.key=/orders.Orders/List"+name,
		"{again.limit.key="+limiter.OverflowKey+name
	for _, c := range []struct{ metric, want string }{
		{"again.limit.limit", over + "2 " + get1 + "2 " + list + "1"},
		{"again.limit.in_flight", over + "2 " + get1 + "1 " + list + "0"},
		{"again.limit.refused", over + "2 " + get1 + "0 " + list + "0"},
	} {
		if got := show(s.points(t, c.metric)); got != c.want {
			t.Errorf("%s = %s, want %s", c.metric, got, c.want)
		}
	}
}
