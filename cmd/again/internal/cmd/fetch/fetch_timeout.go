package fetch

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/again-go/again/retryhttp"
)

// boundBodies makes tr's AttemptTimeout (--attempt-timeout) bound the body of each
// response, from the start of the attempt that got it, where tr.ReadBody
// does not read the body within its attempt: with --hedge-after, where the
// winner's body is written after RoundTrip, and with --repeat. The
// Transport itself bounds only the wait for the headers then. tr.Base must
// be set.
func boundBodies(tr *retryhttp.Transport) {
	if tr.AttemptTimeout > 0 {
		tr.Base = &bodyTimeout{base: tr.Base, limit: tr.AttemptTimeout}
	}
}

// bodyTimeout is a RoundTripper whose responses' bodies end with a
// *bodyTimeoutError once limit has passed since the request was sent.
// Each copy of a hedged attempt goes through it on its own, as each has
// its own limit in the Transport.
type bodyTimeout struct {
	base  http.RoundTripper
	limit time.Duration
}

func (b *bodyTimeout) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	// Until the headers arrive, the Transport's own limit, which started
	// first, ends the attempt; this one is armed only for the body.
	ctx, cancel := context.WithCancelCause(req.Context())
	resp, err := b.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel(nil)
		return resp, err
	}
	body := &timedBody{ReadCloser: resp.Body, limit: b.limit}
	body.timer = time.AfterFunc(b.limit-time.Since(start), func() {
		body.expired.Store(true)
		// Cancelling the request's context makes net/http close the
		// connection, which ends a Read that waits.
		cancel(&bodyTimeoutError{b.limit})
	})
	body.release = func() {
		body.timer.Stop()
		cancel(nil)
	}
	resp.Body = body
	if rw, ok := body.ReadCloser.(io.ReadWriteCloser); ok {
		// A 101 Switching Protocols body is writable; keep it so.
		resp.Body = &timedRWBody{body, rw}
	}
	return resp, nil
}

func (b *bodyTimeout) CloseIdleConnections() {
	if c, ok := b.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// timedBody is a response body whose reads fail with a *bodyTimeoutError
// once its timer has expired.
type timedBody struct {
	io.ReadCloser
	limit   time.Duration
	timer   *time.Timer
	expired atomic.Bool
	release func()
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		b.release()
	case err != nil && b.expired.Load():
		err = &bodyTimeoutError{b.limit}
	}
	return n, err
}

func (b *timedBody) Close() error {
	err := b.ReadCloser.Close()
	b.release()
	return err
}

type timedRWBody struct {
	*timedBody
	w io.Writer
}

func (b *timedRWBody) Write(p []byte) (int, error) { return b.w.Write(p) }

// bodyTimeoutError is a response body that --attempt-timeout cut off.
type bodyTimeoutError struct{ limit time.Duration }

func (e *bodyTimeoutError) Error() string {
	return "timed out after --attempt-timeout " + e.limit.String()
}
func (e *bodyTimeoutError) Timeout() bool   { return true }
func (e *bodyTimeoutError) Temporary() bool { return true }
