package retryhttp_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
)

func TestExhaustedNetworkError(t *testing.T) {
	srv, base := newServer(t, map[string][]step{"/": {{reset: true}}})
	tr := &retryhttp.Transport{Base: base, Policy: backoff.Policy{Initial: -1, Retries: 2, Jitter: backoff.NoJitter}}
	req, _ := http.NewRequest("GET", srv.url("/"), nil)
	err := roundTripErr(t, tr, req)
	var re *retry.Error
	if !errors.As(err, &re) || !errors.Is(err, retry.ErrExhausted) || re.Attempts != 3 {
		t.Fatalf("error %v, want a *retry.Error with ErrExhausted after 3 attempts", err)
	}
	if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("error %v does not wrap the last attempt's network error", err)
	}
	if got := len(srv.requests("/")); got != 3 {
		t.Errorf("server saw %d attempts, want 3", got)
	}
}

func TestNotRetried(t *testing.T) {
	t.Run("TLS certificate", func(t *testing.T) {
		var conns atomic.Int32
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				conns.Add(1)
			}
		}
		srv.Config.ErrorLog = nopLogger()
		srv.StartTLS()
		defer srv.Close()
		base := &http.Transport{} // does not trust the test certificate
		defer base.CloseIdleConnections()
		tr := &retryhttp.Transport{Base: base, Policy: noWait}
		req, _ := http.NewRequest("GET", srv.URL, nil)
		err := roundTripErr(t, tr, req)
		if !errors.Is(err, retry.ErrPermanent) {
			t.Errorf("error %v, want retry.ErrPermanent", err)
		}
		if got := conns.Load(); got != 1 {
			t.Errorf("server saw %d connections, want 1: a certificate error is not retried", got)
		}
	})
	t.Run("caller's context canceled", func(t *testing.T) {
		srv, base := newServer(t, map[string][]step{"/": {{hang: true}, status(200)}})
		ctx, cancel := context.WithCancel(context.Background())
		var retried bool
		tr := &retryhttp.Transport{Base: base, Policy: noWait, OnRetry: func(retryhttp.Event) { retried = true }}
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.url("/"), nil)
		done := make(chan error)
		go func() {
			_, err := tr.RoundTrip(req)
			done <- err
		}()
		<-srv.arrived
		cancel()
		err := <-done
		if !errors.Is(err, context.Canceled) || !errors.Is(err, retry.ErrCanceled) {
			t.Errorf("error %v, want context.Canceled and retry.ErrCanceled", err)
		}
		if retried || len(srv.requests("/")) != 1 {
			t.Errorf("canceled request was retried")
		}
	})
	permanentErrors := []struct {
		name string
		base http.RoundTripper
		url  string
	}{
		// Such as a redirect policy's or a wrapping RoundTripper's own.
		{"unrecognised error", failingRT{errors.New("stopped after 10 redirects")}, "http://example.test/"},
		{"unknown host", failingRT{&net.OpError{Op: "dial", Net: "tcp",
			Err: &net.DNSError{Err: "no such host", Name: "nx.example", IsNotFound: true}}}, "http://nx.example/"},
		{"malformed URL", &http.Transport{}, "gopher://example.test/"},
		{"port out of range", &http.Transport{}, "http://127.0.0.1:99999/"},
	}
	for _, tt := range permanentErrors {
		t.Run(tt.name, func(t *testing.T) {
			rt := &recordingRT{base: tt.base}
			tr := &retryhttp.Transport{Base: rt, Policy: noWait}
			req, _ := http.NewRequest("GET", tt.url, nil)
			if err := roundTripErr(t, tr, req); !errors.Is(err, retry.ErrPermanent) {
				t.Errorf("error %v, want retry.ErrPermanent", err)
			}
			if len(rt.reqs) != 1 {
				t.Errorf("base called %d times, want 1", len(rt.reqs))
			}
		})
	}
}

func TestRedirectPolicyErrorNotRetried(t *testing.T) {
	// The Client applies its redirect policy between round trips: its error
	// must end the request, with each hop sent once.
	srv, base := newServer(t, map[string][]step{
		"/from": {{status: http.StatusFound, header: http.Header{"Location": {"/to"}}}},
		"/to":   {status(200)},
	})
	errStop := errors.New("no redirects, please")
	client := &http.Client{Transport: &retryhttp.Transport{Base: base, Policy: noWait},
		CheckRedirect: func(*http.Request, []*http.Request) error { return errStop }}
	resp, err := client.Get(srv.url("/from"))
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, errStop) {
		t.Errorf("Get error %v, want the redirect policy's", err)
	}
	if from, to := len(srv.requests("/from")), len(srv.requests("/to")); from != 1 || to != 0 {
		t.Errorf("server saw /from %d times and /to %d times, want 1 and 0", from, to)
	}
}

