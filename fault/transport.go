package fault

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Transport is client-side middleware: an http.RoundTripper that injects
// its Injector's faults into the requests it passes to Base, as if the
// network or the server had failed. Put it innermost, as the Base of a
// retryhttp.Transport, so that every attempt draws its own fault:
//
//	client := &http.Client{Transport: &retryhttp.Transport{
//		Base: &fault.Transport{Injector: in},
//	}}
//
// A nil Injector injects nothing; a nil Base means http.DefaultTransport.
// Safe for concurrent use.
//
// Status, Outage and RateLimit answer without sending the request. A
// Reset sends it (the server does the work) and then fails as a
// connection reset by the peer would: before the headers, RoundTrip
// returns an *Error wrapping a *net.OpError of ECONNRESET; after them or
// mid-body, the Body's Read does. CutBody's Body ends in
// io.ErrUnexpectedEOF, as a body shorter than its Content-Length does.
// SlowFirstByte delays RoundTrip's return, SlowBody the Body's first Read,
// and Stall holds RoundTrip until the request's context ends (or the
// delay passes, then a reset); all waits end with the request's context.
type Transport struct {
	Injector *Injector
	Base     http.RoundTripper
}

var _ http.RoundTripper = (*Transport)(nil)

func (t *Transport) base() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	return http.DefaultTransport
}

// RoundTrip injects the fault Injector.Pick chooses for req, if any, and
// otherwise sends req with Base.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.Injector == nil {
		return t.base().RoundTrip(req)
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	tg := Target{Method: req.Method, Path: req.URL.Path, Host: host, Header: req.Header, Context: req.Context()}
	if tg.Method == "" {
		tg.Method = http.MethodGet
	}
	j := t.Injector.Pick(&tg)
	if j.Fault == nil {
		if j.Err != nil {
			closeBody(req)
			return nil, j.Err
		}
		return t.base().RoundTrip(req)
	}
	defer j.Done()
	f := j.Fault
	ctx := req.Context()
	switch f.Kind {
	case Status, Outage, RateLimit:
		closeBody(req)
		return respond(req, f, j.Header), nil
	case Latency:
		if err := wait(ctx, j.Delay, false); err != nil {
			closeBody(req)
			return nil, err
		}
		return t.base().RoundTrip(req)
	case Stall:
		closeBody(req)
		if err := wait(ctx, j.Delay, true); err != nil {
			return nil, err
		}
		return nil, resetError(Stall)
	}
	resp, err := t.base().RoundTrip(req)
	if err != nil {
		return nil, err
	}
	switch f.Kind {
	case Reset:
		if f.Stage == BeforeHeaders {
			drain(resp.Body)
			return nil, resetError(Reset)
		}
		left := int64(0)
		if f.Stage == MidBody {
			left = j.cut(resp.ContentLength)
		}
		resp.Body = &faultBody{rc: resp.Body, left: left, err: resetError(Reset)}
	case CutBody:
		left := j.cut(resp.ContentLength)
		if resp.ContentLength < 0 {
			// The lie, as the server side tells it.
			resp.ContentLength = left + 1
			resp.Header.Set("Content-Length", strconv.FormatInt(left+1, 10))
		}
		resp.Body = &faultBody{rc: resp.Body, left: left, err: &Error{CutBody, io.ErrUnexpectedEOF}}
	case SlowFirstByte:
		if err := wait(ctx, j.Delay, false); err != nil {
			drain(resp.Body)
			return nil, err
		}
	case SlowBody:
		resp.Body = &faultBody{rc: resp.Body, left: -1, ctx: ctx, delay: j.Delay}
	}
	return resp, nil
}

// answer returns the body of a Status, Outage or RateLimit response and
// sets its headers in hd: a line of text, or nothing for a status that
// has no body (204, 304).
func answer(f *Fault, hd http.Header) string {
	if f.Status == http.StatusNoContent || f.Status == http.StatusNotModified {
		return ""
	}
	body := "fault: injected " + f.Kind.String() + "\n"
	hd.Set("Content-Type", "text/plain; charset=utf-8")
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	return body
}

// respond builds the response of a Status, Outage or RateLimit.
func respond(req *http.Request, f *Fault, h http.Header) *http.Response {
	hd := make(http.Header, len(h)+2)
	for k, v := range h {
		hd[k] = v
	}
	body := answer(f, hd)
	return &http.Response{
		Status:        strconv.Itoa(f.Status) + " " + http.StatusText(f.Status),
		StatusCode:    f.Status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        hd,
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}

// faultBody lets left bytes of rc through (-1: all) and then fails with
// err; with a delay, its first Read waits for it first.
type faultBody struct {
	rc    io.ReadCloser
	left  int64
	err   error
	ctx   context.Context
	delay time.Duration
}

func (b *faultBody) Read(p []byte) (int, error) {
	if b.delay > 0 {
		d := b.delay
		b.delay = 0
		if err := wait(b.ctx, d, false); err != nil {
			return 0, err
		}
	}
	if b.left < 0 {
		return b.rc.Read(p)
	}
	if b.left == 0 {
		return 0, b.err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if err == io.EOF {
		err = b.err // the body was shorter than the cut: the fault still acts
	}
	return n, err
}

func (b *faultBody) Close() error { return drain(b.rc) }

// drain reads a little of rc, so that its connection can be reused, and
// closes it.
func drain(rc io.ReadCloser) error {
	io.CopyN(io.Discard, rc, 64<<10)
	return rc.Close()
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
