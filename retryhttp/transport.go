package retryhttp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
)

// Transport is an http.RoundTripper that retries failed requests with
// exponential backoff and jitter, safely: it retries only what the server
// cannot have acted on twice, replays bodies without copying them, honours
// Retry-After, and returns the final response untouched.
//
// The zero Transport is ready to use: it sends through http.DefaultTransport
// with backoff.Default() (500 ms, ×2, capped at 10 s, 3 retries, full
// jitter), retries 429, 502, 503 and 504, waits at most 1 minute for a
// Retry-After, buffers bodies without GetBody up to 1 MiB, and adds an
// Idempotency-Key to POST and PATCH requests. Most callers set only Policy:
//
//	client := &http.Client{Transport: &retryhttp.Transport{Policy: p}}
//
// What is retried:
//   - Network failures (connection refused or reset, an HTTP/2 stream
//     reset, EOF before a response, a timeout of one attempt, including
//     net/http's TLS handshake and response header timeouts, a failed DNS
//     lookup). Not the caller's own
//     context ending, a host name that does not exist (DNS "no such host"),
//     TLS certificate errors and TLS alerts, redirect-policy errors,
//     malformed URLs, nor any error the transport does not recognise as a
//     network failure: retrying those only repeats them.
//   - Responses whose status is in RetryStatuses.
//   - Only requests that can be repeated safely: GET, HEAD, OPTIONS, TRACE,
//     PUT and DELETE, and any request with an Idempotency-Key (or
//     X-Idempotency-Key) header. A request whose connection could not be
//     established at all (a dial error, a failed DNS lookup) is retried
//     whatever its method, because the server saw nothing.
//
// The caller's request is never modified: an attempt that needs another
// body, header or context sends a shallow copy (the first attempt of a
// request that needs none sends the request itself). The first attempt
// sends the caller's body; later ones get a fresh body from GetBody (which http.NewRequest sets for bytes.Buffer,
// bytes.Reader and strings.Reader). A body without GetBody is read into
// memory first if it is at most MaxBufferedBody bytes; a larger one is
// streamed once and the request is not retried (OnGiveUp and the log say
// so, with ErrNotReplayable). The request body is always closed, even on
// error.
//
// A response that will be retried is drained (up to 64 KiB, and within
// AttemptTimeout if set) and closed so that its connection is reused; the final response, success or not, is
// returned with a nil error and its body unread. When retrying stops on an
// error, RoundTrip returns a *retry.Error that says why (errors.Is with
// retry.ErrExhausted, retry.ErrPermanent, ...), how many attempts ran, and
// wraps the last attempt's error.
//
// Waiting follows the retry package: the schedule of Policy, or exactly the
// server's Retry-After (or IETF RateLimit reset) when it sent one; no wait
// that would end after the request context's deadline is started, and a
// Retry-After longer than MaxRetryAfter or past that deadline ends retrying
// at once, returning that response unchanged.
//
// Set the fields before first use and do not change them afterwards. A
// Transport is safe for concurrent use by multiple goroutines; the hooks
// run on the goroutine that called RoundTrip (the http.Client's caller).
// RoundTrip blocks during the waits and starts no goroutine of its own
// (AttemptTimeout uses a timer, whose function runs on the runtime's).
type Transport struct {
	// Base sends each attempt. Nil means http.DefaultTransport. Its
	// connection pool is used as is: the Transport never closes its
	// connections on its own (only a caller's CloseIdleConnections is
	// passed on).
	Base http.RoundTripper

	// Policy is the retry schedule. The zero Policy means backoff.Default();
	// any other value is used as is (so Retries 0 with another field set
	// disables retrying). An invalid Policy makes every RoundTrip fail with
	// its *backoff.FieldError.
	Policy backoff.Policy

	// RetryStatuses lists the response statuses that are retried. Nil means
	// 429, 502, 503 and 504 (DefaultRetryStatuses); an empty non-nil slice
	// retries no status.
	RetryStatuses []int

	// MaxRetryAfter is the longest Retry-After the Transport waits for; a
	// longer one ends retrying and the response is returned. Zero means 1
	// minute (retry.DefaultMaxRetryAfter); a negative value honours no
	// hint: a response carrying one is returned at once.
	MaxRetryAfter time.Duration

	// AttemptTimeout bounds each attempt from sending the request until its
	// response headers arrive (and the draining of a response that is
	// retried); an attempt that times out is retried like a network failure
	// (ErrAttemptTimeout). It does not bound reading the final response's
	// body: use the request's context for that. Zero means no limit: then a
	// retried response whose body stalls is drained until the request's
	// context ends, so set a limit against servers that may do that. With a
	// limit, the final response's Body is wrapped so that closing it
	// releases the attempt's context.
	AttemptTimeout time.Duration

	// MaxBufferedBody is the largest request body without GetBody that is
	// read into memory so that it can be replayed. Zero means 1 MiB
	// (DefaultMaxBufferedBody); a negative value never buffers, so such
	// bodies are sent once.
	MaxBufferedBody int64

	// NoIdempotencyKey stops the Transport adding an Idempotency-Key to
	// POST and PATCH requests that lack one; such requests are then not
	// retried, except after a dial error. By default (false) each such
	// request gets a fresh random key (NewIdempotencyKey), the same on all
	// its attempts. A key the caller set is always kept as is.
	NoIdempotencyKey bool

	// Budget, if not nil, is a retry budget shared with other calls (see
	// retry.Budget and retry.TokenBucket): when it refuses a retry, the
	// failure is returned without retry (retry.ErrBudget).
	Budget retry.Budget

	// OnRetry, if not nil, is called after each failed attempt that will be
	// retried, before the wait. The Event's Response, if any, may be
	// inspected but not retained: its body is drained and closed when the
	// hook returns.
	OnRetry func(Event)

	// OnGiveUp, if not nil, is called once when a request's last attempt
	// failed (a retryable status or a network failure) and it is not
	// retried, with the reason in Event.Reason. Event.Response, if any, is
	// the response RoundTrip is about to return; do not read its body.
	OnGiveUp func(Event)

	// Logger, if not nil, receives one Warn record per retry
	// ("retryhttp: retrying") and per give-up ("retryhttp: giving up") with
	// the method, the URL without userinfo or query values, the status or
	// error, the attempt, the maximum attempts and the delay or reason.
	// Headers and bodies are never logged.
	Logger *slog.Logger
}

