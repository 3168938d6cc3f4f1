// The Transport's tests, one file per concern: status_test.go (which
// statuses end or continue a call), request_test.go (the caller's request
// and body), idempotency_test.go (POST/PATCH and keys), network_test.go
// (which errors are retried), connection_test.go (draining, reuse,
// concurrency), timing_test.go (schedule, hints, deadlines, AttemptTimeout,
// on synctest's clock), hooks_test.go (events, logs, budget),
// checkretry_test.go, nested_test.go and alloc_test.go. This file holds
// their fakes: a fault-injecting server, an in-memory RoundTripper playing
// the same scripts, and small RoundTrippers and bodies.
package retryhttp_test

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// step is one scripted answer of the fault-injecting server or the
// in-memory round tripper.
type step struct {
	status int         // 0 means 200
	header http.Header // response headers, e.g. Retry-After
	body   string
	reset  bool          // drop the connection with a TCP reset before answering
	close  bool          // close the connection (FIN) before answering: EOF
	hang   bool          // never send headers (slow headers) until the client leaves
	stall  bool          // send headers and the body, then stall before its end
	cut    bool          // send headers and the body, then close before its end
	delay  time.Duration // in-memory only: time before the headers arrive
}

func status(code int) step { return step{status: code, body: strconv.Itoa(code) + " body"} }

func retryAfter(code int, value string) step {
	s := status(code)
	s.header = http.Header{"Retry-After": {value}}
	return s
}

// seen is a request as the server received it.
type seen struct {
	method string
	body   string
	keys   []string // Idempotency-Key values
	xkeys  []string // X-Idempotency-Key values
	at     time.Time
}

// script plays steps per URL path, counting what it sees.
type script struct {
	mu      sync.Mutex
	steps   map[string][]step
	seen    map[string][]seen
	arrived chan struct{} // closed when the first request arrives
	once    sync.Once
}

func newScript(steps map[string][]step) *script {
	return &script{steps: steps, seen: map[string][]seen{}, arrived: make(chan struct{})}
}

// next records r (reading its body) and returns the step to play.
func (s *script) next(r *http.Request) step {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body.Close()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := r.URL.Path
	s.seen[p] = append(s.seen[p], seen{method: r.Method, body: string(body), keys: r.Header.Values("Idempotency-Key"),
		xkeys: r.Header.Values("X-Idempotency-Key"), at: time.Now()})
	s.once.Do(func() { close(s.arrived) })
	steps := s.steps[p]
	if len(steps) == 0 {
		return step{}
	}
	return steps[min(len(s.seen[p]), len(steps))-1]
}

func (s *script) requests(path string) []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.seen[path]...)
}

// server is a fault-injecting httptest server that plays a script.
type server struct {
	*httptest.Server
	*script
	conns atomic.Int64 // new connections accepted
}

// newServer starts a server and a client transport private to the test, so
// that connection counts and leak checks see only this test's traffic.
func newServer(t *testing.T, steps map[string][]step) (*server, *http.Transport) {
	t.Helper()
	s := &server{script: newScript(steps)}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	base := &http.Transport{}
	t.Cleanup(func() {
		base.CloseIdleConnections()
		s.Close()
	})
	return s, base
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	st := s.next(r)
	switch {
	case st.reset:
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		conn.(*net.TCPConn).SetLinger(0) // close with RST, not FIN
		conn.Close()
		return
	case st.close:
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		conn.Close()
		return
	case st.hang:
		<-r.Context().Done()
		return
	}
	for k, v := range st.header {
		w.Header()[k] = v
	}
	code := cmp(st.status, http.StatusOK)
	if st.stall || st.cut {
		w.Header().Set("Content-Length", strconv.Itoa(len(st.body)+1))
		w.WriteHeader(code)
		io.WriteString(w, st.body)
		w.(http.Flusher).Flush()
		if st.cut {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				panic(err)
			}
			conn.Close()
			return
		}
		<-r.Context().Done()
		return
	}
	w.WriteHeader(code)
	io.WriteString(w, st.body)
}

