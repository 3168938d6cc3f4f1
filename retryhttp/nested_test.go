package retryhttp_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
)

// The common nesting: retry.Do around a function that calls an API through
// a retryhttp client. The outer error matches exactly one reason, and the
// Transport's verdicts (not retryable, exhausted) act on the outer loop.
func TestRetryAroundClient(t *testing.T) {
	reset := step{reset: true}
	tests := []struct {
		name       string
		method     string
		steps      []step
		cancelAt   int // cancel the caller's context before the outer attempt with this number (from 1), or 0
		want       error
		outerTries int
		requests   int
	}{
		{"inner exhausted, outer retries", "GET", []step{reset}, 0, retry.ErrExhausted, 2, 8},
		{"inner refuses a POST: outer stops", "POST", []step{reset}, 0, retry.ErrPermanent, 1, 1},
		{"canceled between outer attempts", "GET", []step{reset}, 2, retry.ErrCanceled, 2, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newScript(map[string][]step{"/": tt.steps})
				client := &http.Client{Transport: &retryhttp.Transport{Base: memRT{s}, Policy: noWait}}
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				outer := backoff.Policy{Initial: -1, Retries: 1}
				tries := 0
				_, err := retry.Do(ctx, outer, func(ctx context.Context) (int, error) {
					tries++
					if tries == tt.cancelAt {
						cancel()
					}
					req, _ := http.NewRequestWithContext(ctx, tt.method, "http://example.test/", http.NoBody)
					resp, err := client.Do(req)
					if err != nil {
						return 0, err
					}
					resp.Body.Close()
					return resp.StatusCode, nil
				})
				var re *retry.Error
				if !errors.As(err, &re) || re.Attempts != tt.outerTries {
					t.Fatalf("error %v, want a *retry.Error after %d outer attempts", err, tt.outerTries)
				}
				if got := matchedReasons(err); len(got) != 1 || got[0] != tt.want {
					t.Errorf("error %v matches the reasons %v, want only %v", err, got, tt.want)
				}
				if got := len(s.requests("/")); got != tt.requests {
					t.Errorf("server saw %d requests, want %d", got, tt.requests)
				}
			})
		})
	}
}
