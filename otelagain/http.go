package otelagain

import (
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Transport returns a RoundTripper that sends requests through a copy of
// rt, instrumented under name:
//   - each request is one call of the again.retry.* metrics (name is the
//     again.retry.name attribute), each wait an again.retry.wait.duration;
//   - rt.Budget, if set, is observed as Budget(name, rt.Budget) would;
//   - rt.Breakers, if set, is instrumented as Group(name, rt.Breakers)
//     would (which sets its Configure: give the Group before its first
//     use);
//   - rt.Hedge, if set, is instrumented as Hedger(name, rt.Hedge) would
//     (which sets its OnHedge: give the Hedger before its first use), so
//     that its hedges count in again.hedge.sent and again.hedge.won;
//     a Hedger already given to Hedger is not counted twice;
//   - each physical attempt is a CLIENT span, child of the span in the
//     request's context, as the OpenTelemetry HTTP conventions ask: see
//     the package doc for its attributes, its events and its end.
//
// rt itself is not changed, and its hooks (OnRetry, OnGiveUp, OnSuccess)
// are still called, after this package's: set them before calling
// Transport. The attempts go to rt.Base (http.DefaultTransport if nil),
// and the hedges to rt.HedgeBase when it is set, each in its span. Do not
// make rt.Base or rt.HedgeBase an otelhttp.Transport: every attempt would
// then have two CLIENT spans (see the package doc for how to compose with
// otelhttp).
// The returned RoundTripper is safe for concurrent use.
func (t *Telemetry) Transport(name string, rt *retryhttp.Transport) http.RoundTripper {
	cp := *rt
	h := &httpTransport{t: t, m: t.retryMetrics(name), rt: &cp}
	base := cp.Base
	if base == nil {
		base = http.DefaultTransport
	}
	at := &attemptTransport{t: t, next: base}
	cp.Base = at
	// Hedges that go through HedgeBase are physical attempts too: without
	// their own span they would reach the server untraced.
	switch {
	case cp.HedgeBase == nil:
	case sameRoundTripper(cp.HedgeBase, base):
		// One wrapper for both keeps them the same value, which
		// retryhttp's CloseIdleConnections tells apart from two pools.
		cp.HedgeBase = at
	default:
		cp.HedgeBase = &attemptTransport{t: t, next: cp.HedgeBase}
	}
	if cp.Budget != nil {
		cp.Budget = t.Budget(name, cp.Budget)
	}
	t.Group(name, cp.Breakers)
	t.Throttles(name, cp.Throttles)
	t.Limits(name, cp.Limits)
	t.Hedger(name, cp.Hedge)
	onRetry, onGiveUp, onSuccess := cp.OnRetry, cp.OnGiveUp, cp.OnSuccess
	cp.OnRetry = func(e retryhttp.Event) {
		h.retrying(e)
		if onRetry != nil {
			onRetry(e)
		}
	}
	cp.OnGiveUp = func(e retryhttp.Event) {
		if st := stateOf(e.Request.Context()); st != nil {
			st.setEnd(e.Attempt, e.Reason)
		}
		if onGiveUp != nil {
			onGiveUp(e)
		}
	}
	cp.OnSuccess = func(e retryhttp.Event) {
		if st := stateOf(e.Request.Context()); st != nil {
			st.setEnd(e.Attempt, nil)
		}
		if onSuccess != nil {
			onSuccess(e)
		}
	}
	return h
}

// httpTransport is the RoundTripper Transport returns: it gives each
// request the state its attempts share, and records the call's end.
type httpTransport struct {
	t  *Telemetry
	m  *retryMetrics
	rt *retryhttp.Transport
}

func (h *httpTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	st := &callState{ctx: req.Context(), sentBefore: sentBefore(req)}
	ctx := context.WithValue(req.Context(), stateKey{}, st)
	resp, err := h.rt.RoundTrip(req.WithContext(ctx))
	attempts, r, why := st.outcome(err)
	if attempts > 0 || r != reasonOther {
		h.m.end(ctx, attempts, r)
	}
	st.finish(r, why)
	return resp, err
}

// CloseIdleConnections passes on to the retryhttp.Transport, and so to
// its Base and HedgeBase.
func (h *httpTransport) CloseIdleConnections() { h.rt.CloseIdleConnections() }

// retrying records a wait and adds it, as an event, to the span of the
// attempt that failed, which then ends.
func (h *httpTransport) retrying(e retryhttp.Event) {
	ctx := e.Request.Context()
	h.m.wait(ctx, e.Delay)
	st := stateOf(ctx)
	if st == nil || retry.IsRejected(e.Err) {
		return // a breaker's rejection sent nothing: no span to tell
	}
	attrs := []attribute.KeyValue{WaitDurationKey.Float64(e.Delay.Seconds())}
	if e.HintHeader != "" {
		attrs = append(attrs, WaitHintHeaderKey.String(e.HintHeader))
	}
	if e.Class != "" {
		attrs = append(attrs, WaitClassKey.String(e.Class))
	}
	st.retrying(trace.WithAttributes(attrs...))
}

// Attribute keys of the wait event (WaitEventName) of an attempt's span.
const (
	// WaitEventName is the name of the event on the span of an attempt
	// that is retried: the wait that follows.
	WaitEventName = "again.retry.wait"
	// WaitDurationKey is the wait, in seconds.
	WaitDurationKey = attribute.Key("again.retry.wait.duration")
	// WaitHintHeaderKey names the response header that asked for the wait
	// (Retry-After, RateLimit, ...), when one did; the wait itself, which
	// is never shorter than the policy's first delay, may be longer than
	// it asked.
	WaitHintHeaderKey = attribute.Key("again.retry.hint_header")
	// WaitClassKey is the name of the class whose schedule set the wait
	// (retryhttp.Event.Class; see Transport.Classes), when a class
	// matched the failure: one of the caller's own few names, never a
	// value drawn from the request.
	WaitClassKey = attribute.Key("again.retry.class")
)

type stateKey struct{}

func stateOf(ctx context.Context) *callState {
	st, _ := ctx.Value(stateKey{}).(*callState)
	return st
}

// callState is what the attempts of one request share: their count, the
// span of the latest one to return (which gets the wait event or the
// call's end), the spans of failed attempts that end once their fate is
// known, and the end the hooks reported. Attempts may run at once
// (hedges), so it has a lock.
type callState struct {
	ctx context.Context // the caller's
	// sentBefore is how many times the request was sent before this
	// call: by the calls of the redirects that led to it.
	sentBefore int
	mu         sync.Mutex
	started    int          // physical attempts started
	last       trace.Span   // the latest attempt to return, nil once told its fate
	held       []trace.Span // failed attempts' spans, not ended yet
	ended      bool         // a hook reported the end
	attempts   int          // the attempts the hook reported
	reason     error        // its reason (OnGiveUp), nil for OnSuccess
}

// sentBefore returns how many times req was sent before, as far as its
// redirects tell: http.Client sets Response on the request that follows a
// redirect, and the conventions count a redirect as a resend ("for any
// reason, including redirects"). The response's Request is the attempt
// that got it, whose context holds its call's state when it went through
// this package's Transport: all the attempts of that call count then,
// retries and hedges included; a hop that did not counts as one send.
func sentBefore(req *http.Request) int {
	n := 0
	for r := req; r.Response != nil; {
		prev := r.Response.Request
		if prev == nil {
			return n + 1
		}
		if ps := stateOf(prev.Context()); ps != nil {
			return n + ps.sent()
		}
		n++
		r = prev
	}
	return n
}

// sent returns how many times the call sent its request, counting those
// before it (sentBefore).
func (st *callState) sent() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.sentBefore + max(st.started, 1)
}

