package retryhttp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
)

// A server that is unavailable twice, asking to come back at once, then
// answers. The Transport waits the Policy's first delay all the same: a
// server that asks every client to come back at once would otherwise get a
// storm of retries.
func Example() {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= 2 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "hello")
	}))
	defer srv.Close()

	client := &http.Client{Transport: &retryhttp.Transport{
		Policy: backoff.Policy{Initial: 10 * time.Millisecond, Retries: 3, Jitter: backoff.FullJitter},
		OnRetry: func(e retryhttp.Event) {
			fmt.Printf("attempt %d of %d: %s, retrying in %v (%s asked for %v)\n", e.Attempt, e.MaxAttempts, e.Response.Status, e.Delay, e.HintHeader, e.Hint)
		},
		OnSuccess: func(e retryhttp.Event) {
			fmt.Printf("%s after %d attempts\n", e.Response.Status, e.Attempt)
		},
	}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Print(resp.Status, ": ", string(body))
	// Output:
	// attempt 1 of 4: 503 Service Unavailable, retrying in 10ms (Retry-After asked for 0s)
	// attempt 2 of 4: 503 Service Unavailable, retrying in 10ms (Retry-After asked for 0s)
	// 200 OK after 3 attempts
	// 200 OK: hello
}

// A Retry-After longer than the caller will wait ends retrying at once: the
// response comes back unchanged, so the caller can reschedule.
func ExampleTransport_maxRetryAfter() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()

	client := &http.Client{Transport: &retryhttp.Transport{
		MaxRetryAfter: time.Minute,
		OnGiveUp: func(e retryhttp.Event) {
			fmt.Printf("giving up after %d attempt: %v (Retry-After %v)\n", e.Attempt, e.Reason, e.Hint)
		},
	}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.Status, "Retry-After:", resp.Header.Get("Retry-After"))
	// Output:
	// giving up after 1 attempt: retry: retry-after hint too long (Retry-After 1h0m0s)
	// 429 Too Many Requests Retry-After: 3600
}

// A POST is retried only with an Idempotency-Key. For a server known to
// honour the header, GenerateIdempotencyKey gives each POST one key for all
// its attempts, so that the server can recognise a repeat.
func ExampleTransport_idempotencyKey() {
	var (
		mu   sync.Mutex
		keys []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		if len(keys) == 1 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()

	client := &http.Client{Transport: &retryhttp.Transport{
		Policy:                 backoff.Policy{Initial: -1, Retries: 1, Jitter: backoff.NoJitter},
		GenerateIdempotencyKey: true,
	}}
	resp, err := client.Post(srv.URL, "application/json", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	fmt.Println(resp.Status, len(keys), "attempts, same key:", keys[0] == keys[1], "length", len(keys[0]))
	// Output:
	// 201 Created 2 attempts, same key: true length 36
}

func ExampleParseRetryAfter() {
	now := time.Date(2026, 11, 30, 12, 0, 0, 500_000_000, time.UTC)
	for _, v := range []string{"120", "Mon, 30 Nov 2026 12:00:03 GMT", "-1", "soon"} {
		d, ok := retryhttp.ParseRetryAfter(v, now)
		fmt.Printf("%q: %v %v\n", v, d, ok)
	}
	// Output:
	// "120": 2m0s true
	// "Mon, 30 Nov 2026 12:00:03 GMT": 2.5s true
	// "-1": 0s false
	// "soon": 0s false
}

func ExampleParseRateLimit() {
	d, ok := retryhttp.ParseRateLimit(`"default";r=0;t=30`)
	fmt.Println(d, ok)
	// Output: 30s true
}

func ExampleParseRateLimitReset() {
	now := time.Unix(1_800_000_000, 0)
	for _, v := range []string{"30", "1800000045", "soon"} {
		d, ok := retryhttp.ParseRateLimitReset(v, now)
		fmt.Printf("%q: %v %v\n", v, d, ok)
	}
	// Output:
	// "30": 30s true
	// "1800000045": 45s true
	// "soon": 0s false
}

// With ReadBody, the body is read inside its attempt: a body cut off
// mid-way is retried like a connection reset, and AttemptTimeout bounds
// the whole attempt. ReadBody starts over on each call.
func ExampleTransport_readBody() {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			// Promise 100 bytes, send 7, hang up.
			w.Header().Set("Content-Length", "100")
			fmt.Fprint(w, "partial")
			w.(http.Flusher).Flush()
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		fmt.Fprint(w, "the whole body")
	}))
	defer srv.Close()

	var body bytes.Buffer
	client := &http.Client{Transport: &retryhttp.Transport{
		Policy:         backoff.Policy{Initial: -1, Retries: 3},
		AttemptTimeout: 10 * time.Second,
		ReadBody: func(resp *http.Response) error {
			body.Reset() // a retry starts over
			_, err := io.Copy(&body, resp.Body)
			return err
		},
		OnRetry: func(e retryhttp.Event) { fmt.Printf("attempt %d failed: %v\n", e.Attempt, e.Err) },
	}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close() // already read: empty
	fmt.Println(resp.Status, body.String())
	// Output:
	// attempt 1 failed: unexpected EOF
	// 200 OK the whole body
}

