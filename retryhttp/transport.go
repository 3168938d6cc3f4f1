package retryhttp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
	"github.com/again-go/again/hedge"
	"github.com/again-go/again/limiter"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/throttle"
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
// follows the module's rule for zero and negative values, stated on
// backoff.Policy. Most callers set only Policy:
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
//     Idempotency-Key (or X-Idempotency-Key) header with a value that is
//     not blank, which the caller sets or asks the Transport to generate
//     (GenerateIdempotencyKey). A POST or PATCH without one is sent once,
//     because a server that does not know the request may have executed
//     it before failing. A key header that is present but has no value, or
//     only empty or blank ones, is no key: the server could not recognise
//     the repeat. (net/http's Transport reads a key header with a nil
//     value as "idempotent, send no key"; this Transport does not.) A request whose
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
// runs: the schedule of Policy, or, when the server asked for a wait, its
// Retry-After (or, without one, the reset of an exhausted quota from
// RateLimit, RateLimit-Reset or X-RateLimit-Reset), but never less than
// Policy's first delay (Policy.Delay(1)), so that a server answering every
// request with Retry-After: 0 does not get a storm of retries until the
// deadline: the wait is never shorter than the server asked, and may be
// longer. No wait ends after the request context's deadline (the
// schedule's last wait is shortened to leave an attempt time to run, see
// Policy), and a Retry-After longer than MaxRetryAfter or past that
// deadline ends retrying at once, returning that response unchanged.
//
// Set the fields before first use and do not change them afterwards. A
// Transport is safe for concurrent use by multiple goroutines; the hooks
// run on the goroutine that called RoundTrip (the http.Client's caller).
// RoundTrip blocks during the waits. Without Hedge it starts no goroutine
// of its own (AttemptTimeout uses a timer, whose function runs on the
// runtime's); with Hedge, the first copy of an attempt runs on the calling
// goroutine and each hedge on a goroutine of its own, which has returned
// when the attempt ends, and CheckRetry is then called from those
// goroutines, concurrently (see Hedge). An attempt that answers before the
// hedge delay starts no goroutine.
type Transport struct {
	// Base sends each attempt. Nil means http.DefaultTransport. Its
	// connection pool is used as is: the Transport never closes its
	// connections on its own (only a caller's CloseIdleConnections is
	// passed on).
	Base http.RoundTripper

	// Policy is the retry schedule. Each zero field takes its default, so
	// the zero Policy is backoff.Default() and Policy{Retries: 5} waits as
	// the default does; Retries backoff.NoRetries sends every request once,
	// and Retries backoff.UntilDeadline retries until the request context's
	// deadline (a request without one fails with retry.ErrNoDeadline,
	// unsent). Before a deadline, a wait that would end later than
	// AttemptTimeout (or, without one, backoff.DeadlineReserve, 100 ms)
	// before it is shortened to end then, so that the last attempt starts
	// in time; a Retry-After is never shortened (see backoff.FitDeadline).
	// An invalid Policy makes every RoundTrip fail with its
	// *backoff.FieldError.
	Policy backoff.Policy

	// RetryStatuses lists the response statuses that are retried. Nil means
	// 429, 502, 503 and 504 (DefaultRetryStatuses); an empty non-nil slice
	// retries no status. Ignored when CheckRetry is set.
	RetryStatuses []int

	// Classes, if not empty, gives failures a retry schedule per class
	// (see retry.Class and retry.WithClasses): a 429 or 503 answer and a
	// breaker's or a throttle's rejection are overloads (retry.IsOverload
	// matches them), a network failure or another retried status is not.
	// A failure that no class matches waits on Policy's schedule, and
	// Policy still caps every attempt. Nil, the default, is Policy alone.
	// With classes, each request costs one allocation more.
	Classes []retry.Class

	// CheckRetry, if not nil, decides after each attempt whether it failed
	// in a way worth retrying, in place of RetryStatuses and the built-in
	// network error rules (DefaultCheckRetry applies those, to build on
	// them). Its answers mean what go-retryablehttp's CheckRetry's do, so
	// a ported policy (ErrorPropagatedRetryPolicy too) retries the same
	// attempts. It gets the attempt's response (nil after a network error)
	// or its error (nil with a response), and returns:
	//   - true: retry. A non-nil error says why the attempt failed: the
	//     *retry.Error of a call whose retries run out wraps it (with a
	//     response, the final response is returned, as without the error).
	//   - false and nil: end with this attempt's outcome (the response, or
	//     a *retry.Error with Reason retry.ErrPermanent wrapping the error).
	//   - false and an error: stop retrying with it: RoundTrip returns a
	//     *retry.Error with Reason retry.ErrPermanent that wraps it (and
	//     closes the response).
	// One difference remains: go-retryablehttp returns an error, not the
	// response, when retries run out after a retryable response.
	//
	// CheckRetry never overrides safety: a true answer for a request that
	// may not be repeated (see above) still ends retrying with
	// ErrNotReplayable, and it is not called once the request's context has
	// ended. It may read the response's status and headers, not its body.
	// It runs on the goroutine that called RoundTrip, except with Hedge,
	// where it may run on the goroutines of the copies, concurrently (see
	// Hedge).
	CheckRetry func(ctx context.Context, resp *http.Response, err error) (bool, error)

	// MaxRetryAfter is the longest Retry-After the Transport waits for; a
	// longer one ends retrying and the response is returned. Zero means 1
	// minute (retry.DefaultMaxRetryAfter); a negative value honours no
	// hint: a response carrying one is returned at once. It limits the
	// server's hint, not the wait: a hint shorter than Policy's first delay
	// is waited as that delay (see above).
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
	// A positive AttemptTimeout is also the time kept for the last attempt
	// before the request's deadline (see Policy).
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
	// ReadBody runs on the goroutine that called RoundTrip, with Hedge too:
	// a hedged attempt gives it the winner's body alone, once the winner's
	// headers have arrived, still within the winner's AttemptTimeout, so
	// that a winner whose body is cut or stalls fails its attempt and is
	// retried as an attempt that is not hedged would be. It need not close
	// the body.
	ReadBody func(*http.Response) error

	// MaxBufferedBody is the largest request body without GetBody that is
	// read into memory so that it can be replayed. Zero means 1 MiB
	// (DefaultMaxBufferedBody); a negative value never buffers, so such
	// bodies are sent once.
	MaxBufferedBody int64

	// GenerateIdempotencyKey makes the Transport add a fresh random
	// Idempotency-Key (NewIdempotencyKey), the same on all its attempts, to
	// each POST or PATCH request that lacks one, so that such requests are
	// retried, and, when Hedge is set, to every request whose method is not
	// safe (PUT and DELETE too), so that it is hedged. Set it only for servers known to honour the header (Stripe's
	// API, for example): one that ignores it executes a retried request
	// twice. By default (false) a POST or PATCH is retried only if the
	// caller set the key. A key the caller set is always kept as is; a key
	// header that is present but blank (nil, "" or spaces, in
	// Idempotency-Key or X-Idempotency-Key) is not a key: the request gets
	// a generated Idempotency-Key, in place of a blank one, as if it had
	// none, and without GenerateIdempotencyKey it is not retried (nor
	// hedged). A blank X-Idempotency-Key is sent as the caller set it.
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
	// response that is not to be retried, with Event.Attempt the number of
	// attempts it took and Event.Response that response (do not read its
	// body in the hook). It is the way to learn how many attempts a request
	// needed.
	//
	// For the hooks, "success" means the Transport's work succeeded, not
	// the request: a response whose status is not retried (RetryStatuses,
	// or CheckRetry's false) is final whatever its status, so a 404, or a
	// 500 when 500 is not retried, calls OnSuccess; check
	// Event.Response.StatusCode for the request's own outcome. A request
	// that ends on a retried status or a network failure (retries
	// exhausted, a Retry-After too long, the budget, the deadline) calls
	// OnGiveUp instead, and one that ends on an error retrying could not
	// help (a permanent network error, CheckRetry's error) calls neither.
	// Exactly one of OnSuccess and OnGiveUp runs per request that returned
	// a response.
	OnSuccess func(Event)

	// Breakers, if not nil, puts a circuit breaker (package breaker) in
	// front of every attempt, one per host by default (see BreakerKey), so
	// that requests to a host that is down stop reaching it. A network
	// failure or a status that is retried (RetryStatuses, or CheckRetry's
	// true) counts as a failure of the host, any other response as a
	// success, and the caller's context ending as neither. An attempt the
	// breaker rejects is not sent and costs the Budget nothing; by default
	// it ends the request at once, as callers of gobreaker or resilience4j
	// expect, so that they can fall back: RoundTrip returns a *retry.Error
	// with Reason retry.ErrRejected (the breaker's wait is longer than
	// BreakerWait allows) that matches breaker.ErrOpen, and also
	// breaker.ErrIsolated (with Reason retry.ErrPermanent) for a breaker
	// isolated by hand. Set BreakerWait to wait for the probe instead.
	// OnGiveUp sees the rejection as Event.Err, and the log records it
	// with rejected=true. Get's error (an invalid Config) fails every
	// RoundTrip.
	Breakers *breaker.Group

	// BreakerWait, when positive, is the longest a request waits for its
	// open breaker to admit a probe, in place of failing at once: the
	// rejected attempt counts as one, and the next starts when the breaker
	// says a probe may be admitted, unless that is more than BreakerWait
	// away or past the request's deadline (the wait then ends the request
	// as above). Zero (the default) and negative values mean no wait.
	// MaxRetryAfter does not apply to it: that limit is about servers'
	// hints.
	BreakerWait time.Duration

	// BreakerKey, if not nil, names the breaker of a request in Breakers,
	// in place of its URL's host (with the port, if any): a key per API
	// endpoint, or per tenant. Keys should come from a bounded set: a
	// Group keeps every breaker it made.
	BreakerKey func(*http.Request) string

	// Throttles, if not nil, holds the requests to an overloaded host back
	// before they are sent: each attempt first asks the host's Admitter in
	// the Group (by default an SRE throttle.Throttler; a throttle.Rate
	// learns a send rate from 429s instead), before the breaker. A
	// response of status 429 or 503 counts as an overload signal, as does
	// a breaker's rejection; every other outcome (any other response, a
	// network failure, the caller's context ending) counts as accepted.
	// An attempt the Admitter refuses is not sent and costs the Budget
	// nothing; it is retried on the Policy's schedule like any other
	// failure (after its wait hint, if the Admitter gives one), and a
	// request whose attempts were all refused fails with a *retry.Error
	// whose Last matches throttle.ErrRejected. The key is the URL's host
	// (with the port, if any). Get's error fails every RoundTrip.
	Throttles *throttle.Group

	// Limits, if not nil, bounds the attempts in flight to each host
	// (package limiter: a fixed limit, or an adaptive one), the first
	// check of every attempt, before the throttle and the breaker. Each
	// attempt, each retry and each hedge takes a permit of its own before
	// it is sent, and gives it back when it ends: on an error, once a
	// response to retry is drained (so never during a backoff wait), and
	// for the response RoundTrip returns when its body is read to EOF or
	// closed (a body never closed keeps its permit until it is garbage
	// collected: close every body). A hedge that finds no free permit is
	// not sent, and the copies already sent go on. An attempt the limit
	// refuses (at once, or after Config.MaxWait) is not sent and ends the
	// request at once: RoundTrip returns a *retry.Error with Reason
	// retry.ErrPermanent whose Last is the *limiter.LimitError (matching
	// limiter.ErrLimited). It is the client's own refusal: the Budget
	// neither spends nor refunds for it, the throttle and the breaker
	// never see it, and no hook runs for it (nothing was sent). An adaptive limit learns each attempt's time until
	// its response's headers (or until ReadBody read the body), with a
	// timeout (AttemptTimeout, a network timeout, or the request
	// context's deadline) or a status 429 or 503 as a loss signal, and
	// nothing from other failures (the caller canceling, say). The key is
	// the URL's host (with the port, if any). Get's error fails every
	// RoundTrip.
	Limits *limiter.Group

	// Hedge, if not nil, hedges each attempt (package hedge): when an
	// attempt has not answered after the Hedger's delay, a copy of the
	// request is sent, and the first response that is not retried wins.
	// The loser's context is canceled; a loser that answered too is
	// drained (up to 64 KiB) and closed at once, so that its connection
	// goes back to the pool. The winner's Body is the caller's: closing it
	// releases everything. A hedged attempt, all its copies, is one attempt
	// of Policy, so with Retries backoff.NoRetries a request is hedged and
	// never retried.
	//
	// Only requests that may run twice at once are hedged: GET, HEAD,
	// OPTIONS, TRACE and QUERY (the safe methods), and any request with an
	// Idempotency-Key (or X-Idempotency-Key) that is not blank, set by the
	// caller or added by GenerateIdempotencyKey. A PUT or DELETE without a
	// key is retried as usual but never hedged: a retry is sent after a
	// copy failed, a hedge beside one that may have succeeded already.
	// Only requests whose copies can each have their own body are hedged:
	// a request with a body but no GetBody is never hedged, and a hedge
	// whose GetBody fails is not sent (the copies already sent go on, and
	// the attempt's outcome is theirs). A 429 or 503 (with or without Retry-After),
	// any wait the server asks for, and a breaker that is not closed stop
	// the request's hedging; the copies already sent run on. The
	// latency window's key is the breaker's (BreakerKey, or the host).
	// Event.Hedge says which copy an event is about. The hedges run on
	// goroutines of their own, so with Hedge set CheckRetry is called from
	// them, concurrently for the copies of one request: it must be safe
	// for that. ReadBody reads only the winner's body, and the hooks run,
	// on the goroutine that called RoundTrip.
	Hedge *hedge.Hedger

	// HedgeBase, if not nil, sends the hedges in place of Base, such as a
	// second http.Transport, so that they go over connections of their own.
	// Measured (TestHedgeHTTP2ConnectionStall): Go's Transport sends an
	// HTTP/2 hedge as another stream of the first copy's connection, which
	// serves a slow server, but when the connection itself stalls (a
	// network path that stops delivering) the hedge stalls with it; through
	// HedgeBase it dials its own connection and answers. HTTP/1 hedges need
	// no HedgeBase: each copy takes a connection of its own. Nil means
	// Base. As Base's, its pool is used as is; CloseIdleConnections is
	// passed on to it too.
	HedgeBase http.RoundTripper

	// Logger, if not nil, receives one Info record per retry
	// ("retryhttp: retrying") and one Warn record per give-up
	// ("retryhttp: giving up": a retry is routine, a request that failed is
	// what an operator looks for), with
	// the method, the URL as RedactURL prints it, the status or
	// error, the attempt, the maximum attempts and the delay or reason.
	// Headers and bodies are never logged.
	Logger *slog.Logger

	// ShedHeaders, if true, sends on each attempt what a server behind
	// package shed sheds by: the attempt number (shed.HeaderAttempt, 1 for
	// the first), so that retries are shed before first attempts, and the
	// time left before the request's deadline (shed.HeaderTimeout, in
	// milliseconds; the earlier of the context's and AttemptTimeout's), so
	// that a request nobody waits for any more is not served. Off, only the
	// criticality is sent, and only when the request's context carries
	// one (shed.WithCriticality). Either way each attempt that sends a
	// header has a header of its own; the caller's is never modified.
	ShedHeaders bool
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
	// Delay is the wait before the next attempt, the one actually made
	// (OnRetry only): the Policy's, or, when the server asked for a wait,
	// Hint, but never less than the Policy's first delay.
	Delay time.Duration
	// HintHeader names the response header that asked for a wait:
	// HeaderRetryAfter, HeaderRateLimit, HeaderRateLimitReset,
	// HeaderXRateLimitReset, or "" when the response asked for
	// none (or there was no response). In OnRetry, Delay is then Hint, or
	// the Policy's first delay if Hint is shorter; in OnGiveUp the hint may
	// be the reason retrying stopped.
	HintHeader string
	// Hint is the wait the server asked for, as it asked, when HintHeader
	// is not "".
	Hint time.Duration
	// Hedge is which copy of the attempt the event is about, when Hedge is
	// set: 0 for the attempt itself, n for its n-th hedge. In OnSuccess it
	// is the copy that won; in OnRetry and OnGiveUp the copy whose failure
	// is the attempt's (see hedge.Result.Err).
	Hedge int
	// Class is the Name of the class (see Transport.Classes) of the
	// failure the event is about, the class whose policy set Delay (in
	// OnRetry) or whose cap may have ended the call (in OnGiveUp); in
	// OnSuccess, that of the failure before the successful attempt, whose
	// policy set the wait before it. It is "" (the zero value) when
	// Transport.Classes is empty, when no class matched the failure (the
	// Policy set the wait), after a first-try success, and for a failure
	// that ended the call before it was classed (a status or error that is
	// not retried, the context's end). See retry.Loop.Class.
	Class string
	// Reason is why retrying stopped (OnGiveUp only): retry.ErrExhausted,
	// retry.ErrRetryAfterTooLong, retry.ErrRejected (an open breaker),
	// retry.ErrDeadline, retry.ErrBudget, retry.ErrCanceled, or an error
	// matching ErrNotReplayable (test it with errors.Is) whose message says
	// what made the request unsafe to replay.
	Reason error
}