// begin counts an attempt and returns its number, from 1.
func (st *callState) begin() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.started++
	return st.started
}

// attempted keeps the span of the attempt that just returned; held says
// that nothing else will end it (a failure, without a body to close).
func (st *callState) attempted(span trace.Span, held bool) {
	st.mu.Lock()
	st.last = span
	if held {
		st.held = append(st.held, span)
	}
	st.mu.Unlock()
}

// endHeld ends the held spans. Called with st.mu held.
func (st *callState) endHeld() {
	for _, sp := range st.held {
		sp.End()
	}
	st.held = st.held[:0]
}

func (st *callState) retrying(opt trace.EventOption) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.last != nil {
		st.last.AddEvent(WaitEventName, opt)
	}
	st.last = nil
	st.endHeld()
}

func (st *callState) setEnd(attempts int, reason error) {
	st.mu.Lock()
	st.ended, st.attempts, st.reason = true, attempts, reason
	st.mu.Unlock()
}

// outcome says how the call ended: its attempts, its reason, and the
// words for the final span's status ("" for a success).
func (st *callState) outcome(err error) (int, reason, string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case err != nil:
		var re *retry.Error
		if errors.As(err, &re) {
			return re.Attempts, reasonOf(re), err.Error()
		}
		// Not retrying's error: the request itself was refused (an
		// invalid policy or budget, a body that could not be read).
		return st.started, reasonOther, err.Error()
	case st.ended && st.reason != nil:
		// A response returned once retrying stopped.
		r := reasonOf(&retry.Error{Reason: st.reason})
		if errors.Is(st.reason, retryhttp.ErrNotReplayable) {
			r = reasonNotReplayable
		}
		return st.attempts, r, st.reason.Error()
	case st.ended:
		return st.attempts, reasonSuccess, ""
	}
	return max(st.started, 1), reasonSuccess, ""
}

