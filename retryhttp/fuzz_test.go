package retryhttp_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
)

// FuzzTransport plays random scripts of statuses, resets and Retry-After
// hints against random methods, keys and limits, and checks the
// Transport's promises: never more attempts than the policy allows, a
// POST or PATCH without a key sent once, the request body closed, a
// response or an error (never both), an error that is a *retry.Error
// matching one reason, and OnSuccess or OnGiveUp told of a returned
// response with the right attempt count.
func FuzzTransport(f *testing.F) {
	f.Add(uint8(3), "GET", false, false, []byte{0, 1, 2, 3}, int64(0), uint8(0))
	f.Add(uint8(1), "POST", true, false, []byte{1, 1, 1}, int64(2), uint8(1))
	f.Add(uint8(5), "PATCH", false, true, []byte{4, 4, 0}, int64(-1), uint8(2))
	f.Fuzz(func(t *testing.T, retries uint8, method string, key, generate bool, script []byte, maxHintSecs int64, statusSet uint8) {
		if len(script) > 16 || !validMethod(method) {
			return
		}
		// Each byte of the script is one answer: 200, 503, 503 with a
		// Retry-After, a connection reset, or a 404.
		steps := make([]step, 0, len(script)+1)
		for _, b := range script {
			switch b % 5 {
			case 0:
				steps = append(steps, status(200))
			case 1:
				steps = append(steps, status(503))
			case 2:
				steps = append(steps, retryAfter(503, "1"))
			case 3:
				steps = append(steps, step{reset: true})
			case 4:
				steps = append(steps, status(404))
			}
		}
		steps = append(steps, status(200))
		var statuses []int // nil: the defaults
		switch statusSet % 3 {
		case 1:
			statuses = []int{}
		case 2:
			statuses = []int{503, 404}
		}
		synctest.Test(t, func(t *testing.T) {
			s := newScript(map[string][]step{"/": steps})
			var success, gaveUp []retryhttp.Event
			tr := &retryhttp.Transport{
				Base:                   memRT{s},
				Policy:                 backoff.Policy{Initial: time.Second, Retries: int(int8(retries)), Jitter: backoff.NoJitter},
				RetryStatuses:          statuses,
				MaxRetryAfter:          time.Duration(maxHintSecs%5) * time.Second,
				GenerateIdempotencyKey: generate,
				OnSuccess:              func(e retryhttp.Event) { success = append(success, e) },
				OnGiveUp:               func(e retryhttp.Event) { gaveUp = append(gaveUp, e) },
			}
			body := &closeCounter{Reader: strings.NewReader("payload")}
			req, err := http.NewRequestWithContext(context.Background(), method, "http://example.test/", body)
			if err != nil {
				return
			}
			if key {
				req.Header.Set("Idempotency-Key", "k")
			}
			resp, err := tr.RoundTrip(req)
			attempts := len(s.requests("/"))
			if max := tr.Policy.MaxAttempts(); attempts > max || attempts < 1 {
				t.Fatalf("%d attempts, want 1 to %d", attempts, max)
			}
			post := method == "POST" || method == "PATCH"
			if post && !key && !generate && attempts > 1 {
				t.Errorf("%s without Idempotency-Key sent %d times", method, attempts)
			}
			if got := body.closed.Load(); got < 1 {
				t.Errorf("request body closed %d times, want at least once", got)
			}
			if (resp == nil) == (err == nil) {
				t.Fatalf("RoundTrip = %v, %v: want exactly one", resp, err)
			}
			if err != nil {
				var re *retry.Error
				if !errors.As(err, &re) || re.Attempts != attempts {
					t.Fatalf("error %v, want a *retry.Error after %d attempts", err, attempts)
				}
				if got := matchedReasons(err); len(got) != 1 {
					t.Errorf("error %v matches the reasons %v, want exactly one", err, got)
				}
				return
			}
			resp.Body.Close()
			switch {
			case len(success) == 1:
				if success[0].Attempt != attempts || success[0].Response != resp || len(gaveUp) != 0 {
					t.Errorf("OnSuccess %+v after %d attempts, OnGiveUp %d times", success[0], attempts, len(gaveUp))
				}
			case len(gaveUp) == 1:
				if gaveUp[0].Attempt != attempts || gaveUp[0].Response != resp {
					t.Errorf("OnGiveUp %+v, want the returned response after %d attempts", gaveUp[0], attempts)
				}
			default:
				t.Errorf("a %s came back with OnSuccess called %d times and OnGiveUp %d times, want one call", resp.Status, len(success), len(gaveUp))
			}
		})
	})
}

// validMethod keeps the fuzzer to methods http.NewRequest accepts and the
// Transport distinguishes.
func validMethod(m string) bool {
	switch m {
	case "GET", "HEAD", "PUT", "DELETE", "POST", "PATCH", "OPTIONS":
		return true
	}
	return false
}
