package fault

import (
	"io"
	"net"
	"net/http"
	"strconv"
)

// Handler is server-side middleware: it injects its Injector's faults into
// the requests it passes to Next. A nil Injector injects nothing; Next must
// not be nil. Safe for concurrent use.
//
// A Reset breaks the connection with a TCP reset when the connection can
// be hijacked (HTTP/1), and otherwise (HTTP/2) aborts the handler with
// http.ErrAbortHandler, which resets the stream. Reset, CutBody and the
// slow kinds let Next run: the server does the work, the client does not
// get the answer; Status, Outage, RateLimit and Stall do not call Next.
type Handler struct {
	Injector *Injector
	Next     http.Handler
}

var _ http.Handler = (*Handler)(nil)

// ServeHTTP injects the fault Injector.Pick chooses, if any, else calls
// Next.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.Injector == nil {
		h.Next.ServeHTTP(w, r)
		return
	}
	t := Target{Method: r.Method, Path: r.URL.Path, Host: r.Host, Header: r.Header, Context: r.Context()}
	j := h.Injector.Pick(&t)
	if j.Fault == nil {
		if j.Err != nil {
			http.Error(w, j.Err.Error(), http.StatusInternalServerError)
			return
		}
		h.Next.ServeHTTP(w, r)
		return
	}
	defer j.Done()
	f := j.Fault
	switch f.Kind {
	case Status, Outage, RateLimit:
		hd := w.Header()
		for k, v := range j.Header {
			hd[k] = v
		}
		body := answer(f, hd)
		w.WriteHeader(f.Status)
		io.WriteString(w, body)
		return
	case Latency:
		if wait(r.Context(), j.Delay, false) != nil {
			return
		}
		h.Next.ServeHTTP(w, r)
		return
	case Stall:
		wait(r.Context(), j.Delay, true)
		abort(w, false)
		return
	}
	fw := &faultWriter{w: w, j: j, ctx: r}
	if f.Kind == Reset && f.Stage == BeforeHeaders {
		fw.discard = true
	}
	defer fw.finish()
	h.Next.ServeHTTP(fw, r)
}

// faultWriter is the ResponseWriter of the faults that act on the
// response Next writes.
type faultWriter struct {
	w       http.ResponseWriter
	j       Injection
	ctx     *http.Request
	discard bool  // write nothing: the fault has acted or will act on its own
	aborted bool  // the connection is broken
	wrote   bool  // the headers were passed on
	left    int64 // the body bytes still to pass, for MidBody and CutBody
	hdr     http.Header
}

func (fw *faultWriter) Header() http.Header {
	if fw.discard && !fw.wrote {
		if fw.hdr == nil {
			fw.hdr = http.Header{}
		}
		return fw.hdr
	}
	return fw.w.Header()
}

func (fw *faultWriter) WriteHeader(code int) {
	if fw.wrote || fw.discard {
		return
	}
	f := fw.j.Fault
	switch {
	case f.Kind == SlowFirstByte:
		if wait(fw.ctx.Context(), fw.j.Delay, false) != nil {
			fw.discard = true
			return
		}
	case f.Kind == CutBody || f.Kind == Reset && f.Stage == MidBody:
		n, err := strconv.ParseInt(fw.w.Header().Get("Content-Length"), 10, 64)
		if err != nil || n <= 0 {
			n = -1 // unknown, or nothing to cut: a length of its own
		}
		fw.left = fw.j.cut(n)
		if f.Kind == CutBody && n < 0 {
			// The lie: a length one byte longer than what will be sent.
			fw.w.Header().Set("Content-Length", strconv.FormatInt(fw.left+1, 10))
		}
	}
	fw.wrote = true
	fw.w.WriteHeader(code)
	if f.Kind == Reset && f.Stage == AfterHeaders {
		fw.stop()
	}
}

func (fw *faultWriter) Write(p []byte) (int, error) {
	if !fw.wrote {
		fw.WriteHeader(http.StatusOK)
	}
	if fw.discard {
		return 0, errStopped
	}
	f := fw.j.Fault
	switch f.Kind {
	case SlowBody:
		if fw.j.Delay > 0 {
			flush(fw.w)
			d := fw.j.Delay
			fw.j.Delay = 0
			if wait(fw.ctx.Context(), d, false) != nil {
				fw.discard = true
				return 0, fw.ctx.Context().Err()
			}
		}
	case CutBody, Reset:
		if int64(len(p)) >= fw.left {
			n, _ := fw.w.Write(p[:fw.left])
			fw.left = 0
			fw.discard = true
			if f.Kind == Reset {
				fw.stop()
			} else {
				// On the wire now: Next may abort on errStopped (as
				// httputil.ReverseProxy does, with ErrAbortHandler),
				// and the server then drops what it buffered.
				flush(fw.w)
			}
			return n, errStopped
		}
		fw.left -= int64(len(p))
	}
	return fw.w.Write(p)
}

// finish completes the fault once Next has returned: a Reset that has
// not acted yet acts now, and a CutBody without a body still lies.
func (fw *faultWriter) finish() {
	f := fw.j.Fault
	switch {
	case f.Kind == Reset && !fw.aborted:
		if f.Stage != BeforeHeaders && !fw.wrote {
			fw.WriteHeader(http.StatusOK)
		}
		if !fw.aborted {
			fw.stop()
		}
	case f.Kind == CutBody && !fw.wrote:
		fw.WriteHeader(http.StatusOK)
	}
}

// stop breaks the connection and discards what Next writes after.
func (fw *faultWriter) stop() {
	fw.discard, fw.aborted = true, true
	abort(fw.w, fw.wrote)
}

// Flush passes a flush on, except once the fault has acted.
func (fw *faultWriter) Flush() {
	if !fw.discard && fw.wrote {
		flush(fw.w)
	}
}

// Unwrap lets http.ResponseController reach the server's writer.
func (fw *faultWriter) Unwrap() http.ResponseWriter { return fw.w }

func flush(w http.ResponseWriter) { http.NewResponseController(w).Flush() }

// abort breaks the connection of w: a TCP reset if it can be hijacked,
// else (HTTP/2) an aborted handler, which resets the stream. Headers
// written (wrote) are flushed first, so that the client gets them.
func abort(w http.ResponseWriter, wrote bool) {
	if wrote {
		flush(w)
	}
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0) // Close sends a reset rather than a FIN
	}
	conn.Close()
}