// ErrNotReplayable is the reason a failed request was not retried because
// sending it again could repeat its effect or its body cannot be sent again:
// a POST or PATCH without Idempotency-Key (or with a blank one) after its
// request may have reached the server, or a body without GetBody larger
// than MaxBufferedBody. The
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
	// The same tests as replayableMethod's and hedgeableMethod's, so that
	// every POST or PATCH they would refuse for want of a key gets one, a
	// blank key included, and with Hedge every method that is not safe.
	if t.GenerateIdempotencyKey && !hasKey(req.Header) && (req.Method == http.MethodPost || req.Method == http.MethodPatch ||
		t.Hedge != nil && !hedgeableMethod(req.Method, nil)) {
		c.header = req.Header.Clone()
		if c.header == nil {
			c.header = make(http.Header, 1)
		}
		c.header["Idempotency-Key"] = []string{NewIdempotencyKey()}
		c.changed = true
	}
	c.changed = c.changed || c.body.own
	c.replayable = replayableMethod(req.Method, c.header)
	c.hedgeSafe = hedgeableMethod(req.Method, c.header)
	if c.br, err = t.breakerFor(req); err != nil {
		return nil, err
	}
	if c.adm, err = t.admitterFor(req); err != nil {
		return nil, err
	}
	if c.conc, err = t.limiterFor(req); err != nil {
		return nil, err
	}

	ctx := req.Context()
	// The loop keeps AttemptTimeout, or backoff.DeadlineReserve without
	// one, for the last attempt before the request's deadline.
	opts := [...]retry.Option{retry.WithMaxRetryAfter(t.MaxRetryAfter), retry.WithBudget(t.Budget), retry.WithDeadlineReserve(t.AttemptTimeout), {}, {}}
	if len(t.Classes) > 0 {
		opts[4] = retry.WithClasses(t.Classes...)
	}
	if c.br != nil {
		wait := t.BreakerWait
		if wait <= 0 {
			wait = -1 // fail fast
		}
		opts[3] = retry.WithMaxRejectedWait(wait)
	}
	l, err := retry.NewLoop(ctx, p, opts[:]...)
	if err != nil {
		return nil, err
	}
	if c.hedgeable() {
		if err := t.Hedge.Validate(); err != nil {
			return nil, err
		}
		return c.hedged(ctx, &l)
	}
	for n := 1; ; n++ {
		var a attempt
		c.try(ctx, n, &a)
		if c.br != nil {
			a.ticket.Record(outcome(&a))
		}
		err := c.verdict(&a)
		if err == nil {
			l.Succeeded()
			c.succeeded(&a, &l)
			return a.resp, nil
		}
		d, err := l.Next(ctx, err)
		if err == nil {
			c.retrying(&a, &l, d)
			a.release() // free the connection rather than hold it during the wait
			err = l.Wait(ctx, d)
		}
		if err != nil {
			return c.stop(&a, err, l.Class())
		}
	}
}

