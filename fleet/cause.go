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

// minRun is the shortest run of a password's characters that text masks
// where it is not the whole password: a server that does not know AUTH
// (a proxy, an old or renamed-command Redis) echoes the arguments of the
// unknown command cut at 128 characters, so a long password shows only in
// part, and an exact match would miss it. Eight characters are too many
// to appear by chance in the rest of an error text, and few enough that
// what a cut leaves is still caught.
const minRun = 8

// echoed is where Redis, and servers that copy its replies, start quoting
// the arguments of a command they do not know: an AUTH's are a password.
const echoed = ", with args beginning with:"

// text is err's text with every password removed: the arguments a server
// echoed are dropped, every occurrence of a password is "[password]", and
// so is every run of minRun or more characters that is part of one.
func (r redactor) text(err error) string {
	s := err.Error()
	if len(r) == 0 {
		return s
	}
	if i := strings.Index(s, echoed); i >= 0 {
		// The echo runs to the end of the reply: what follows in a
		// wrapped error's text is none of it, but nothing tells where
		// it ends, so all of it goes.
		s = s[:i] + ", with arguments not shown"
	}
	for _, pw := range r {
		s = strings.ReplaceAll(s, pw, "[password]")
	}
	for _, pw := range r {
		s = maskRuns(s, pw)
	}
	return s
}

// maskRuns replaces by "[password]" each run of at least minRun bytes of
// s that also appears in pw (a cut password, or a piece of one).
func maskRuns(s, pw string) string {
	if len(pw) < minRun {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		n := 0
		// Every piece of a piece of pw is in pw too: grow the run while
		// it stays one.
		for i+n < len(s) && strings.Contains(pw, s[i:i+n+1]) {
			n++
		}
		if n >= minRun {
			b.WriteString("[password]")
			i += n
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// err returns err with the text of text, still matching what err matches
// (errors.Is, errors.As): for the errors returned to the caller, who may
// print them.
func (r redactor) err(err error) error {
	if err == nil || len(r) == 0 {
		return err
	}
	return &redactedError{err: err, text: r.text(err)}
}

// redactedError is an error whose text has no password.
type redactedError struct {
	err  error
	text string
}

func (e *redactedError) Error() string { return e.text }
func (e *redactedError) Unwrap() error { return e.err }
