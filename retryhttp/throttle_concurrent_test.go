package retryhttp_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
	"github.com/again-go/again/throttle"
)

// TestThrottleConcurrentFirstRequests: 32 concurrent first GETs to a
// healthy loopback server, through a Transport with the zero Group's SRE
// throttlers and no retries, all reach it: the server holds every answer
// until all 32 have arrived, so all are in flight at once, and a throttle
// that counted them as requests without accepts rejected 25 of them.
func TestThrottleConcurrentFirstRequests(t *testing.T) {
	const n = 32
	var arrived atomic.Int64
	all := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if arrived.Add(1) == n {
			close(all)
		}
		select {
		case <-all:
		case <-r.Context().Done():
		case <-time.After(10 * time.Second): // a bound, not a pause: fails the test below
		}
	}))
	defer srv.Close()
	g := &throttle.Group{}
	tr := &retryhttp.Transport{Throttles: g, Policy: backoff.Policy{Retries: backoff.NoRetries}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var rejected, failed atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, err := client.Get(srv.URL)
			switch {
			case errors.Is(err, throttle.ErrRejected):
				rejected.Add(1)
			case err != nil:
				t.Errorf("GET = %v", err)
				failed.Add(1)
			default:
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	if got := rejected.Load(); got != 0 {
		t.Errorf("%d of %d concurrent first GETs to a healthy server rejected with throttle.ErrRejected, want 0", got, n)
	}
	if got := arrived.Load(); got != n {
		t.Errorf("the server got %d requests, want %d", got, n)
	}
	g.Range(func(key string, a retry.Admitter) bool {
		if s := a.(*throttle.Throttler).Snapshot(); s.Requests != n || s.Accepts != n {
			t.Errorf("throttle of %s: %+v, want %d requests, all accepted", key, s, n)
		}
		return true
	})
}
