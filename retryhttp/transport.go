package retryhttp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
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
// Retry-After, and buffers bodies without GetBody up to 1 MiB. Every field
// follows the library's rule for zero and negative values: zero means the
// documented default, negative means "none" (no hint honoured, never
// buffer, no limit). Most callers set only Policy:
//
//	client := &http.Client{Transport: &retryhttp.Transport{Policy: p}}
//
// What is retried:
//   - Network failures (connection refused or reset, an HTTP/2 stream
//     reset, EOF before a response, a timeout of one attempt, including
//     net/http's TLS handshake and response header timeouts, a failed DNS
//     lookup). Not the caller's own context ending, a host name that does
//     not exist (DNS "no such host"), TLS certificate errors and TLS
//     alerts, redirect-policy errors, malformed URLs, nor any error the
//     transport does not recognise as a network failure: retrying those
//     only repeats them.
//   - Responses whose status is in RetryStatuses.
//   - CheckRetry, when set, replaces both rules above.
//   - Whatever the rules say, only requests that can be repeated safely:
//     GET, HEAD, OPTIONS, TRACE, PUT and DELETE, and any request with an
//     Idempotency-Key (or X-Idempotency-Key) header, which the caller sets
//     or asks the Transport to generate (GenerateIdempotencyKey). A POST or
//     PATCH without one is sent once, because a server that does not know
//     the request may have executed it before failing. A request whose
//     connection could not be established at all (a dial error, a failed
//     DNS lookup) is retried whatever its method, because the server saw
//     nothing.
//
// The caller's request is never modified: an attempt that needs another
// body, header or context sends a shallow copy (the first attempt of a
// request that needs none sends the request itself). The first attempt
// sends the caller's body; later ones get a fresh body from GetBody (which
// http.NewRequest sets for bytes.Buffer, bytes.Reader and strings.Reader).
// A body without GetBody is read into memory first if it is at most
// MaxBufferedBody bytes; a larger one is streamed once and the request is
// not retried (OnGiveUp and the log say so, with ErrNotReplayable). The
// request body is always closed, even on error.
//
// A response that will be retried is drained (up to 64 KiB, and within
// AttemptTimeout if set) and closed so that its connection is reused; the
// final response, success or not, is returned with a nil error and its body
// unread. When retrying stops on an error, RoundTrip returns a *retry.Error
// that says why (errors.Is with retry.ErrExhausted, retry.ErrPermanent,
// ...), how many attempts ran, and wraps the last attempt's error.
//
// Waiting follows the retry package, whose loop (retry.Loop) the Transport
// runs: the schedule of Policy, or exactly the server's Retry-After (or,
// without one, the reset of an exhausted quota from RateLimit,
// RateLimit-Reset or X-RateLimit-Reset) when it sent one; no wait that
// would end after the request context's deadline is started, and a
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

	// Policy is the retry schedule. Each zero field takes its default, so
	// the zero Policy is backoff.Default() and Policy{Retries: 5} waits as
	// the default does; Retries backoff.NoRetries sends every request once.
	// An invalid Policy makes every RoundTrip fail with its
	// *backoff.FieldError.
	Policy backoff.Policy

	// RetryStatuses lists the response statuses that are retried. Nil means
	// 429, 502, 503 and 504 (DefaultRetryStatuses); an empty non-nil slice
	// retries no status. Ignored when CheckRetry is set.
	RetryStatuses []int

	// CheckRetry, if not nil, decides after each attempt whether it failed
	// in a way worth retrying, in place of RetryStatuses and the built-in
	// network error rules (DefaultCheckRetry applies those, to build on
	// them). It has the meaning of go-retryablehttp's CheckRetry: it gets
	// the attempt's response (nil after a network error) or its error (nil
	// with a response), and returns true to retry, false to end with this
	// attempt's outcome (the response, or a *retry.Error with Reason
	// retry.ErrPermanent wrapping the error), or a non-nil error to stop
	// retrying with it: RoundTrip then returns a *retry.Error with Reason
	// retry.ErrPermanent that wraps it (and closes the response).
	//
	// CheckRetry never overrides safety: a true answer for a request that
	// may not be repeated (see above) still ends retrying with
	// ErrNotReplayable, and it is not called once the request's context has
	// ended. It may read the response's status and headers, not its body.
	// It runs on the goroutine that called RoundTrip.
	CheckRetry func(ctx context.Context, resp *http.Response, err error) (bool, error)

	// MaxRetryAfter is the longest Retry-After the Transport waits for; a
	// longer one ends retrying and the response is returned. Zero means 1
	// minute (retry.DefaultMaxRetryAfter); a negative value honours no
	// hint: a response carrying one is returned at once.
	MaxRetryAfter time.Duration

	// AttemptTimeout bounds each attempt from sending the request until its
	// response headers arrive (and the draining of a response that is
	// retried); an attempt that times out is retried like a network failure
	// (ErrAttemptTimeout). It does not bound reading the final response's
	// body, unless ReadBody reads it within the attempt: otherwise use the
	// request's context for that. Zero (the default) and
	// negative values mean no limit: then a retried response whose body
	// stalls is drained until the request's context ends, so set a limit
	// against servers that may do that. With a limit, the final response's
	// Body is wrapped so that closing it releases the attempt's context.
	AttemptTimeout time.Duration

	// ReadBody, if not nil, reads the body of the response that would end
	// the call (one whose status is not retried) inside its attempt, before
	// RoundTrip returns, so that a body cut off mid-way is retried like any
	// other network failure, and AttemptTimeout bounds the whole attempt,
	// body included. An error reading the body (a reset, a connection
	// closed early, the attempt's timeout) is the attempt's failure,
	// retried under the usual rules (a replayable request, within the
	// Policy); any other error ReadBody returns (its own, writing what it
	// read) ends the call at once, wrapped in a *retry.Error with Reason
	// retry.ErrPermanent. ReadBody must therefore start over each time it
	// is called: what it kept of a failed attempt's body is stale. The
	// response RoundTrip returns then has an empty Body, already consumed.
	// ReadBody runs on the goroutine that called RoundTrip; it need not
	// close the body.
	ReadBody func(*http.Response) error

	// MaxBufferedBody is the largest request body without GetBody that is
	// read into memory so that it can be replayed. Zero means 1 MiB
	// (DefaultMaxBufferedBody); a negative value never buffers, so such
	// bodies are sent once.
	MaxBufferedBody int64

	// GenerateIdempotencyKey makes the Transport add a fresh random
	// Idempotency-Key (NewIdempotencyKey), the same on all its attempts, to
	// each POST or PATCH request that lacks one, so that such requests are
	// retried. Set it only for servers known to honour the header (Stripe's
	// API, for example): one that ignores it executes a retried request
	// twice. By default (false) a POST or PATCH is retried only if the
	// caller set the key. A key the caller set is always kept as is.
	GenerateIdempotencyKey bool

	// Budget, if not nil, is a retry budget shared with other calls (see
	// retry.Budget and retry.TokenBucket): when it refuses a retry, the
	// failure is returned without retry (retry.ErrBudget). An invalid
	// *retry.TokenBucket makes every RoundTrip fail with its Validate error.
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

	// OnSuccess, if not nil, is called once when RoundTrip returns a
	// response that is not to be retried (whatever its status: a 404 is
	// final, not a failure), with Event.Attempt the number of attempts it
	// took and Event.Response that response (do not read its body in the
	// hook). It is the way to learn how many attempts a request needed.
	OnSuccess func(Event)

	// Breakers, if not nil, puts a circuit breaker (package breaker) in
	// front of every attempt, one per host by default (see BreakerKey), so
	// that requests to a host that is down stop reaching it. A network
	// failure or a status that is retried (RetryStatuses, or CheckRetry's
	// true) counts as a failure of the host, any other response as a
	// success, and the caller's context ending as neither. An attempt the
	// breaker rejects is not sent: it fails with an error matching
	// breaker.ErrOpen, which the retry loop treats as a Retry-After (it
	// waits until the breaker admits a probe, or stops at once when that is
	// longer than MaxRetryAfter or past the request's deadline) and which
	// costs the Budget nothing. OnRetry and OnGiveUp see it as Event.Err,
	// and the log records it with rejected=true. When retrying stops on a
	// rejection, RoundTrip returns a *retry.Error that matches
	// breaker.ErrOpen. Get's error (an invalid Config) fails every
	// RoundTrip.
	Breakers *breaker.Group

	// BreakerKey, if not nil, names the breaker of a request in Breakers,
	// in place of its URL's host (with the port, if any): a key per API
	// endpoint, or per tenant. Keys should come from a bounded set: a
	// Group keeps every breaker it made.
	BreakerKey func(*http.Request) string

	// Logger, if not nil, receives one Warn record per retry
	// ("retryhttp: retrying") and per give-up ("retryhttp: giving up") with
	// the method, the URL as RedactURL prints it, the status or
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

