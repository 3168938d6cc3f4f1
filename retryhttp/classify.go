package retryhttp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"
)

// replayableMethod reports whether a request with this method may be sent
// again after it might have reached the server. GET, HEAD, OPTIONS and TRACE
// are safe and PUT and DELETE idempotent (RFC 9110, section 9.2); any other
// method, POST and PATCH in particular, only with an idempotency key, which
// lets the server recognise the repeat. net/http's own Transport uses the
// same rule, including X-Idempotency-Key.
func replayableMethod(method string, h http.Header) bool {
	switch method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace,
		http.MethodPut, http.MethodDelete:
		return true
	}
	return hasKey(h)
}

func hasKey(h http.Header) bool {
	if _, ok := h["Idempotency-Key"]; ok {
		return true
	}
	_, ok := h["X-Idempotency-Key"]
	return ok
}

// errorKind classifies an error returned by the base RoundTripper.
type errorKind int

const (
	// permanent: retrying cannot help or is not ours to decide (TLS
	// certificate failures, malformed requests, redirect policy, unknown
	// errors).
	permanent errorKind = iota
	// notSent: the connection was never established, so the server saw
	// nothing and any method may be retried.
	notSent
	// mayBeSent: a network failure after the request may have reached the
	// server; only replayable requests are retried.
	mayBeSent
)

// classify sorts an attempt's error. Only errors recognised as network
// failures are retried: an unknown error type is permanent, because retrying
// a bug or a policy decision (a redirect limit, a bad URL) only repeats it.
// The caller's own context ending is checked before calling classify.
func classify(err error) errorKind {
	// Certificate and protocol failures are deterministic: the same server
	// will present the same certificate again.
	var (
		certErr    *tls.CertificateVerificationError
		unknownCA  x509.UnknownAuthorityError
		hostErr    x509.HostnameError
		invalidErr x509.CertificateInvalidError
		recordErr  tls.RecordHeaderError
		alertErr   tls.AlertError
	)
	if errors.As(err, &certErr) || errors.As(err, &unknownCA) || errors.As(err, &hostErr) ||
		errors.As(err, &invalidErr) || errors.As(err, &recordErr) || errors.As(err, &alertErr) {
		return permanent
	}
	// A name that does not exist will not exist a second later either;
	// other DNS failures (timeouts, a failing server) may pass.
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return permanent
	}
	var op *net.OpError
	if errors.As(err, &op) {
		if op.Op == "dial" || op.Op == "proxyconnect" {
			return notSent
		}
		return mayBeSent
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ETIMEDOUT) {
		return mayBeSent
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return notSent
	}
	// net/http reports its own timeouts (response headers, TLS handshake)
	// as errors with a Timeout method.
	var timeout interface{ Timeout() bool }
	if errors.As(err, &timeout) && timeout.Timeout() {
		return mayBeSent
	}
	return permanent
}

// retryableStatus reports whether status is in the set, or in the default set
// (429, 502, 503, 504) when set is nil.
func retryableStatus(set []int, status int) bool {
	if set == nil {
		switch status {
		case http.StatusTooManyRequests, http.StatusBadGateway,
			http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	for _, s := range set {
		if s == status {
			return true
		}
	}
	return false
}