// roundTripFunc adapts a function to http.RoundTripper, to stand in for a
// server in examples.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// The log names the request without its password or query values, and
// never shows headers or bodies.
func ExampleTransport_logger() {
	statuses := []int{http.StatusBadGateway, http.StatusOK}
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		code := statuses[0]
		statuses = statuses[1:]
		return &http.Response{StatusCode: code, Status: http.StatusText(code), Body: http.NoBody, Request: r}, nil
	})
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // keep the output reproducible
			}
			return a
		},
	}))
	client := &http.Client{Transport: &retryhttp.Transport{
		Base:   base,
		Policy: backoff.Policy{Initial: -1, Retries: 2, Jitter: backoff.NoJitter}, // no wait, for the example
		Logger: logger,
	}}
	req, _ := http.NewRequest("GET", "https://user:password@api.example.com/items?token=secret&page=2", nil)
	req.Header.Set("Authorization", "Bearer secret")
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode)
	// Output:
	// level=INFO msg="retryhttp: retrying" method=GET url="https://user:…@api.example.com/items?token=…&page=…" attempt=1 max_attempts=3 status=502 delay=0s
	// 200
}

// CheckRetry replaces the status list with the caller's own rule, here an
// API that signals overload with a 500 and an error code, and that must
// not be retried when it says the account is suspended. The idempotency
// rule still holds: a POST without Idempotency-Key would be sent once.
func ExampleTransport_checkRetry() {
	answers := []struct {
		code int
		err  string
	}{{500, "overloaded"}, {500, "suspended"}}
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		a := answers[0]
		answers = answers[1:]
		h := http.Header{"X-Error": {a.err}}
		return &http.Response{StatusCode: a.code, Status: http.StatusText(a.code), Header: h, Body: http.NoBody, Request: r}, nil
	})
	errSuspended := errors.New("account suspended")
	client := &http.Client{Transport: &retryhttp.Transport{
		Base:   base,
		Policy: backoff.Policy{Initial: -1, Retries: 3}, // no wait, for the example
		CheckRetry: func(ctx context.Context, resp *http.Response, err error) (bool, error) {
			if resp != nil && resp.Header.Get("X-Error") == "suspended" {
				return false, errSuspended
			}
			if resp != nil && resp.Header.Get("X-Error") == "overloaded" {
				return true, nil
			}
			return retryhttp.DefaultCheckRetry(ctx, resp, err)
		},
	}}
	_, err := client.Get("https://api.example.com/items")
	var re *retry.Error
	fmt.Println(errors.Is(err, errSuspended), errors.As(err, &re) && re.Attempts == 2)
	// Output: true true
}

// RedactURL keeps what tells a request apart and replaces its secrets.
func ExampleRedactURL() {
	fmt.Println(retryhttp.RedactURL("https://alice:s3cr3t@api.example.com/items?id=42&token=abc#top"))
	fmt.Println(retryhttp.RedactURL("https://ghp_token@example.com/repo"))
	fmt.Println(retryhttp.RedactURL("http://alice:s3cr3t@exa mple.com/?q=1")) // does not parse
	// Output:
	// https://alice:…@api.example.com/items?id=…&token=…
	// https://…@example.com/repo
	// http://…@exa mple.com/?…
}
