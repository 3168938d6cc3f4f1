package retryhttp_test

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
	"github.com/again-go/again/retryhttp"
)

// A circuit breaker per host: once a host fails too often, requests to it
// fail at once with breaker.ErrOpen, without reaching the network, until
// the breaker admits a probe; other hosts are not affected.
func ExampleTransport_breakers() {
	sent := 0
	down := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent++
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Body: http.NoBody, Request: r}, nil
	})
	client := &http.Client{Transport: &retryhttp.Transport{
		Base:   down, // in real use: nil, http.DefaultTransport
		Policy: backoff.Policy{Initial: -1, Retries: 3},
		Breakers: &breaker.Group{Config: breaker.Config{
			MinCalls: 4, // the default is 20 calls within 10 s
			Open:     backoff.Policy{Initial: 30 * time.Second, Max: 5 * time.Minute, Jitter: backoff.EqualJitter},
		}},
		MaxRetryAfter: 10 * time.Second, // do not wait 30 s for the probe: fail now
	}}
	for range 2 {
		resp, err := client.Get("http://api.example/v1/items")
		switch {
		case errors.Is(err, breaker.ErrOpen):
			fmt.Println("rejected by the breaker")
		case err == nil:
			resp.Body.Close()
			fmt.Println(resp.StatusCode)
		}
	}
	fmt.Println("requests sent:", sent)
	// Output:
	// 503
	// rejected by the breaker
	// requests sent: 4
}
