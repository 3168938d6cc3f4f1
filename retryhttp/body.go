package retryhttp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// DefaultMaxBufferedBody is the largest request body without GetBody that
// the Transport buffers so that it can be sent again: 1 MiB.
const DefaultMaxBufferedBody = 1 << 20

// maxDrain is how much of a discarded response body is read so that its
// connection can return to the pool; a longer body costs more to read than a
// new connection costs to open.
const maxDrain = 64 << 10

// body knows how to produce the request body for each attempt without
// copying a replayable body into memory.
type body struct {
	first    io.ReadCloser                 // the body of the first attempt; nil for none
	getBody  func() (io.ReadCloser, error) // replays it; nil if it cannot be replayed
	buf      []byte                        // the buffered body, when it had no GetBody
	tooLarge bool                          // not replayable: over the buffer limit
	handed   bool                          // first was given to the base RoundTripper
	own      bool                          // first is not the request's Body
}

// newBody prepares req's body. A body with GetBody is replayed with it; one
// without is read into memory if it is at most limit bytes (limit < 0: never),
// otherwise sent once. It reads req.Body only in the latter case, and then
// returns an error only if reading failed, after closing req.Body.
func newBody(req *http.Request, limit int64, retries bool) (body, error) {
	rb := req.Body
	switch {
	case rb == nil || rb == http.NoBody:
		return body{handed: true, getBody: noBody}, nil
	case req.GetBody != nil:
		return body{first: rb, getBody: req.GetBody}, nil
	case !retries:
		return body{first: rb}, nil
	case limit < 0 || req.ContentLength > limit:
		return body{first: rb, tooLarge: true}, nil
	}
	// Read one byte more than the limit to learn whether the body fits
	// (saturating: a limit of MaxInt64 means "any size").
	probe := limit + 1
	if probe < 0 {
		probe = limit
	}
	size := probe
	if req.ContentLength > 0 && req.ContentLength < probe {
		size = req.ContentLength + 1
	}
	w := bytes.NewBuffer(make([]byte, 0, min(size, 64<<10)))
	_, err := w.ReadFrom(io.LimitReader(rb, probe))
	if err != nil {
		rb.Close()
		return body{handed: true}, fmt.Errorf("retryhttp: reading request body: %w", err)
	}
	if int64(w.Len()) > limit {
		// Too large to keep: send what was read, then the rest, once.
		return body{first: &prefixed{io.MultiReader(bytes.NewReader(w.Bytes()), rb), rb}, tooLarge: true, own: true}, nil
	}
	rb.Close()
	b := body{buf: w.Bytes(), own: true}
	b.first, _ = b.replayBuffer()
	b.getBody = b.replayBuffer
	return b, nil
}

func noBody() (io.ReadCloser, error) { return http.NoBody, nil }

func (b *body) replayBuffer() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(b.buf)), nil
}

// empty reports whether the request has no body.
func (b *body) empty() bool { return b.first == nil && b.buf == nil }

// replayable reports whether the body can be sent again.
func (b *body) replayable() bool { return b.getBody != nil }

// next returns the body for attempt n (from 1).
func (b *body) next(n int) (io.ReadCloser, error) {
	if n == 1 {
		b.handed = true
		return b.first, nil
	}
	if b.getBody == nil {
		return nil, errNotReplayableBody
	}
	rc, err := b.getBody()
	if err != nil {
		return nil, fmt.Errorf("retryhttp: GetBody: %w", err)
	}
	return rc, nil
}

// close closes the first body if no attempt took it: the RoundTripper
// contract makes the transport responsible for closing it, even on error.
func (b *body) close() {
	if !b.handed && b.first != nil {
		b.handed = true
		b.first.Close()
	}
}

var errNotReplayableBody = errors.New("retryhttp: request body cannot be replayed")

// prefixed reads the buffered start of a body followed by the rest, and
// closes the original.
type prefixed struct {
	io.Reader
	c io.Closer
}

func (p *prefixed) Close() error { return p.c.Close() }

// drain reads up to maxDrain bytes of a response body that will not be
// returned and closes it, so that an HTTP/1 connection can be reused.
func drain(resp *http.Response) {
	if resp.ContentLength <= maxDrain { // -1, unknown, is worth a try too
		_, _ = io.CopyN(io.Discard, resp.Body, maxDrain)
	}
	resp.Body.Close()
}