var _ http.RoundTripper = (*Transport)(nil)

// DefaultRetryStatuses returns the statuses retried when RetryStatuses is
// nil: 429 Too Many Requests, 502 Bad Gateway, 503 Service Unavailable and
// 504 Gateway Timeout. Each call returns a new slice.
func DefaultRetryStatuses() []int {
	return []int{http.StatusTooManyRequests, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout}
}

// Event describes a failed attempt, for the OnRetry and OnGiveUp hooks.
type Event struct {
	// Request is the caller's request. Do not modify it.
	Request *http.Request
	// Attempt is the number of the attempt that failed, from 1. In OnRetry
	// it is also the resend count of the retry that follows (the
	// OpenTelemetry attribute http.request.resend_count).
	Attempt int
	// MaxAttempts is the most attempts the policy allows (Retries+1).
	MaxAttempts int
	// Response is the failed attempt's response, nil after a network
	// failure.
	Response *http.Response
	// Err is the failed attempt's error, nil when there is a Response.
	Err error
	// Delay is the wait before the next attempt (OnRetry only).
	Delay time.Duration
	// RetryAfter reports whether Delay, or in OnGiveUp the hint that was
	// refused, came from the server's Retry-After or RateLimit header.
	RetryAfter bool
	// Hint is the server's requested wait when RetryAfter is true.
	Hint time.Duration
	// Reason is why retrying stopped (OnGiveUp only): retry.ErrExhausted,
	// retry.ErrRetryAfterTooLong, retry.ErrDeadline, retry.ErrBudget,
	// retry.ErrCanceled, or an error matching ErrNotReplayable (test it with
	// errors.Is) whose message says what made the request unsafe to replay.
	Reason error
}

