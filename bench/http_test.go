package bench

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retryhttp"
)

// httpClient is one way of sending a request: plain net/http, retryhttp or
// go-retryablehttp, each over its own *http.Transport with the same
// settings, so that they share nothing but the server.
type httpClient struct {
	name string
	// new returns the client's do function and a cleanup.
	new func(base *http.Transport) func(*http.Request) (*http.Response, error)
}

// The retry policy of both retrying clients: 3 retries, no wait, so that
// the benchmarks measure the libraries rather than sleeping.
var httpClients = []httpClient{
	{"nethttp", func(base *http.Transport) func(*http.Request) (*http.Response, error) {
		return (&http.Client{Transport: base}).Do
	}},
	{"again", func(base *http.Transport) func(*http.Request) (*http.Response, error) {
		tr := &retryhttp.Transport{Base: base, Policy: backoff.Policy{Initial: -1, Retries: 3, Jitter: backoff.NoJitter}}
		return (&http.Client{Transport: tr}).Do
	}},
	{"retryablehttp", func(base *http.Transport) func(*http.Request) (*http.Response, error) {
		c := retryablehttp.NewClient()
		c.HTTPClient = &http.Client{Transport: base}
		c.Logger = nil
		c.RetryMax = 3
		c.RetryWaitMin, c.RetryWaitMax = 0, 0
		return func(r *http.Request) (*http.Response, error) {
			rr, err := retryablehttp.FromRequest(r)
			if err != nil {
				return nil, err
			}
			return c.Do(rr)
		}
	}},
}

func newBase() *http.Transport {
	return &http.Transport{MaxIdleConnsPerHost: 8, IdleConnTimeout: time.Minute}
}

// BenchmarkHTTPGet is the success path: a GET to a loopback server that
// answers 200 with a short body, read to the end.
func BenchmarkHTTPGet(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	for _, c := range httpClients {
		b.Run(c.name, func(b *testing.B) {
			base := newBase()
			defer base.CloseIdleConnections()
			do := c.new(base)
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest("GET", srv.URL, nil)
				consume(b, do, req, http.StatusOK)
			}
		})
	}
}

// BenchmarkHTTPPost10MiB posts a 10 MiB body that the server reads whole.
// "single" is one plain POST answered 200, the floor; the others are
// answered 503 first and 200 on the retry, so they send the body twice:
// "nethttp-twice" does it by hand with GetBody, the least any client must
// do. A retrying client that copies the body allocates 10 MiB more.
func BenchmarkHTTPPost10MiB(b *testing.B) {
	payload := bytes.Repeat([]byte("0123456789abcdef"), 10<<20/16)
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			panic(err)
		}
		if r.URL.Path == "/flaky" && n.Add(1)%2 == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	post := func(path string) *http.Request {
		req, _ := http.NewRequest("POST", srv.URL+path, bytes.NewReader(payload))
		req.Header.Set("Idempotency-Key", "bench") // go-retryablehttp would retry a POST anyway
		return req
	}
	b.Run("nethttp-single", func(b *testing.B) {
		base := newBase()
		defer base.CloseIdleConnections()
		do := (&http.Client{Transport: base}).Do
		b.ReportAllocs()
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			consume(b, do, post("/"), http.StatusOK)
		}
	})
	b.Run("nethttp-twice", func(b *testing.B) {
		base := newBase()
		defer base.CloseIdleConnections()
		do := (&http.Client{Transport: base}).Do
		b.ReportAllocs()
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			req := post("/flaky")
			consume(b, do, req, http.StatusServiceUnavailable)
			again := req.Clone(req.Context())
			again.Body, _ = req.GetBody()
			consume(b, do, again, http.StatusOK)
		}
	})
	for _, c := range httpClients[1:] {
		b.Run(c.name, func(b *testing.B) {
			base := newBase()
			defer base.CloseIdleConnections()
			do := c.new(base)
			b.ReportAllocs()
			b.SetBytes(int64(len(payload)))
			for b.Loop() {
				consume(b, do, post("/flaky"), http.StatusOK)
			}
		})
	}
}

// consume sends req, checks the status and reads the body to the end so
// that the connection is reused.
func consume(b *testing.B, do func(*http.Request) (*http.Response, error), req *http.Request, want int) {
	resp, err := do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		b.Fatalf("status %d, want %d", resp.StatusCode, want)
	}
}