func TestBaseErrors(t *testing.T) {
	// How each kind of error from the base is treated. A POST without key
	// is retried only when nothing can have been sent: a dial error or a
	// failed lookup, even when a custom DialContext returns the resolver's
	// error unwrapped. A name that does not exist will not exist a moment
	// later; certificate errors repeat too.
	dial := func(err error) error { return &net.OpError{Op: "dial", Net: "tcp", Err: err} }
	read := func(err error) error { return &net.OpError{Op: "read", Net: "tcp", Err: err} }
	tests := []struct {
		name      string
		method    string // GET, or POST without Idempotency-Key
		err       error
		wantCalls int32
	}{
		{"connection refused", "POST", dial(os.NewSyscallError("connect", syscall.ECONNREFUSED)), 2},
		{"bare ECONNREFUSED", "POST", os.NewSyscallError("connect", syscall.ECONNREFUSED), 2},
		{"reset, GET", "GET", read(syscall.ECONNRESET), 2},
		{"reset, POST", "POST", read(syscall.ECONNRESET), 1},
		{"unexpected EOF, GET", "GET", io.ErrUnexpectedEOF, 2},
		{"unexpected EOF, POST", "POST", io.ErrUnexpectedEOF, 1},
		{"response header timeout, GET", "GET", headerTimeout{}, 2},
		{"response header timeout, POST", "POST", headerTimeout{}, 1},
		{"DNS temporary", "POST", dial(&net.DNSError{Err: "server misbehaving", Name: "api.example", IsTemporary: true}), 2},
		{"DNS timeout", "POST", dial(&net.DNSError{Err: "i/o timeout", Name: "api.example", IsTimeout: true}), 2},
		{"DNS other failure", "POST", dial(&net.DNSError{Err: "no answer from DNS server", Name: "api.example"}), 2},
		{"DNS temporary, unwrapped", "POST", &net.DNSError{Err: "server misbehaving", Name: "api.example", IsTemporary: true}, 2},
		{"DNS timeout, unwrapped", "POST", &net.DNSError{Err: "i/o timeout", Name: "api.example", IsTimeout: true}, 2},
		{"DNS no such host", "GET", dial(&net.DNSError{Err: "no such host", Name: "nx.example", IsNotFound: true}), 1},
		{"DNS no such host, unwrapped", "GET", &net.DNSError{Err: "no such host", Name: "nx.example", IsNotFound: true}, 1},
		{"certificate verification", "GET", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, 1},
		{"unknown authority", "GET", x509.UnknownAuthorityError{}, 1},
		{"wrong host name", "GET", x509.HostnameError{Host: "api.example", Certificate: &x509.Certificate{}}, 1},
		{"expired certificate", "GET", x509.CertificateInvalidError{Reason: x509.Expired, Cert: &x509.Certificate{}}, 1},
		{"TLS alert", "GET", read(tls.AlertError(40)), 1},
		{"unrecognised error", "GET", errors.New("some wrapping transport's own failure"), 1},
		{"invalid port", "GET", dial(&net.AddrError{Err: "invalid port", Addr: "99999"}), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := &failFirstRT{memRT: memRT{newScript(nil)}, err: tt.err}
			tr := &retryhttp.Transport{Base: rt, Policy: noWait}
			req, _ := http.NewRequest(tt.method, "http://api.example/", strings.NewReader("x"))
			resp, err := tr.RoundTrip(req)
			if tt.wantCalls == 1 {
				if err == nil || !errors.Is(err, tt.err) {
					t.Errorf("RoundTrip error %v, want one wrapping %v", err, tt.err)
				}
			} else if err != nil {
				t.Errorf("RoundTrip: %v, want the retry to succeed", err)
			} else {
				readBody(t, resp)
			}
			if got := rt.calls.Load(); got != tt.wantCalls {
				t.Errorf("base called %d times, want %d", got, tt.wantCalls)
			}
		})
	}
}

func TestBrokenBase(t *testing.T) {
	// Whatever the base does, RoundTrip returns a response or an error,
	// never both, and closes a response it does not return.
	body := &closeCounter{Reader: strings.NewReader("ignored")}
	tests := []struct {
		name string
		base brokenRT
	}{
		{"response and error", brokenRT{&http.Response{StatusCode: 200, Body: body}, errors.New("both")}},
		{"neither", brokenRT{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &retryhttp.Transport{Base: tt.base, Policy: noWait}
			req, _ := http.NewRequest("GET", "http://example.test/", nil)
			resp, err := tr.RoundTrip(req)
			if resp != nil || err == nil {
				t.Errorf("RoundTrip = %v, %v; want nil and an error", resp, err)
			}
		})
	}
	if got := body.closed.Load(); got != 1 {
		t.Errorf("ignored response body closed %d times, want 1", got)
	}
}

func TestHTTP2StreamReset(t *testing.T) {
	// An HTTP/2 server resetting a stream is, for that request, what a
	// connection reset is in HTTP/1: it may have reached the server, so a
	// GET is retried and a POST without key is not.
	for _, tt := range []struct {
		method       string
		wantAttempts int32
	}{{"GET", 2}, {"POST", 1}} {
		t.Run(tt.method, func(t *testing.T) {
			var attempts atomic.Int32
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if attempts.Add(1) == 1 {
					panic(http.ErrAbortHandler) // RST_STREAM with INTERNAL_ERROR
				}
				io.WriteString(w, "ok")
			}))
			srv.EnableHTTP2 = true
			srv.Config.ErrorLog = nopLogger()
			srv.StartTLS()
			defer srv.Close()
			base := srv.Client().Transport.(*http.Transport)
			defer base.CloseIdleConnections()
			tr := &retryhttp.Transport{Base: base, Policy: noWait}
			req, _ := http.NewRequest(tt.method, srv.URL, strings.NewReader("x"))
			resp, err := tr.RoundTrip(req)
			if tt.wantAttempts == 2 {
				if err != nil {
					t.Fatalf("RoundTrip: %v", err)
				}
				if body := readBody(t, resp); resp.ProtoMajor != 2 || body != "ok" {
					t.Errorf("response %s %q, want HTTP/2 and %q", resp.Proto, body, "ok")
				}
			} else if !errors.Is(err, retryhttp.ErrNotReplayable) {
				t.Errorf("RoundTrip error %v, want ErrNotReplayable", err)
			}
			if got := attempts.Load(); got != tt.wantAttempts {
				t.Errorf("server saw %d attempts, want %d", got, tt.wantAttempts)
			}
		})
	}
}