// ErrNotReplayable is the reason a failed request was not retried because
// sending it again could repeat its effect or its body cannot be sent again:
// a POST or PATCH without Idempotency-Key after its request may have reached
// the server, or a body without GetBody larger than MaxBufferedBody. The
// error RoundTrip returns then matches it with errors.Is.
var ErrNotReplayable = errors.New("retryhttp: request cannot be safely replayed")

// ErrBodyTooLarge narrows ErrNotReplayable: the request body had no GetBody
// and was larger than MaxBufferedBody, so it could be sent only once. Errors
// that match it also match ErrNotReplayable.
var ErrBodyTooLarge = errors.New("retryhttp: request body too large to replay")

// errNoResponse reports a base RoundTripper that broke its contract.
var errNoResponse = errors.New("retryhttp: base RoundTripper returned neither a response nor an error")

// ErrAttemptTimeout is matched by the error of an attempt that exceeded
// AttemptTimeout.
var ErrAttemptTimeout = errors.New("retryhttp: attempt timed out")

// RoundTrip sends req, retrying as described on Transport. It returns a
// response with a nil error, or a nil response with an error: the error
// of Policy.Validate, an error reading a body without GetBody, or a
// *retry.Error wrapping the last attempt's error.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	c := call{t: t, req: req, base: t.Base, header: req.Header}
	if c.base == nil {
		c.base = http.DefaultTransport
	}
	p := t.Policy
	if p == (backoff.Policy{}) {
		p = backoff.Default()
	}
	c.max = p.Retries + 1
	if p.Retries == int(^uint(0)>>1) {
		c.max = p.Retries
	}
	limit := t.MaxBufferedBody
	if limit == 0 {
		limit = DefaultMaxBufferedBody
	}
	var err error
	if c.body, err = newBody(req, limit, p.Retries > 0); err != nil {
		return nil, err
	}
	if !t.NoIdempotencyKey && (req.Method == http.MethodPost || req.Method == http.MethodPatch) && !hasKey(req.Header) {
		c.header = req.Header.Clone()
		if c.header == nil {
			c.header = make(http.Header, 1)
		}
		c.header["Idempotency-Key"] = []string{NewIdempotencyKey()}
		c.changed = true
	}
	c.changed = c.changed || c.body.own
	c.replayable = replayableMethod(req.Method, c.header)

	// The first attempt is made here rather than in the retry loop, so that
	// a success costs nothing beyond the base's own allocations: call stays
	// on the stack. With a Budget the loop must see the success (it refunds
	// tokens), so it makes every attempt.
	ctx := req.Context()
	if t.Budget == nil && ctx.Err() == nil && p.Validate() == nil {
		start := time.Now()
		resp, err := c.attempt(ctx)
		if err == nil {
			c.body.close()
			return resp, nil
		}
		c.first, c.firstTook = err, time.Since(start)
	}
	return retryLoop(c, p)
}

// retryLoop runs the retry loop for a call, on a copy of it on the heap. If
// the call's first attempt failed already, the loop's first attempt returns
// that failure instead of sending the request again.
func retryLoop(c call, p backoff.Policy) (*http.Response, error) {
	h := &c
	resp, err := retry.Do(h.req.Context(), p, h.resume, h.options()...)
	h.body.close()
	if err == nil {
		return resp, nil
	}
	var re *retry.Error
	if !errors.As(err, &re) {
		return nil, err // invalid policy: no attempt ran
	}
	if h.first != nil {
		re.Elapsed += h.firstTook // temporary, until the shared core replaces the replay
	}
	if h.first != nil && re.Attempts == 0 {
		// The context ended before the loop replayed the attempt made
		// before it: count that attempt. (Elapsed, timed from the end of
		// the first attempt, is right as it is.)
		re.Attempts, re.Last = 1, h.first
	}
	var se *statusError
	if errors.As(re.Last, &se) {
		if re.Reason == retry.ErrCanceled {
			h.release(se)
			h.giveUp(re)
			return nil, err
		}
		h.giveUp(re)
		return h.final(se.resp, se.lim), nil
	}
	h.giveUp(re)
	return nil, err
}

// resume is the operation of the retry loop: it replays the failure of the
// attempt made before the loop, if any, then makes attempts.
func (c *call) resume(ctx context.Context) (*http.Response, error) {
	if err := c.first; err != nil && c.n == 1 && !c.replayed {
		c.replayed = true
		return nil, err
	}
	return c.attempt(ctx)
}