// DefaultCheckRetry is the rule a Transport with neither CheckRetry nor
// RetryStatuses applies, for a CheckRetry that builds on it: it retries a
// response whose status is in DefaultRetryStatuses and an error the
// Transport recognises as a network failure (see Transport). It never
// returns an error, and does not itself check the request's context or
// method (the Transport does).
func DefaultCheckRetry(_ context.Context, resp *http.Response, err error) (bool, error) {
	if err != nil {
		return classify(err) != permanent, nil
	}
	return resp != nil && retryableStatus(nil, resp.StatusCode), nil
}

// Event describes an attempt, for the OnRetry, OnGiveUp and OnSuccess
// hooks.
type Event struct {
	// Request is the caller's request. Do not modify it.
	Request *http.Request
	// Attempt is the number of the attempt, from 1: the one that failed in
	// OnRetry and OnGiveUp, the one that succeeded in OnSuccess (so the
	// number of attempts the request took). In OnRetry it is also the
	// resend count of the retry that follows (the OpenTelemetry attribute
	// http.request.resend_count).
	Attempt int
	// MaxAttempts is the most attempts the policy allows
	// (Policy.MaxAttempts()).
	MaxAttempts int
	// Response is the attempt's response, nil after a network failure.
	Response *http.Response
	// Err is the failed attempt's error, nil when there is a Response.
	Err error
	// Delay is the wait before the next attempt (OnRetry only).
	Delay time.Duration
	// HintHeader names the response header that asked for a wait:
	// HeaderRetryAfter, HeaderRateLimit, HeaderRateLimitReset,
	// HeaderXRateLimitReset, or "" when the response asked for
	// none (or there was no response). In OnRetry, Delay is then Hint; in
	// OnGiveUp the hint may be the reason retrying stopped.
	HintHeader string
	// Hint is the wait the server asked for, when HintHeader is not "".
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
// of Policy.Validate, of the Budget's Validate or of Breakers' Config, an
// error reading a body without GetBody, or a *retry.Error wrapping the last
// attempt's error.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	p := t.Policy
	c := call{t: t, req: req, base: t.Base, header: req.Header, max: p.MaxAttempts()}
	if c.base == nil {
		c.base = http.DefaultTransport
	}
	limit := t.MaxBufferedBody
	if limit == 0 {
		limit = DefaultMaxBufferedBody
	}
	var err error
	if c.body, err = newBody(req, limit, c.max > 1); err != nil {
		return nil, err
	}
	defer c.body.close()
	if t.GenerateIdempotencyKey && (req.Method == http.MethodPost || req.Method == http.MethodPatch) && !hasKey(req.Header) {
		c.header = req.Header.Clone()
		if c.header == nil {
			c.header = make(http.Header, 1)
		}
		c.header["Idempotency-Key"] = []string{NewIdempotencyKey()}
		c.changed = true
	}
	c.changed = c.changed || c.body.own
	c.replayable = replayableMethod(req.Method, c.header)
	if c.br, err = t.breakerFor(req); err != nil {
		return nil, err
	}

	ctx := req.Context()
	opts := [...]retry.Option{retry.WithMaxRetryAfter(t.MaxRetryAfter), retry.WithBudget(t.Budget)}
	l, err := retry.NewLoop(ctx, p, opts[:]...)
	if err != nil {
		return nil, err
	}
	for {
		resp, err := c.guarded(ctx)
		if err == nil {
			l.Succeeded()
			c.succeeded(resp, l.Attempts())
			return resp, nil
		}
		d, err := l.Next(ctx, err)
		if err == nil {
			c.retrying(l.Attempts(), d)
			err = l.Wait(ctx, d)
		}
		if err != nil {
			return c.stop(err)
		}
	}
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
	br         *breaker.Breaker // the request's breaker, or nil
	base       http.RoundTripper
	header     http.Header // req.Header, or a clone with an Idempotency-Key
	body       body
	replayable bool // the method or a key allows sending it again
	changed    bool // the first attempt cannot send the caller's request as is
	max        int  // attempts the policy allows
	n          int  // attempts started

	// The latest failed attempt: its response with a retryable status (held
	// until the loop decides; the error given to the loop describes it but
	// does not carry it), or its network error.
	resp       *http.Response
	lim        *limit // the response's AttemptTimeout, or nil
	hint       time.Duration
	hintHeader string
	netErr     error
}