// finish gives the last attempt's span the call's end: for a call that
// gave up, an error status that says why.
func (st *callState) finish(r reason, why string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.last != nil && r != reasonSuccess {
		st.last.SetAttributes(RetryReasonKey.String(reasonNames[r]))
		st.last.SetStatus(codes.Error, why)
	}
	st.last = nil
	st.endHeld()
}

// sameRoundTripper reports whether a and b are the same value, without
// the panic of == on values that cannot be compared (a func type that
// implements RoundTripper): those count as different.
func sameRoundTripper(a, b http.RoundTripper) bool {
	return reflect.ValueOf(a).Comparable() && a == b
}

// attemptTransport sends one physical attempt inside its CLIENT span.
type attemptTransport struct {
	t    *Telemetry
	next http.RoundTripper
}

func (a *attemptTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	st := stateOf(r.Context())
	n := 1
	if st != nil {
		n = st.sentBefore + st.begin()
	}
	method, original := methodOf(r)
	attrs := make([]attribute.KeyValue, 0, 7)
	attrs = append(attrs, semconv.HTTPRequestMethodKey.String(method), semconv.URLFull(redactedURL(r)))
	if original != "" {
		attrs = append(attrs, semconv.HTTPRequestMethodOriginal(original))
	}
	if host, port := hostPort(r); host != "" {
		attrs = append(attrs, semconv.ServerAddress(host))
		if port > 0 {
			attrs = append(attrs, semconv.ServerPort(port))
		}
	}
	if n > 1 {
		attrs = append(attrs, semconv.HTTPRequestResendCount(n-1))
	}
	name := method
	if original != "" {
		name = "HTTP"
	}
	ctx, span := a.t.tracer.Start(r.Context(), name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	r = r.Clone(ctx) // the propagator writes the header: a copy, as RoundTrippers must not change requests
	a.t.prop.Inject(ctx, propagation.HeaderCarrier(r.Header))
	resp, err := a.next.RoundTrip(r)
	if err != nil {
		if st != nil && st.ctx.Err() == nil && errors.Is(context.Cause(ctx), context.Canceled) {
			// Canceled by the Transport, not the caller: a hedge that
			// lost. Its fate is known now.
			span.SetAttributes(semconv.ErrorTypeKey.String("canceled"))
			span.SetStatus(codes.Error, "canceled: another attempt answered first")
			span.End()
			return resp, err
		}
		span.SetAttributes(semconv.ErrorType(err))
		span.SetStatus(codes.Error, err.Error())
		if st == nil {
			span.End()
		} else {
			st.attempted(span, true)
		}
		return resp, err
	}
	span.SetAttributes(semconv.HTTPResponseStatusCode(resp.StatusCode))
	if resp.StatusCode >= 400 {
		span.SetAttributes(semconv.ErrorTypeKey.String(strconv.Itoa(resp.StatusCode)))
		span.SetStatus(codes.Error, "")
	}
	if resp.Body == nil {
		resp.Body = http.NoBody
	}
	// As otelhttp's, the span ends when the body is read to its end or
	// closed: the time of the attempt includes its body.
	resp.Body = endingBody(resp.Body, span)
	if st != nil {
		st.attempted(span, false)
	}
	return resp, nil
}

// CloseIdleConnections passes on to the attempts' RoundTripper.
func (a *attemptTransport) CloseIdleConnections() {
	if c, ok := a.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// spanBody ends its span once read to the end or closed.
type spanBody struct {
	rc   io.ReadCloser
	span trace.Span
	once sync.Once
}

func endingBody(rc io.ReadCloser, span trace.Span) io.ReadCloser {
	b := &spanBody{rc: rc, span: span}
	if w, ok := rc.(io.ReadWriteCloser); ok {
		// A 101 Switching Protocols body is writable; keep it so.
		return &spanRWBody{b, w}
	}
	return b
}

func (b *spanBody) end() { b.once.Do(func() { b.span.End() }) }

func (b *spanBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	switch {
	case err == io.EOF:
		b.end()
	case err != nil:
		b.span.SetAttributes(semconv.ErrorType(err))
		b.span.SetStatus(codes.Error, err.Error())
		b.end()
	}
	return n, err
}

func (b *spanBody) Close() error {
	err := b.rc.Close()
	b.end()
	return err
}

type spanRWBody struct {
	*spanBody
	w io.Writer
}

func (b *spanRWBody) Write(p []byte) (int, error) { return b.w.Write(p) }

// methodOf returns the request's method as the conventions name it, and
// the original when it is not one of the known methods (then _OTHER).
func methodOf(r *http.Request) (method, original string) {
	m := r.Method
	if m == "" {
		return http.MethodGet, ""
	}
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodTrace, http.MethodConnect, "QUERY":
		return m, ""
	}
	return "_OTHER", m
}

func hostPort(r *http.Request) (string, int) {
	if r.URL == nil {
		return "", 0
	}
	host := r.URL.Hostname()
	port, _ := strconv.Atoi(r.URL.Port())
	if port == 0 {
		switch r.URL.Scheme {
		case "http":
			port = 80
		case "https":
			port = 443
		}
	}
	return host, port
}

// redactedURL is url.full without what must not be recorded: the
// credentials of userinfo and every query value (which often carry
// tokens), keeping the query's keys, and no fragment.
func redactedURL(r *http.Request) string {
	u := r.URL
	if u == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(u.Scheme)
	b.WriteString("://")
	if u.User != nil {
		b.WriteString("REDACTED:REDACTED@")
	}
	b.WriteString(u.Host)
	b.WriteString(u.EscapedPath())
	if u.RawQuery != "" {
		b.WriteByte('?')
		for i, kv := range strings.Split(u.RawQuery, "&") {
			if i > 0 {
				b.WriteByte('&')
			}
			k, _, ok := strings.Cut(kv, "=")
			if !ok {
				if kv != "" {
					b.WriteString("REDACTED") // a bare item is all value, as far as can be told
				}
				continue
			}
			b.WriteString(k)
			b.WriteString("=REDACTED")
		}
	}
	return b.String()
}
