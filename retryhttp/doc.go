// Package retryhttp provides an http.RoundTripper that retries safely. It
// retries failed HTTP requests with exponential backoff and jitter from the
// backoff package and the retry loop of the retry package.
//
// # Quick start
//
// Put a Transport under any http.Client; the zero value has sensible
// defaults (see Transport):
//
//	client := &http.Client{Transport: &retryhttp.Transport{}}
//	resp, err := client.Get("https://api.example.com/items")
//
// Tune the schedule, the statuses and the limits with its fields, and give
// each request a deadline through its context; retries go on until it, and
// no wait ends past it (the last is shortened to leave an attempt time to
// run, see Transport.Policy):
//
//	client := &http.Client{Transport: &retryhttp.Transport{
//		Policy:         backoff.Policy{Initial: 200 * time.Millisecond, Max: 5 * time.Second, Retries: 4},
//		RetryStatuses:  []int{429, 500, 502, 503, 504},
//		MaxRetryAfter:  30 * time.Second,
//		AttemptTimeout: 10 * time.Second,
//		Logger:         slog.Default(),
//	}}
//	ctx, cancel := context.WithTimeout(ctx, time.Minute)
//	defer cancel()
//	req, _ := http.NewRequestWithContext(ctx, "PUT", url, bytes.NewReader(payload))
//	resp, err := client.Do(req)
//
// Every field follows the module's rule for zero and negative values,
// stated on backoff.Policy (MaxRetryAfter -1, for example, honours no
// Retry-After).
//
// Because it is a RoundTripper, it composes with other transports: wrap an
// OAuth or tracing transport as Base, or wrap the Transport in them.
//
// # Safety
//
// The Transport retries only what cannot do harm twice: safe and idempotent
// methods, requests carrying an Idempotency-Key with a value (a blank one
// is no key), and any request whose
// connection could not be established. A POST or PATCH is retried only if
// the caller set the key, or set GenerateIdempotencyKey for a server known
// to honour generated keys: a server that ignores the header would execute
// a retried request twice. It never retries sooner than a server's
// Retry-After asks, nor, whatever the server asks, sooner than the
// Policy's first delay (a server answering Retry-After: 0 to every request
// would otherwise get a retry storm), and never waits longer than
// MaxRetryAfter or past the request's deadline: it returns that response
// instead. It replays bodies
// with GetBody rather than copying them, drains the responses it discards so
// that connections are reused, and hands the final response to the caller
// untouched.
//
// # Redirects
//
// The Transport does not follow redirects: it hands a 3xx response to its
// caller like any other final response. http.Client follows it (unless
// CheckRedirect says otherwise), sending a new request that passes through
// the Transport again, so each hop gets a retry loop of its own, with the
// full policy: attempts, waits and budget are counted per hop, and a
// request's deadline bounds all hops together. http.Client replays the
// body with GetBody, drops it on a 303 (and on a 301 or 302 after a POST),
// and copies the first request's headers to every hop, except that from
// the first hop that leaves the original host and its subdomains on it
// removes Authorization, Cookie and their kin. It keeps them for another
// port or scheme of the same host, https to http included; a caller that
// must not send credentials there removes them in CheckRedirect, as the
// again fetch command does.
//
// # Logging
//
// Logger receives a line per retry and per give-up, with the method, the
// URL as RedactURL prints it (no password, no query values), the attempt
// and the status or error; never headers or bodies.
//
// # Circuit breakers
//
// Retrying a host that is down, even with jitter, keeps sending it traffic.
// Set Breakers to put a circuit breaker (package breaker) in front of every
// attempt, one per host (or per BreakerKey): once a host fails too often,
// its requests fail at once with an error matching breaker.ErrOpen,
// without touching the network or the Budget, so that the caller can fall
// back:
//
//	client := &http.Client{Transport: &retryhttp.Transport{
//		Breakers: &breaker.Group{}, // per host, the breaker's defaults
//	}}
//
// Set BreakerWait to have a request wait for its breaker's probe instead,
// for at most that long and never past the request's deadline. A retry.Do
// around a breaker waits by default: package breaker's "Meeting an open
// breaker" compares the two.
//
// # Hedging
//
// Transport.Hedge (a *hedge.Hedger, shared by every request) sends a copy of
// an attempt that has not answered after a delay, fixed or the p95 of the
// host's recent latencies, and takes the first response:
//
//	client := &http.Client{Transport: &retryhttp.Transport{
//		Policy: backoff.Policy{Retries: 2},
//		Hedge: &hedge.Hedger{
//			Quantile: 0.95,
//			Budget:   &retry.TokenBucket{TokenRatio: 0.1}, // hedges ≤ ~10 % of requests
//		},
//	}}
//
// Only requests that may run twice at once are hedged: the safe methods
// (GET, HEAD, OPTIONS, TRACE, QUERY) and, whatever the method, a request
// with an Idempotency-Key that is not blank (the caller's, or one that
// GenerateIdempotencyKey adds). PUT and DELETE are retried but not hedged
// without a key: a retry follows a copy that failed, a hedge runs beside
// one that may already have succeeded (a DELETE's hedge would meet a 404).
// Each copy has its own body from GetBody (a body without one is never
// hedged, and a hedge whose GetBody fails is not sent), and a hedged
// attempt keeps the retry rules: ReadBody reads the winner's body within
// the winner's AttemptTimeout, so a winner whose body is cut or stalls is
// retried like any attempt. A 429, a 503 or a Retry-After stops the
// hedging of the whole request: the copies in flight run on, and its
// retries go out one copy at a time, since a server that asks for less
// load should not get twice as much. Nothing is hedged while the host's
// breaker is not closed. A loser is canceled, or drained and closed if it
// answered too, so that its connection is reused; the winner's Body is
// the caller's. Event.Hedge says which copy answered. Being ready to
// hedge costs a request that needs no hedge 8 allocations through
// net/http, for its first copy's own request and context (BENCHMARKS.md
// says which); without Hedge the Transport allocates nothing of its own.
// Hedge reads and idempotent writes of servers whose latency has a long
// tail; not a server that is slow because it is overloaded (the Budget is
// there for that), nor requests that cost the server much: see package
// hedge, "When not to hedge". On HTTP/2, Go's Transport sends a hedge as a second stream of
// the first copy's connection, which serves a slow server but not a
// stalled connection: HedgeBase gives hedges connections of their own.
//
// # Hooks and errors
//
// OnRetry, OnGiveUp and OnSuccess receive an Event: the attempt, the
// response or error, the wait and which header asked for it (HintHeader),
// and, in OnSuccess, how many attempts the response took. CheckRetry
// replaces the status list and the network rules with the caller's own,
// with go-retryablehttp's meaning. An error from RoundTrip is a
// *retry.Error (inside the http.Client's *url.Error) that matches one
// reason; a retry.Do around a client using this Transport treats it as
// the retry package's "Loops inside loops" section says.
//
// The Transport runs retry.Loop, the loop of retry.Do. ParseRetryAfter,
// ParseRateLimit, ParseRateLimitReset and NewIdempotencyKey are exported
// for callers that build their own loop.
package retryhttp