// statusError is the failure of an attempt that got a retryable status. It
// describes the response; the call keeps the response itself.
type statusError struct {
	status  string
	refused error // why it may not be retried, or nil
}

func (e *statusError) Error() string {
	return "retryhttp: server answered " + e.status
}

// Unwrap returns why the response may not be retried, if it may not.
func (e *statusError) Unwrap() error { return e.refused }

// attemptError is a network failure with a second error that explains what
// the transport did about it: why it is not retried, the caller's context
// error, or CheckRetry's error.
type attemptError struct {
	err  error
	also error
}

func (e *attemptError) Error() string   { return e.also.Error() + ": " + e.err.Error() }
func (e *attemptError) Unwrap() []error { return []error{e.err, e.also} }

// attempt sends the request once. It returns the final response, or the
// error for the retry loop: a network failure, or a *statusError for a
// response with a retryable status, which the call holds in c.resp. Either
// may be marked with retry.Permanent (not to be retried) or carry the
// server's wait with retry.After.
func (c *call) attempt(ctx context.Context) (*http.Response, error) {
	c.resp, c.lim, c.hint, c.hintHeader, c.netErr = nil, nil, 0, "", nil
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
	retryable := false
	if err == nil {
		var stop error
		if retryable, stop = c.checkResponse(ctx, resp); stop != nil {
			drain(resp)
			if lim != nil {
				lim.release()
			}
			return nil, retry.Permanent(&attemptError{err: &statusError{status: resp.Status}, also: stop})
		}
	}
	if err == nil && !retryable && c.t.ReadBody != nil {
		return c.readBody(ctx, r, resp, lim)
	}
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
		return finalResponse(resp, lim), nil
	}
	// The attempt's limit keeps running: it bounds the draining too.
	c.resp, c.lim = resp, lim
	c.hint, c.hintHeader = serverHint(resp.Header, time.Now())
	se := &statusError{status: resp.Status}
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
	if c.hintHeader != "" {
		return nil, retry.After(c.hint, se)
	}
	return nil, se
}