// CloseIdleConnections closes the idle connections of Base (or of
// http.DefaultTransport when Base is nil) if it has such a method, so that
// http.Client.CloseIdleConnections reaches the pool under the Transport. The
// Transport never calls it on its own: the pool is shared.
func (t *Transport) CloseIdleConnections() {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	if c, ok := base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// call is the state of one RoundTrip.
type call struct {
	t          *Transport
	req        *http.Request
	base       http.RoundTripper
	header     http.Header // req.Header, or a clone with an Idempotency-Key
	body       body
	replayable bool // the method or a key allows sending it again
	changed    bool // the first attempt cannot send the caller's request as is
	max        int  // attempts the policy allows
	n          int  // attempts started
	pending    *statusError
	opts       [3]retry.Option
	first      error // the failure of the first attempt, made before the loop
	firstTook  time.Duration
	replayed   bool // the loop has seen first
}

// options returns the retry options, kept in the call (already on the heap)
// to spare an allocation.
func (c *call) options() []retry.Option {
	c.opts[0] = retry.WithMaxRetryAfter(c.t.MaxRetryAfter)
	c.opts[1] = retry.WithOnRetry(c.onRetry)
	if c.t.Budget == nil {
		return c.opts[:2]
	}
	c.opts[2] = retry.WithBudget(c.t.Budget)
	return c.opts[:3]
}

// statusError is the failure of an attempt that got a retryable status.
type statusError struct {
	resp    *http.Response
	lim     *limit // the attempt's AttemptTimeout, or nil
	hint    time.Duration
	hinted  bool
	refused error // why it may not be retried, or nil
	done    bool  // drained and released
}

func (e *statusError) Error() string {
	return "retryhttp: server answered " + e.resp.Status
}

// Unwrap returns why the response may not be retried, if it may not.
func (e *statusError) Unwrap() error { return e.refused }

// attemptError is a network failure with a second error that explains what
// the transport did about it: why it is not retried, or the caller's
// context error.
type attemptError struct {
	err  error
	also error
}

func (e *attemptError) Error() string   { return e.also.Error() + ": " + e.err.Error() }
func (e *attemptError) Unwrap() []error { return []error{e.err, e.also} }

// attempt is the operation the retry loop runs.
func (c *call) attempt(ctx context.Context) (*http.Response, error) {
	if c.pending != nil { // normally drained by onRetry already
		c.release(c.pending)
	}
	c.n++
	rb, err := c.body.next(c.n)
	if err != nil {
		return nil, retry.Permanent(err)
	}
	r := c.req
	if c.n > 1 || c.changed {
		r = c.clone(ctx, rb)
	}
	var lim *limit
	if d := c.t.AttemptTimeout; d > 0 {
		var actx context.Context
		lim = new(limit)
		actx, lim.cancel = context.WithCancelCause(ctx)
		lim.timer = time.AfterFunc(d, func() { lim.cancel(&timeoutError{d}) })
		if r == c.req {
			r = c.clone(actx, rb)
		} else {
			r = r.WithContext(actx)
		}
	}
	resp, err := c.base.RoundTrip(r)
	switch {
	case err != nil && resp != nil:
		resp.Body.Close() // a broken RoundTripper; net/http's Client ignores such a response too
		resp = nil
	case err == nil && resp == nil:
		err = errNoResponse
	case err == nil && resp.Body == nil:
		// Test doubles often leave it out; net/http's Client accepts that
		// and so must the drain and the final response's wrapper.
		resp.Body = http.NoBody
	}
	retryable := err == nil && retryableStatus(c.t.RetryStatuses, resp.StatusCode)
	if lim != nil && err == nil && !retryable && !lim.timer.Stop() {
		// The limit passed as the headers arrived: the body is doomed.
		drain(resp)
		resp, err = nil, context.Cause(r.Context())
	}
	if err != nil {
		if lim != nil {
			cause := context.Cause(r.Context())
			lim.release()
			if te, ok := cause.(*timeoutError); ok && ctx.Err() == nil {
				err = te
			}
		}
		return nil, c.failure(ctx, err)
	}
	if !retryable {
		return c.final(resp, lim), nil
	}
	// The attempt's limit keeps running: it bounds the draining too.
	se := &statusError{resp: resp, lim: lim}
	se.hint, _, se.hinted = serverHint(resp.Header, time.Now())
	switch {
	case c.max == 1:
		// No retry is planned: the loop reports exhaustion, which is the
		// true reason.
	case !c.replayable:
		se.refused = errNotIdempotent(c.req.Method)
	case !c.body.replayable():
		se.refused = errBodyTooLarge
	}
	if se.refused != nil {
		return nil, retry.Permanent(se)
	}
	c.pending = se
	if se.hinted {
		return nil, retry.After(se.hint, se)
	}
	return nil, se
}

// failure turns a network error into what the retry loop must do with it.
func (c *call) failure(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		// The caller's context ended: make sure the loop sees its error.
		if !errors.Is(err, ctx.Err()) {
			err = &attemptError{err: err, also: context.Cause(ctx)}
		}
		return err
	}
	var kind errorKind
	if _, ok := err.(*timeoutError); ok {
		kind = mayBeSent
	} else {
		kind = classify(err)
	}
	switch {
	case kind == permanent:
		return retry.Permanent(err)
	case c.max == 1:
		return err // no retry is planned anyway
	case kind == mayBeSent && !c.replayable:
		return retry.Permanent(&attemptError{err: err, also: errNotIdempotent(c.req.Method)})
	case !c.body.replayable():
		return retry.Permanent(&attemptError{err: err, also: errBodyTooLarge})
	}
	return err
}