// CloseIdleConnections closes the idle connections of Base (or of
// http.DefaultTransport when Base is nil), and those of HedgeBase when it
// is set and is not the same value as Base, calling the method of each
// that has one, so that http.Client.CloseIdleConnections reaches every
// pool under the Transport: HedgeBase's is a pool of its own, which would
// otherwise keep its connections. A HedgeBase whose type cannot be
// compared (a func type) is called besides Base even if it is the same
// function. The Transport never calls it on its own: the pools are shared.
func (t *Transport) CloseIdleConnections() {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	closeIdle(base)
	if hb := t.HedgeBase; hb != nil && !(reflect.ValueOf(hb).Comparable() && hb == base) {
		// Comparable first: == on two values of the same func type panics.
		closeIdle(hb)
	}
}

// closeIdle calls rt's CloseIdleConnections, if it has one.
func closeIdle(rt http.RoundTripper) {
	if c, ok := rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// call is what one RoundTrip knows of its request, fixed before the first
// attempt. Attempts read it and never write it: each attempt's outcome is
// its own value (attempt), so that attempts of one request can run at once.
type call struct {
	t          *Transport
	req        *http.Request
	br         *breaker.Breaker // the request's breaker, or nil
	adm        retry.Admitter   // the request's throttle, or nil
	conc       *limiter.Limiter // the request's concurrency limit, or nil
	base       http.RoundTripper
	header     http.Header // req.Header, or a clone with an Idempotency-Key
	body       body
	replayable bool // the method or a key allows sending it again
	hedgeSafe  bool // the method or a key allows sending it twice at once
	changed    bool // the first attempt cannot send the caller's request as is
	max        int  // attempts the policy allows
}

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

// stop ends a call on err, the *retry.Error of the loop, after attempt a:
// it returns a's response of a retryable status as it is, unless the
// caller's context ended, and otherwise err.
func (c *call) stop(a *attempt, err error, class string) (*http.Response, error) {
	re, _ := err.(*retry.Error)
	if re == nil {
		return nil, err // not from the loop: cannot happen, but stay honest
	}
	c.giveUp(a, re, class)
	if a.resp == nil || re.Reason == retry.ErrCanceled {
		a.release()
		return nil, err
	}
	return a.keepPermit(finalResponse(a.resp, a.lim)), nil
}

// statusError is the failure of an attempt that got a retryable status. It
// describes the response; the attempt keeps the response itself.
type statusError struct {
	status  string
	code    int
	refused error // why it may not be retried, or nil
	why     error // CheckRetry's error with its true answer, or nil
}

// Overload reports whether the answer says the server is overloaded (429
// or 503), for retry.IsOverload: a retry.Class of overloads matches it.
func (e *statusError) Overload() bool {
	return e.code == http.StatusTooManyRequests || e.code == http.StatusServiceUnavailable
}

func (e *statusError) Error() string {
	msg := "retryhttp: server answered " + e.status
	if e.why != nil {
		msg += " (" + e.why.Error() + ")"
	}
	return msg
}

// Unwrap returns why the response may not be retried, if it may not, and
// CheckRetry's error, if it gave one.
func (e *statusError) Unwrap() []error {
	var errs []error
	for _, err := range [...]error{e.refused, e.why} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// attemptError is a network failure with a second error that explains what
// the transport did about it: why it is not retried, the caller's context
// error, or CheckRetry's error.
type attemptError struct {
	err  error
	also error
}

func (e *attemptError) Error() string   { return e.also.Error() + ": " + e.err.Error() }
func (e *attemptError) Unwrap() []error { return []error{e.err, e.also} }

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
