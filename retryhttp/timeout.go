package retryhttp

import (
	"context"
	"io"
	"net/http"
	"time"
)

// limit enforces AttemptTimeout on one attempt: the timer cancels the
// attempt's context with a *timeoutError as its cause.
type limit struct {
	timer  *time.Timer
	cancel context.CancelCauseFunc
}

// newLimit returns the context of an attempt that may last d, and its limit.
func newLimit(ctx context.Context, d time.Duration) (context.Context, *limit) {
	lim := new(limit)
	actx, cancel := context.WithCancelCause(ctx)
	lim.cancel = cancel
	lim.timer = time.AfterFunc(d, func() { cancel(&timeoutError{d}) })
	return actx, lim
}

// release stops the timer and frees the attempt's context.
func (l *limit) release() {
	l.timer.Stop()
	l.cancel(nil)
}

// timeoutError is the error of an attempt that exceeded AttemptTimeout. It
// is a net.Error with Timeout() true, like net/http's own timeouts.
type timeoutError struct{ d time.Duration }

func (e *timeoutError) Error() string        { return "retryhttp: attempt timed out after " + e.d.String() }
func (e *timeoutError) Timeout() bool        { return true }
func (e *timeoutError) Temporary() bool      { return true }
func (e *timeoutError) Is(target error) bool { return target == ErrAttemptTimeout }

// finalResponse returns resp as it is, except that with an AttemptTimeout
// its body releases the attempt's context when closed.
func finalResponse(resp *http.Response, lim *limit) *http.Response {
	if lim != nil {
		lim.timer.Stop()
		resp.Body = newReleasingBody(resp.Body, lim.release)
	}
	return resp
}

// releasingBody is a response body that releases its attempt's context once
// closed or read to the end.
type releasingBody struct {
	io.ReadCloser
	release context.CancelFunc
}

func newReleasingBody(rc io.ReadCloser, release context.CancelFunc) io.ReadCloser {
	b := &releasingBody{rc, release}
	if w, ok := rc.(io.ReadWriteCloser); ok {
		// A 101 Switching Protocols body is writable; keep it so.
		return &releasingRWBody{b, w}
	}
	return b
}

func (b *releasingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.release()
	}
	return n, err
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.release()
	return err
}

type releasingRWBody struct {
	*releasingBody
	w io.Writer
}

func (b *releasingRWBody) Write(p []byte) (int, error) { return b.w.Write(p) }
