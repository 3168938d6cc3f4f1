package fault_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/fault"
	"github.com/again-go/again/retryhttp"
)

// A script on the server side: the first two requests get a 503, and a
// retrying client gets through on its third attempt.
func ExampleHandler() {
	in := &fault.Injector{Faults: []fault.Fault{{Status: 503, Times: 2}}}
	srv := httptest.NewServer(&fault.Handler{Injector: in, Next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello")
	})})
	defer srv.Close()

	client := &http.Client{Transport: &retryhttp.Transport{
		Policy: backoff.Policy{Initial: time.Millisecond, Max: time.Millisecond},
		OnSuccess: func(e retryhttp.Event) {
			fmt.Println("attempts:", e.Attempt)
		},
	}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(b))
	fmt.Println("503s injected:", in.Injected(fault.Status))
	// Output:
	// attempts: 3
	// 200 hello
	// 503s injected: 2
}

// On the client side, under retryhttp, a reset in the middle of the body
// is retried when the Transport reads the body within the attempt.
func ExampleTransport() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "a body long enough to be cut in two")
	}))
	defer srv.Close()

	in := &fault.Injector{Faults: []fault.Fault{{Kind: fault.Reset, Stage: fault.MidBody, Times: 1}}}
	var got []byte
	client := &http.Client{Transport: &retryhttp.Transport{
		Base:   &fault.Transport{Injector: in},
		Policy: backoff.Policy{Initial: time.Millisecond, Max: time.Millisecond},
		ReadBody: func(resp *http.Response) (err error) {
			got, err = io.ReadAll(resp.Body)
			return err
		},
		OnRetry: func(e retryhttp.Event) { fmt.Println("retrying after:", e.Err) },
	}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(got))
	// Output:
	// retrying after: fault: injected reset: read tcp: read: connection reset by peer
	// 200 a body long enough to be cut in two
}

func ExampleParseDistribution() {
	d, err := fault.ParseDistribution("lognormal:5ms,1.2")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d, "median", d.Quantile(0.5))
	_, err = fault.ParseDistribution("uniform:5ms")
	fmt.Println(err)
	// Output:
	// lognormal:5ms,1.2 median 5ms
	// fault: Name must be pareto or lognormal, got "uniform"
}
