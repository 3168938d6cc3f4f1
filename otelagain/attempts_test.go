package otelagain_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
)

// TestAttemptsEveryCall: again.retry.attempts records every call, the
// first-try successes too, so that its count is the calls and its sum the
// attempts: 5 first-try successes and one call of 3 attempts are 6 calls
// and 8 attempts, read with the SDK's manual reader. They were recorded as
// 1 call and 3 attempts.
func TestAttemptsEveryCall(t *testing.T) {
	s := newSDK(t)
	opt := s.tel.Retry("db")
	ctx := context.Background()
	for range 5 {
		if _, err := retry.Do(ctx, backoff.Default(), succeed, opt); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	_, err := retry.Do(ctx, backoff.Policy{Initial: -1, Retries: 2}, func(context.Context) (int, error) {
		if n++; n < 3 {
			return 0, errFlaky
		}
		return n, nil
	}, opt)
	if err != nil {
		t.Fatal(err)
	}
	const success = "{again.retry.name=db,again.retry.reason=success}"
	for _, c := range []struct{ metric, want, what string }{
		{"again.retry.attempts", success + "=6/8", "6 calls of 8 attempts"},
		{"again.retry.calls", success + "=6", "6 calls"},
		{"again.retry.retries", success + "=1/2", "one call that retried twice"},
	} {
		if got := show(s.points(t, c.metric)); got != c.want {
			t.Errorf("%s = %s, want %s (%s)", c.metric, got, c.want, c.what)
		}
	}
}

// TestTransportAttemptsFirstTry: a request that Transport sends once is a
// call of one attempt in again.retry.attempts.
func TestTransportAttemptsFirstTry(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	s := newSDK(t)
	rt := s.tel.Transport("api", &retryhttp.Transport{})
	defer rt.(interface{ CloseIdleConnections() }).CloseIdleConnections()
	for range 2 {
		req, _ := http.NewRequest("GET", srv.URL, nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if got := show(s.points(t, "again.retry.attempts")); got != "{again.retry.name=api,again.retry.reason=success}=2/2" {
		t.Errorf("again.retry.attempts = %s, want 2 calls of one attempt", got)
	}
}