func errNotIdempotent(method string) error {
	return &refusal{"not retried: " + method + " without Idempotency-Key may have reached the server", nil}
}

var errBodyTooLarge error = &refusal{"not retried: request body has no GetBody and exceeds MaxBufferedBody", ErrBodyTooLarge}

// refusal explains why a request is not replayed; it matches
// ErrNotReplayable, and kind when that is set.
type refusal struct {
	why  string
	kind error
}

func (e *refusal) Error() string { return "retryhttp: " + e.why }
func (e *refusal) Is(target error) bool {
	return target == ErrNotReplayable || (e.kind != nil && target == e.kind)
}

// timeoutError is the error of an attempt that exceeded AttemptTimeout. It
// is a net.Error with Timeout() true, like net/http's own timeouts.
type timeoutError struct{ d time.Duration }

func (e *timeoutError) Error() string        { return "retryhttp: attempt timed out after " + e.d.String() }
func (e *timeoutError) Timeout() bool        { return true }
func (e *timeoutError) Temporary() bool      { return true }
func (e *timeoutError) Is(target error) bool { return target == ErrAttemptTimeout }

// clone returns a shallow copy of the caller's request for one attempt,
// with its own context, body and (if a key was added) header. Shallow is
// enough: RoundTrippers must not modify requests, and the copy's header is
// either the caller's, read only, or the call's own clone.
func (c *call) clone(ctx context.Context, rb io.ReadCloser) *http.Request {
	r := c.req.WithContext(ctx)
	r.Header = c.header
	r.Body = rb
	if c.body.buf != nil {
		r.GetBody = c.body.getBody
	}
	return r
}

// release drains and closes a response that is not returned.
func (c *call) release(se *statusError) {
	if c.pending == se {
		c.pending = nil
	}
	if se.done {
		return
	}
	se.done = true
	drain(se.resp)
	if se.lim != nil {
		se.lim.release()
	}
}

// final returns resp as it is, except that with an AttemptTimeout its body
// releases the attempt's context when closed.
func (c *call) final(resp *http.Response, lim *limit) *http.Response {
	c.pending = nil
	if lim != nil {
		lim.timer.Stop()
		resp.Body = newReleasingBody(resp.Body, lim.release)
	}
	return resp
}

// limit enforces AttemptTimeout on one attempt: the timer cancels the
// attempt's context with a *timeoutError as its cause.
type limit struct {
	timer  *time.Timer
	cancel context.CancelCauseFunc
}

// release stops the timer and frees the attempt's context.
func (l *limit) release() {
	l.timer.Stop()
	l.cancel(nil)
}

