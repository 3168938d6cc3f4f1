package retryhttp_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
	"github.com/again-go/again/throttle"
)

// A host that answers 503 to everything: after the first requests its
// throttle rejects most of the others locally, and they never reach it.
func ExampleTransport_throttles() {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	client := &http.Client{Transport: &retryhttp.Transport{
		Policy:    backoff.Policy{Initial: -1, Retries: backoff.NoRetries},
		Throttles: &throttle.Group{}, // one SRE Throttler per host
	}}
	rejected := 0
	for range 100 {
		resp, err := client.Get(srv.URL)
		if errors.Is(err, throttle.ErrRejected) && retry.IsRejected(err) {
			rejected++
			continue
		}
		if err == nil {
			resp.Body.Close()
		}
	}
	fmt.Println(hits.Load()+int64(rejected) == 100, rejected > 80)
	// Output: true true
}
