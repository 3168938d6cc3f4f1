package retryhttp_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
)

var (
	errStop = errors.New("stop: account suspended")
	errWhy  = errors.New("unexpected HTTP status")
)

// CheckRetry replaces RetryStatuses and the network rules, but never the
// idempotency rule.
func TestCheckRetry(t *testing.T) {
	retry500 := func(_ context.Context, resp *http.Response, err error) (bool, error) {
		return resp != nil && resp.StatusCode == 500, nil
	}
	retryAll := func(_ context.Context, resp *http.Response, _ error) (bool, error) { // all but 200
		return resp == nil || resp.StatusCode != 200, nil
	}
	never := func(context.Context, *http.Response, error) (bool, error) { return false, nil }
	stop := func(_ context.Context, resp *http.Response, _ error) (bool, error) {
		if resp != nil && resp.Header.Get("X-Suspended") != "" {
			return false, errStop
		}
		return true, nil
	}
	// propagate answers as go-retryablehttp's ErrorPropagatedRetryPolicy
	// does: true, with an error that says why.
	propagate := func(_ context.Context, resp *http.Response, _ error) (bool, error) {
		if resp != nil && resp.StatusCode < 500 {
			return false, nil
		}
		return true, errWhy
	}
	suspended := step{status: 403, header: http.Header{"X-Suspended": {"1"}}}
	reset := step{reset: true}
	tests := []struct {
		name         string
		check        func(context.Context, *http.Response, error) (bool, error)
		statuses     []int
		method       string
		steps        []step
		wantAttempts int
		wantStatus   int   // 0: an error
		wantErr      error // with wantStatus 0
	}{
		{"decides a status alone", retry500, nil, "GET", []step{status(500), status(200)}, 2, 200, nil},
		{"the status list is ignored", retry500, []int{503}, "GET", []step{status(503), status(200)}, 1, 503, nil},
		{"the default statuses are ignored", never, nil, "GET", []step{status(503), status(200)}, 1, 503, nil},
		{"network error not retried", never, nil, "GET", []step{{reset: true}, status(200)}, 1, 0, retry.ErrPermanent},
		{"network error retried", retryAll, nil, "GET", []step{{reset: true}, status(200)}, 2, 200, nil},
		{"a 404 retried on its word", retryAll, nil, "GET", []step{status(404), status(200)}, 2, 200, nil},
		{"POST without a key is still sent once", retryAll, nil, "POST", []step{status(500), status(200)}, 1, 500, nil},
		{"POST reset without a key is still sent once", retryAll, nil, "POST", []step{{reset: true}, status(200)}, 1, 0, retryhttp.ErrNotReplayable},
		{"an error stops retrying", stop, nil, "GET", []step{status(503), suspended, status(200)}, 2, 0, errStop},
		{"true with an error retries a status", propagate, nil, "GET", []step{status(503), status(503), status(200)}, 3, 200, nil},
		{"true with an error retries a network error", propagate, nil, "GET", []step{reset, status(200)}, 2, 200, nil},
		{"true with an error: the last response once retries run out", propagate, nil, "GET", []step{status(503), status(503), status(503), status(503)}, 4, 503, nil},
		{"true with an error: wrapped once retries run out", propagate, nil, "GET", []step{reset, reset, reset, reset}, 4, 0, errWhy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newScript(map[string][]step{"/": tt.steps})
			tr := &retryhttp.Transport{Base: memRT{s}, Policy: noWait, RetryStatuses: tt.statuses, CheckRetry: tt.check}
			req, _ := http.NewRequest(tt.method, "http://example.test/", strings.NewReader("x"))
			resp, err := tr.RoundTrip(req)
			if got := len(s.requests("/")); got != tt.wantAttempts {
				t.Errorf("%d attempts, want %d", got, tt.wantAttempts)
			}
			if tt.wantStatus == 0 {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("RoundTrip = %s, want an error matching %v", resp.Status, tt.wantErr)
				}
				var re *retry.Error
				if !errors.Is(err, tt.wantErr) || !errors.As(err, &re) {
					t.Errorf("RoundTrip error %v, want a *retry.Error matching %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("RoundTrip: %v", err)
			}
			readBody(t, resp)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.wantStatus)
			}
		})
	}
}

// CheckRetry sees the response or the error, never both, and the request's
// context; DefaultCheckRetry is the rule it replaces.
func TestCheckRetryArguments(t *testing.T) {
	type call struct {
		status int
		err    bool
	}
	var calls []call
	s := newScript(map[string][]step{"/": {{reset: true}, status(503), status(200)}})
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "v")
	tr := &retryhttp.Transport{Base: memRT{s}, Policy: noWait, CheckRetry: func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		if ctx.Value(key{}) != "v" {
			t.Errorf("CheckRetry got a context without the request's values")
		}
		if (resp == nil) == (err == nil) {
			t.Errorf("CheckRetry(resp %v, err %v): want exactly one", resp, err)
		}
		c := call{err: err != nil}
		if resp != nil {
			c.status = resp.StatusCode
		}
		calls = append(calls, c)
		return retryhttp.DefaultCheckRetry(ctx, resp, err)
	}}
	resp, _ := roundTripCtx(t, ctx, tr, "GET", "http://example.test/", nil)
	if resp.StatusCode != 200 {
		t.Errorf("status %d, want 200", resp.StatusCode)
	}
	want := []call{{err: true}, {status: 503}, {status: 200}}
	if len(calls) != len(want) || calls[0] != want[0] || calls[1] != want[1] || calls[2] != want[2] {
		t.Errorf("CheckRetry calls %+v, want %+v", calls, want)
	}
}

func TestDefaultCheckRetry(t *testing.T) {
	for _, code := range []int{200, 404, 500, 429, 502, 503, 504} {
		got, err := retryhttp.DefaultCheckRetry(context.Background(), &http.Response{StatusCode: code}, nil)
		want := code == 429 || code >= 502
		if got != want || err != nil {
			t.Errorf("DefaultCheckRetry(%d) = %v, %v; want %v, nil", code, got, err, want)
		}
	}
}

// OnSuccess reports how many attempts the returned response took.
func TestOnSuccessAttempts(t *testing.T) {
	tests := []struct {
		steps []step
		want  int
	}{
		{[]step{status(200)}, 1},
		{[]step{status(503), {reset: true}, status(200)}, 3},
		{[]step{status(503), status(404)}, 2},
	}
	for _, tt := range tests {
		s := newScript(map[string][]step{"/": tt.steps})
		var got []retryhttp.Event
		tr := &retryhttp.Transport{Base: memRT{s}, Policy: noWait, OnSuccess: func(e retryhttp.Event) { got = append(got, e) }}
		resp, _ := roundTrip(t, tr, "GET", "http://example.test/", nil)
		if len(got) != 1 || got[0].Attempt != tt.want || got[0].Response != resp || got[0].MaxAttempts != 4 {
			t.Errorf("%d steps: OnSuccess events %+v, want one with Attempt %d and the response", len(tt.steps), got, tt.want)
		}
	}
	t.Run("not on give-up", func(t *testing.T) {
		s := newScript(map[string][]step{"/": {status(503)}})
		called := false
		tr := &retryhttp.Transport{Base: memRT{s}, Policy: noWait, OnSuccess: func(retryhttp.Event) { called = true }}
		if resp, _ := roundTrip(t, tr, "GET", "http://example.test/", nil); resp.StatusCode != 503 || called {
			t.Errorf("status %d, OnSuccess called %v; want the last 503 and no OnSuccess", resp.StatusCode, called)
		}
	})
}