func cmp(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func (s *server) url(path string) string { return s.URL + path }

// ctxReader is a body that stalls until the request's context ends.
type ctxReader struct{ ctx context.Context }

func (r ctxReader) Read([]byte) (int, error) {
	<-r.ctx.Done()
	return 0, context.Cause(r.ctx)
}

// memRT is an in-memory RoundTripper playing a script, for tests that run
// inside a synctest bubble, where real network I/O cannot be used.
type memRT struct{ *script }

func (m memRT) RoundTrip(r *http.Request) (*http.Response, error) {
	st := m.next(r)
	ctx := r.Context()
	if st.hang {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
	if st.delay > 0 {
		select {
		case <-time.After(st.delay):
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	if st.reset {
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	}
	code := cmp(st.status, http.StatusOK)
	h := st.header.Clone()
	if h == nil {
		h = http.Header{}
	}
	var body io.Reader = strings.NewReader(st.body)
	if st.stall {
		body = io.MultiReader(body, ctxReader{ctx})
	}
	if st.cut {
		body = io.MultiReader(body, errReader{io.ErrUnexpectedEOF})
	}
	return &http.Response{
		StatusCode:    code,
		Status:        strconv.Itoa(code) + " " + http.StatusText(code),
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(body),
		ContentLength: -1,
		Request:       r,
	}, nil
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("reading response body: %v", err)
	}
	return string(b)
}

func nopLogger() *log.Logger { return log.New(io.Discard, "", 0) }

// roundTripErr sends req through tr and returns the error it must fail with.
func roundTripErr(t *testing.T, tr http.RoundTripper, req *http.Request) error {
	t.Helper()
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("RoundTrip = %s, want an error", resp.Status)
	}
	return err
}

// roundTrip sends a request through tr and returns the response with its
// body read.
func roundTrip(t *testing.T, tr http.RoundTripper, method, url string, body io.Reader) (*http.Response, string) {
	t.Helper()
	return roundTripCtx(t, context.Background(), tr, method, url, body)
}

func roundTripCtx(t *testing.T, ctx context.Context, tr http.RoundTripper, method, url string, body io.Reader) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("RoundTrip: %v", err)
	}
	return resp, readBody(t, resp)
}

// noWait retries 3 times at once, so that tests against a real server need
// no timing; timing is tested inside synctest bubbles.
var noWait = backoff.Policy{Initial: -1, Retries: 3, Jitter: backoff.NoJitter}

type recordingRT struct {
	base http.RoundTripper
	reqs []*http.Request
	last *http.Response
}

func (r *recordingRT) RoundTrip(req *http.Request) (*http.Response, error) {
	r.reqs = append(r.reqs, req)
	resp, err := r.base.RoundTrip(req)
	r.last = resp
	return resp, err
}

type failingRT struct{ err error }

func (f failingRT) RoundTrip(*http.Request) (*http.Response, error) { return nil, f.err }

// closeCounter is a request body without GetBody that records Close.
type closeCounter struct {
	io.Reader
	closed atomic.Int32
}

func (c *closeCounter) Close() error { c.closed.Add(1); return nil }

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// closedAddr returns a loopback address where nothing listens.
func closedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// fixedRT answers every request with the same response, allocating nothing.
type fixedRT struct{ resp *http.Response }

func (f fixedRT) RoundTrip(*http.Request) (*http.Response, error) { return f.resp, nil }

// idleCounter is a RoundTripper that counts CloseIdleConnections calls.
type idleCounter struct {
	memRT
	closes int
}

func (c *idleCounter) CloseIdleConnections() { c.closes++ }

// failFirstRT fails its first call with err, then plays its script.
type failFirstRT struct {
	memRT
	err   error
	calls atomic.Int32
}

func (f *failFirstRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.calls.Add(1) == 1 {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, f.err
	}
	return f.memRT.RoundTrip(r)
}

// headerTimeout is like net/http's "timeout awaiting response headers".
type headerTimeout struct{}

func (headerTimeout) Error() string { return "net/http: timeout awaiting response headers" }

func (headerTimeout) Timeout() bool { return true }

// errReader fails every read.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// brokenRT breaks the RoundTripper contract in the way its fields say.
type brokenRT struct {
	resp *http.Response
	err  error
}

func (b brokenRT) RoundTrip(*http.Request) (*http.Response, error) { return b.resp, b.err }

// closingRT answers with a retryable status whose body records Close.
type closingRT struct {
	status int
	header http.Header
	bodies []*closeCounter
}

func (c *closingRT) RoundTrip(r *http.Request) (*http.Response, error) {
	b := &closeCounter{Reader: strings.NewReader("busy")}
	c.bodies = append(c.bodies, b)
	return &http.Response{StatusCode: c.status, Status: http.StatusText(c.status), Header: c.header.Clone(),
		Body: b, ContentLength: -1, Request: r}, nil
}

// countingBody is a 1 MiB response body that counts the bytes read.
type countingBody struct {
	read   int64
	closed bool
}

func (b *countingBody) Read(p []byte) (int, error) {
	n := min(int64(len(p)), 1<<20-b.read)
	if n == 0 {
		return 0, io.EOF
	}
	b.read += n
	return int(n), nil
}

func (b *countingBody) Close() error { b.closed = true; return nil }

// reasons are the retry package's reasons for stopping: every error the
// Transport returns from its loop matches exactly one.
var reasons = []error{retry.ErrExhausted, retry.ErrPermanent, retry.ErrDeadline, retry.ErrCanceled, retry.ErrRetryAfterTooLong, retry.ErrRejected, retry.ErrBudget}

// matchedReasons returns the reasons err matches with errors.Is.
func matchedReasons(err error) []error {
	var got []error
	for _, r := range reasons {
		if errors.Is(err, r) {
			got = append(got, r)
		}
	}
	return got
}
