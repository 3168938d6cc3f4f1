package retryhttp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
)

// replayableMethod reports whether a request with this method may be sent
// again after it might have reached the server. GET, HEAD, OPTIONS and TRACE
// are safe and PUT and DELETE idempotent (RFC 9110, section 9.2); any other
// method, POST and PATCH in particular, only with an idempotency key, which
// lets the server recognise the repeat (see hasKey).
func replayableMethod(method string, h http.Header) bool {
	switch method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace,
		http.MethodPut, http.MethodDelete:
		return true
	}
	return hasKey(h)
}

// hedgeableMethod reports whether a request with this method may run
// twice at once, as a hedge runs beside the copy it hedges: only the safe
// methods (GET, HEAD, OPTIONS, TRACE and QUERY, RFC 9110 section 9.2.1,
// and the QUERY draft), or any method with an idempotency key (hasKey).
// PUT and DELETE are idempotent but not safe: a retry follows a copy that
// failed, a hedge runs beside one that may already have succeeded, so
// that a DELETE's hedge meets the item its first copy deleted (404) and a
// PUT's races the first copy's write and the writes that follow it.
func hedgeableMethod(method string, h http.Header) bool {
	switch method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, methodQuery:
		return true
	}
	return hasKey(h)
}

// methodQuery is the QUERY method (draft-ietf-httpbis-safe-method-w-body):
// safe, like GET, with a body. net/http has no constant for it.
const methodQuery = "QUERY"

// hasKey reports whether h carries an idempotency key: an Idempotency-Key
// or X-Idempotency-Key header with at least one value that is not blank.
// A header that is present with no value (which net/http does not send),
// or with only empty or blank values, gives the server nothing by which to
// recognise a repeat, so it does not count. net/http's own Transport
// counts the mere presence of the header, as a way to mark a request
// idempotent without sending a key; this Transport retries many more
// failures than net/http does (statuses, timeouts, a response cut off), so
// it asks for a key the server can see. RoundTrip generates a key
// (GenerateIdempotencyKey) for exactly the requests this says have none.
func hasKey(h http.Header) bool {
	return nonBlank(h["Idempotency-Key"]) || nonBlank(h["X-Idempotency-Key"])
}

// nonBlank reports whether any of values has a character that is not
// white space.
func nonBlank(values []string) bool {
	for _, v := range values {
		if strings.TrimSpace(v) != "" {
			return true
		}
	}
	return false
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
	// A malformed address (a port out of range, no port where one is
	// needed) stays malformed.
	var addrErr *net.AddrError
	if errors.As(err, &addrErr) {
		return permanent
	}
	// A failed lookup sent nothing. A name that does not exist will not
	// exist a second later either; other DNS failures (timeouts, a failing
	// server) may pass, and are retried even when IsTimeout and IsTemporary
	// are false, which the net package says it does not always set. The
	// error is recognised whether or not a dial error wraps it: a custom
	// DialContext may return its resolver's error as it is.
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		if dnsErr.IsNotFound && !dnsErr.Temporary() {
			return permanent
		}
		return notSent
	}
	// An HTTP/2 stream reset is what a connection reset is in HTTP/1. (The
	// resets net/http knows the server did not process, REFUSED_STREAM, it
	// retries itself.)
	var se streamError
	if errors.As(err, &se) {
		return mayBeSent
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

// streamError has the fields of net/http's HTTP/2 stream error. That type is
// unexported, but has an As method that fills any struct with the same field
// names and convertible types (net/http/h2_error.go, meant for
// golang.org/x/net/http2.StreamError), so it is recognised by type, with
// only the standard library, rather than by its message.
type streamError struct {
	StreamID uint32
	Code     uint32
	Cause    error
}

func (e streamError) Error() string { return "http2: stream error" }

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
