package retryhttp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
)

func TestSuccessAllocatesNothing(t *testing.T) {
	// A first-attempt success must cost nothing beyond the base's own work:
	// the transport is meant to sit under every request of a program.
	resp := &http.Response{StatusCode: 200, Body: http.NoBody}
	get, _ := http.NewRequest("GET", "http://example.test/", nil)
	put, _ := http.NewRequest("PUT", "http://example.test/", strings.NewReader("x"))
	tests := []struct {
		name string
		tr   *retryhttp.Transport
		req  *http.Request
	}{
		{"zero Transport, GET", &retryhttp.Transport{Base: fixedRT{resp}}, get},
		{"404 is a success for the transport", &retryhttp.Transport{Base: fixedRT{&http.Response{StatusCode: 404, Body: http.NoBody}}}, get},
		{"PUT with GetBody", &retryhttp.Transport{Base: fixedRT{resp}, Policy: noWait}, put},
		{"with a budget and hooks", &retryhttp.Transport{Base: fixedRT{resp}, Budget: &retry.TokenBucket{},
			OnRetry: func(retryhttp.Event) {}, OnSuccess: func(retryhttp.Event) {}, CheckRetry: retryhttp.DefaultCheckRetry}, get},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			allocs := testing.AllocsPerRun(100, func() {
				if _, err := tt.tr.RoundTrip(tt.req); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("RoundTrip allocated %v times, want 0", allocs)
			}
		})
	}
}

// freshRT answers every request with the same response, its body reset
// (the Transport wraps the body it returns).
type freshRT struct{ resp *http.Response }

func (f freshRT) RoundTrip(r *http.Request) (*http.Response, error) {
	f.resp.Body = http.NoBody
	return f.resp, nil
}