// readBody gives the final response to ReadBody within the attempt and its
// limit, and returns it consumed, or the attempt's failure.
func (c *call) readBody(ctx context.Context, r *http.Request, resp *http.Response, lim *limit) (*http.Response, error) {
	body := &watchedBody{rc: resp.Body}
	resp.Body = body
	err := c.t.ReadBody(resp)
	body.rc.Close()
	resp.Body = http.NoBody
	var cause error
	if lim != nil {
		cause = context.Cause(r.Context())
		lim.release()
	}
	switch {
	case err == nil:
		return resp, nil
	case body.err == nil || !errors.Is(err, body.err):
		// ReadBody's own failure: retrying would not help it.
		return nil, retry.Permanent(err)
	}
	if te, ok := cause.(*timeoutError); ok && ctx.Err() == nil {
		err = te
	}
	return nil, c.failure(ctx, err)
}

// watchedBody remembers the error its reader returned, so that a failure
// to read the body is told apart from ReadBody's own.
type watchedBody struct {
	rc  io.ReadCloser
	err error
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}

func (b *watchedBody) Close() error { return nil } // readBody closes it

// checkResponse reports whether resp is a failure to retry, by CheckRetry
// or else RetryStatuses, and CheckRetry's error if it has one.
func (c *call) checkResponse(ctx context.Context, resp *http.Response) (bool, error) {
	if c.t.CheckRetry != nil && ctx.Err() == nil {
		return c.t.CheckRetry(ctx, resp, nil)
	}
	return retryableStatus(c.t.RetryStatuses, resp.StatusCode), nil
}

