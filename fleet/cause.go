package fleet

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"
)

// cause names, in a few words, why Redis could not be used, for the log
// line that says the budget or breaker decides alone: what an operator
// would check first.
func cause(err error) string {
	var rerr redis.Error
	if errors.As(err, &rerr) {
		msg := rerr.Error()
		for _, c := range []struct{ prefix, cause string }{
			{"WRONGPASS", "wrong password"},
			{"ERR invalid password", "wrong password"},
			{"NOAUTH", "password required"},
			{"NOPERM", "ACL denied"},
			{"OOM", "out of memory (maxmemory reached)"},
			{"READONLY", "read-only replica"},
			{"WRONGTYPE", "wrong key type"},
			{"LOADING", "loading its data"},
			{"MASTERDOWN", "no master"},
			{"CLUSTERDOWN", "cluster down"},
			{"BUSY", "busy running a script"},
		} {
			if strings.HasPrefix(msg, c.prefix) {
				return c.cause
			}
		}
		return "error reply"
	}
	var (
		nerr     net.Error
		certErr  *tls.CertificateVerificationError
		authErr  x509.UnknownAuthorityError
		hostErr  x509.HostnameError
		recErr   tls.RecordHeaderError
		alertErr tls.AlertError
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &nerr) && nerr.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &certErr), errors.As(err, &authErr), errors.As(err, &hostErr),
		errors.As(err, &recErr), errors.As(err, &alertErr):
		return "TLS failure"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, net.ErrClosed):
		return "connection lost"
	case errors.Is(err, redis.ErrClosed):
		return "client closed"
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "unknown host"
	}
	return "error"
}

// redactor removes a client's passwords from the error texts it logs:
// Redis's own replies never quote them, but a proxy's or a future
// version's might, and a password must never reach a log.
type redactor []string

// clientSecrets returns the passwords that c sends.
func clientSecrets(c redis.UniversalClient) redactor {
	var r redactor
	add := func(pw ...string) {
		for _, p := range pw {
			if p != "" {
				r = append(r, p)
			}
		}
	}
	switch c := c.(type) {
	case *redis.Client:
		add(c.Options().Password)
	case *redis.ClusterClient:
		add(c.Options().Password)
	case *redis.Ring:
		add(c.Options().Password)
	}
	return r
}

func (r redactor) text(err error) string {
	s := err.Error()
	for _, pw := range r {
		s = strings.ReplaceAll(s, pw, "[password]")
	}
	return s
}
