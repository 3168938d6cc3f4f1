package otelagain_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
	"github.com/again-go/again/throttle"
)

// stopped is a clock that never moves.
type stopped struct{}

func (stopped) Now() time.Time { return time.Unix(0, 0) }

type zeroDraw struct{}

func (zeroDraw) Float64() float64 { return 0 }

// TestThrottleMetrics checks a throttle's rejections and p, and a Rate's
// learned send rate: what a dashboard of client-side throttling reads.
func TestThrottleMetrics(t *testing.T) {
	s := newSDK(t)
	th, _ := throttle.New(throttle.Config{Rand: zeroDraw{}})
	a := s.tel.Admitter("api", th)
	overloaded := func(error) bool { return true }
	// One call, 3 attempts: the first sent and refused, the next two
	// rejected locally.
	_ = retry.Run(context.Background(), backoff.Policy{Initial: -1, Retries: 2},
		func(context.Context) error { return errFlaky }, retry.WithAdmitter(a, overloaded))
	if got := show(s.points(t, "again.throttle.rejections")); got != "{again.throttle.name=api}=2" {
		t.Errorf("again.throttle.rejections = %s, want 2", got)
	}
	// 1 request, none accepted (the rejections, with no accept in the
	// window, are not counted: throttle's cold start): p = 1/2.
	if got := show(s.points(t, "again.throttle.p")); got != "{again.throttle.name=api}=0.5" {
		t.Errorf("again.throttle.p = %s, want 0.5", got)
	}

	r, _ := throttle.NewRate(throttle.RateConfig{FailFast: true, Clock: stopped{}})
	ra := s.tel.Admitter("s3", r)
	if got := show(s.points(t, "again.throttle.rate")); got != "" {
		t.Errorf("again.throttle.rate before any throttle = %s, want nothing", got)
	}
	ra.Done(true)
	if got := show(s.points(t, "again.throttle.rate")); got != "{again.throttle.name=s3}=0.5" {
		t.Errorf("again.throttle.rate = %s, want the minimum fill rate 0.5", got)
	}
	if s.tel.Admitter("nil", nil) != nil {
		t.Error("Admitter(nil) is not nil")
	}
}

// TestThrottlesMetrics checks a Transport's per-host throttles, by key,
// instrumented by Transport.
func TestThrottlesMetrics(t *testing.T) {
	s := newSDK(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	g := &throttle.Group{New: func(string) (retry.Admitter, error) { return throttle.New(throttle.Config{Rand: zeroDraw{}}) }}
	tr := &retryhttp.Transport{Throttles: g, Policy: backoff.Policy{Initial: -1, Retries: 1}}
	defer tr.CloseIdleConnections()
	rt := s.tel.Transport("api", tr)
	s.tel.Throttles("again", g) // already instrumented: nothing changes
	req, _ := http.NewRequest("GET", srv.URL, nil)
	if resp, err := rt.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
	host := req.URL.Host
	if got, want := show(s.points(t, "again.throttle.rejections")), "{again.throttle.key="+host+",again.throttle.name=api}=1"; got != want {
		t.Errorf("again.throttle.rejections = %s, want %s", got, want)
	}
	if got, want := show(s.points(t, "again.throttle.p")), "{again.throttle.key="+host+",again.throttle.name=api}=0.5"; got != want { // 1 request sent, the rejection not counted
		t.Errorf("again.throttle.p = %s, want %s", got, want)
	}
}