// onRetry runs before each wait: it tells the caller, then frees the
// connection of a failed response so that it is reused rather than held
// during the wait.
func (c *call) onRetry(e retry.Event) {
	ev := c.event(e.Attempt, e.Err)
	ev.Delay = e.Delay
	if c.t.OnRetry != nil {
		c.t.OnRetry(ev)
	}
	if lg := c.t.Logger; lg != nil && lg.Enabled(c.req.Context(), slog.LevelWarn) {
		lg.LogAttrs(c.req.Context(), slog.LevelWarn, "retryhttp: retrying", append(c.attrs(ev),
			slog.Duration("delay", ev.Delay), slog.Bool("retry_after", ev.RetryAfter))...)
	}
	if c.pending != nil {
		c.release(c.pending)
	}
}

// giveUp reports the end of retrying after a failure.
func (c *call) giveUp(re *retry.Error) {
	if (c.t.OnGiveUp == nil && c.t.Logger == nil) || re.Attempts == 0 {
		return // no hook, or no attempt failed: the context ended first
	}
	ev := c.event(re.Attempts, re.Last)
	ev.Reason = re.Reason
	if re.Reason == retry.ErrPermanent {
		var r *refusal
		if !errors.As(re.Last, &r) {
			return // an error retrying cannot help: nothing was given up
		}
		ev.Reason = r
	}
	if c.t.OnGiveUp != nil {
		c.t.OnGiveUp(ev)
	}
	if lg := c.t.Logger; lg != nil && lg.Enabled(c.req.Context(), slog.LevelWarn) {
		attrs := append(c.attrs(ev), slog.String("reason", ev.Reason.Error()))
		if ev.RetryAfter {
			attrs = append(attrs, slog.Duration("retry_after", ev.Hint))
		}
		lg.LogAttrs(c.req.Context(), slog.LevelWarn, "retryhttp: giving up", attrs...)
	}
}

func (c *call) event(attempt int, err error) Event {
	ev := Event{Request: c.req, Attempt: attempt, MaxAttempts: c.max}
	var se *statusError
	if errors.As(err, &se) {
		ev.Response, ev.RetryAfter, ev.Hint = se.resp, se.hinted, se.hint
		return ev
	}
	var ae *attemptError
	if errors.As(err, &ae) {
		err = ae.err
	}
	var te *timeoutError
	if errors.As(err, &te) {
		err = te
	}
	ev.Err = err
	return ev
}

func (c *call) attrs(ev Event) []slog.Attr {
	attrs := make([]slog.Attr, 0, 8)
	attrs = append(attrs,
		slog.String("method", methodOf(c.req)),
		slog.String("url", redactURL(c.req)),
		slog.Int("attempt", ev.Attempt),
		slog.Int("max_attempts", ev.MaxAttempts))
	if ev.Response != nil {
		attrs = append(attrs, slog.Int("status", ev.Response.StatusCode))
	} else if ev.Err != nil {
		attrs = append(attrs, slog.String("error", ev.Err.Error()))
	}
	return attrs
}

func methodOf(r *http.Request) string {
	if r.Method == "" {
		return http.MethodGet
	}
	return r.Method
}

// redactURL renders the request URL without userinfo, fragment or query
// values (the query's keys are kept: they tell which call it was, while
// values often carry tokens; a bare item without "=" becomes REDACTED).
func redactURL(r *http.Request) string {
	u := r.URL
	if u == nil {
		return ""
	}
	var b strings.Builder
	if u.Scheme != "" {
		b.WriteString(u.Scheme)
		b.WriteString("://")
	}
	b.WriteString(u.Host)
	b.WriteString(u.EscapedPath())
	if u.RawQuery != "" {
		b.WriteByte('?')
		for i, kv := range strings.Split(u.RawQuery, "&") {
			if i > 0 {
				b.WriteByte('&')
			}
			// An item without "=" (?s3cr3t) is all value as far as we
			// can tell, so it is masked rather than shown as a key.
			if k, _, ok := strings.Cut(kv, "="); ok {
				b.WriteString(k)
			} else if kv != "" {
				b.WriteString("REDACTED")
			}
		}
	}
	return b.String()
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