// failure turns a network error into what the retry loop must do with it.
func (c *call) failure(ctx context.Context, err error) error {
	c.netErr = err
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
	if c.t.CheckRetry != nil {
		ok, stop := c.t.CheckRetry(ctx, nil, err)
		switch {
		case stop != nil:
			return retry.Permanent(&attemptError{err: err, also: stop})
		case !ok:
			return retry.Permanent(err)
		case kind == permanent:
			kind = mayBeSent // retried on the hook's word, as safely as any other
		}
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

// release drains and closes the held response, if any.
func (c *call) release() {
	if c.resp == nil {
		return
	}
	drain(c.resp)
	if c.lim != nil {
		c.lim.release()
	}
	c.resp, c.lim = nil, nil
}

// finalResponse returns resp as it is, except that with an AttemptTimeout
// its body releases the attempt's context when closed.
func finalResponse(resp *http.Response, lim *limit) *http.Response {
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

// retrying runs before each wait: it tells the caller, then frees the
// connection of a failed response so that it is reused rather than held
// during the wait.
func (c *call) retrying(attempt int, d time.Duration) {
	if c.t.OnRetry != nil || c.t.Logger != nil {
		ev := c.event(attempt)
		ev.Delay = d
		if c.t.OnRetry != nil {
			c.t.OnRetry(ev)
		}
		if lg := c.t.Logger; lg != nil && lg.Enabled(c.req.Context(), slog.LevelWarn) {
			attrs := append(c.attrs(ev), slog.Duration("delay", ev.Delay))
			if ev.HintHeader != "" {
				attrs = append(attrs, slog.String("hint_header", ev.HintHeader))
			}
			lg.LogAttrs(c.req.Context(), slog.LevelWarn, "retryhttp: retrying", attrs...)
		}
	}
	c.release()
}

// succeeded reports a response that ends the call.
func (c *call) succeeded(resp *http.Response, attempts int) {
	if c.t.OnSuccess != nil {
		ev := Event{Request: c.req, Attempt: attempts, MaxAttempts: c.max, Response: resp}
		c.t.OnSuccess(ev)
	}
}

// stop ends a call on err, the *retry.Error of the loop: it returns the
// response of a retryable status as it is, unless the caller's context
// ended, and otherwise err.
func (c *call) stop(err error) (*http.Response, error) {
	re, _ := err.(*retry.Error)
	if re == nil {
		return nil, err // not from the loop: cannot happen, but stay honest
	}
	c.giveUp(re)
	if c.resp == nil || re.Reason == retry.ErrCanceled {
		c.release()
		return nil, err
	}
	resp := finalResponse(c.resp, c.lim)
	c.resp, c.lim = nil, nil
	return resp, nil
}

// giveUp reports the end of retrying after a failure.
func (c *call) giveUp(re *retry.Error) {
	if (c.t.OnGiveUp == nil && c.t.Logger == nil) || re.Attempts == 0 {
		return // no hook, or no attempt failed: the context ended first
	}
	ev := c.event(re.Attempts)
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
		if ev.HintHeader != "" {
			attrs = append(attrs, slog.String("hint_header", ev.HintHeader), slog.Duration("hint", ev.Hint))
		}
		lg.LogAttrs(c.req.Context(), slog.LevelWarn, "retryhttp: giving up", attrs...)
	}
}

// event describes the latest failed attempt.
func (c *call) event(attempt int) Event {
	ev := Event{Request: c.req, Attempt: attempt, MaxAttempts: c.max}
	if c.resp != nil {
		ev.Response, ev.HintHeader, ev.Hint = c.resp, c.hintHeader, c.hint
		return ev
	}
	ev.Err = c.netErr
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
		if retry.IsRejected(ev.Err) {
			attrs = append(attrs, slog.Bool("rejected", true))
		}
	}
	return attrs
}

func methodOf(r *http.Request) string {
	if r.Method == "" {
		return http.MethodGet
	}
	return r.Method
}

// redactURL renders the request URL as RedactURL does.
func redactURL(r *http.Request) string {
	if r.URL == nil {
		return ""
	}
	return RedactURL(r.URL.String())
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
