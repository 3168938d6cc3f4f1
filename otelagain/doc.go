// Package otelagain reports the again toolkit's work to OpenTelemetry. It
// records metrics of retries, budgets and breakers, and one span per
// physical HTTP attempt. It plugs into the hooks of packages retry, retryhttp and
// breaker, which themselves never depend on OpenTelemetry.
//
// # Quick start
//
// One line instruments an HTTP client: its retries, its budget, its
// breakers and its attempts' spans, on the global providers (or those
// given to New with WithMeterProvider and WithTracerProvider):
//
//	client := &http.Client{Transport: otelagain.New().Transport("api", &retryhttp.Transport{Policy: p})}
//
// For retry.Do, Run and NewLoop, the option of Telemetry.Retry:
//
//	tel := otelagain.New()
//	dbRetry := tel.Retry("db") // once, then in every call:
//	conn, err := retry.Do(ctx, backoff.Default(), connect, dbRetry)
//
// Budget wraps a budget (a retry.TokenBucket or a fleet.Budget) to count
// its refusals and report its tokens; Admitter and Throttles do the same
// for client-side throttles (package throttle, fleet.Throttle); Group and
// Breaker instrument breakers; Hedger counts the hedges of a
// hedge.Hedger; Limits and Limiter report concurrency limits (package
// limiter). Transport does all of these for the Transport's own
// Budget, Breakers, Throttles, Limits and Hedge: one line instruments
// them all.
//
// A gRPC client's policies (package retrygrpc, a module of its own, which
// otelagain does not import) are the same types, each instrumented in one
// line from the Interceptor's fields, per the key the Interceptor gives
// them (the target, or what its LimitKey, BreakerKey or ThrottleKey
// returns, such as the method). Throttles and Group must come before the
// Interceptor's first call; Limits reads the Limiters as they are, and
// may come at any time:
//
//	ic := &retrygrpc.Interceptor{Budget: tel.Budget("orders", budget),
//		Limits: &limiter.Group{Config: limiter.Config{Algorithm: limiter.Gradient2{}}}}
//	tel.Limits("orders", ic.Limits)       // again.limit.*, per target
//	tel.Throttles("orders", ic.Throttles) // again.throttle.*, if set
//	tel.Group("orders", ic.Breakers)      // again.breaker.*, if set
//
// # Metrics
//
// No semantic convention covers retries, budgets or breakers yet; the
// names follow OpenTelemetry's naming rules under the again. namespace,
// and gRPC's A96 retry metrics (grpc.client.call.retries, .retry_delay)
// where they apply, with A96's buckets. Every attribute set is made once,
// when the instrumented thing is (Retry, Transport, Budget, a Group's key),
// so that recording allocates nothing.
//
// Per call (retry.Do, Run, a Loop's call, one RoundTrip of Transport), with
// the attributes again.retry.name (the name given) and again.retry.reason:
//
//	again.retry.calls           Counter (async)  {call}     calls that ended
//	again.retry.attempts        Histogram        {attempt}  attempts per call, every call, buckets 1, 2,
//	                                                        3, 4, 5
//	again.retry.retries         Histogram        {retry}    retries per call that retried, buckets
//	                                                        1, 2, 3, 4, 5 (as A96's)
//	again.retry.wait.duration   Histogram        s          each wait between attempts (again.retry.name
//	                                                        only), gRPC's latency buckets (0 to 100 s)
//
// Every call is recorded in again.retry.attempts, a first-try success as
// one attempt: the histogram's count is the calls and its sum their
// attempts. A call without retries is recorded in no again.retry.retries,
// as A96 records none. Recording allocates nothing; a measurement of the
// SDK's synchronous instruments costs more than the atomic add of
// again.retry.calls (see BENCHMARKS.md).
//
// again.retry.reason is why the call stopped: success; one of the
// retry.Err* reasons, as exhausted, permanent, deadline, canceled,
// retry_after_too_long, rejected (an open breaker) or budget;
// not_replayable (retryhttp would not send the request again: see
// retryhttp.ErrNotReplayable); or other (an error that is not retrying's,
// or a reason this version does not know).
//
// Per hedge.Hedger (Hedger), with again.hedge.name:
//
//	again.hedge.sent            Counter    {hedge}    hedges sent (copies of an attempt beyond the first)
//	again.hedge.won             Counter    {hedge}    hedges whose answer was their attempt's
//
// Their ratio is the share of hedges that paid off; again.hedge.sent
// against again.retry.attempts is the extra load hedging costs.
//
// Per fault.Injector (Faults), with again.fault.name, again.fault.kind
// (status, reset, latency, ...) and the target, server.address (the
// request's host, or a gRPC call's authority; at most MaxFaultTargets of
// them), each fault also an event again.fault on the span of its
// request's context (the attempt's, under Transport), with server.port
// too:
//
//	again.fault.injected        Counter    {fault}    faults injected
//
// Per budget (Budget, or a Transport's Budget), with again.budget.name:
//
//	again.budget.rejections     Counter        {retry}  retries the budget refused
//	again.budget.tokens         Gauge (async)  {token}  tokens left, read at each collection
//
// Per throttle (Admitter), or per key of a throttle.Group (Throttles),
// with again.throttle.name and, for a Group, again.throttle.key:
//
//	again.throttle.rejections   Counter        {request}    requests rejected locally, never sent
//	again.throttle.p            Gauge (async)  1            probability of rejection of the next
//	                                                        request (throttle.Throttler, fleet.Throttle)
//	again.throttle.rate         Gauge (async)  {request}/s  the send rate a throttle.Rate learned,
//	                                                        once the dependency throttled
//
// Per concurrency limit (Limiter), or per key of a limiter.Group (Limits,
// or a Transport's Limits), with again.limit.name and, for a Group,
// again.limit.key, read from the Limiters at each collection:
//
//	again.limit.limit           Gauge (async)    {call}  the calls it lets in flight at once, now
//	                                                     (fixed, or where an adaptive limit is)
//	again.limit.in_flight       Gauge (async)    {call}  calls holding a permit
//	again.limit.waiting         Gauge (async)    {call}  calls waiting for a permit
//	again.limit.refused         Counter (async)  {call}  calls refused locally, never sent
//
// Per breaker (Breaker), or per key of a Group (Group, or a Transport's
// Breakers), with again.breaker.name and, for a Group, again.breaker.key:
//
//	again.breaker.state         Gauge (async)  {state}       1 for the state the breaker is in, 0 for
//	                                                         the others, with again.breaker.state
//	                                                         (closed, open, half_open, isolated)
//	again.breaker.transitions   Counter        {transition}  state changes, with again.breaker.from
//	                                                         and again.breaker.to (states as above)
//	again.breaker.rejections    Counter        {call}        calls rejected, with again.breaker.state,
//	                                                         the state that rejected them
//	again.breaker.stale         Counter        {report}      outcomes dropped because they arrived after
//	                                                         a state change (breaker.Stale), with
//	                                                         again.breaker.state, the state that
//	                                                         admitted the call
//
// The state is read from the breaker when the metrics are collected
// (Breaker.State), not remembered from its last transition.
//
// Per server-side shedder (Shedder), with again.shed.name:
//
//	again.shed.requests         Counter        {request}  requests shed, with again.shed.criticality
//	                                                      and again.shed.reason
//	again.shed.queue.duration   Histogram      s          each queued request's wait, with its class
//	                                                      and again.shed.reason (admitted if served)
//	again.shed.in_flight        Gauge (async)  {request}  requests being served
//	again.shed.queued           Gauge (async)  {request}  requests waiting in the queue
//
// # Cardinality
//
// Every attribute value comes from a bounded set: the names the program
// gives, the reasons and states above, and a Group's keys. A Group never
// forgets a key, and retryhttp keys its breakers by host: a client that
// calls an unbounded set of hosts should set retryhttp.Transport.BreakerKey
// to map them onto a bounded one (the API's name, or "other"), which caps
// the breaker series at 4 states + 16 transitions + 3 rejections + 2 stale
// reports per key.
// The SDK's own cardinality limit (sdk/metric's WithCardinalityLimit,
// 2000 per instrument by default) is the last guard: series beyond it
// fold into one marked otel.metric.overflow.
//
// # Traces
//
// Transport makes one span per physical attempt, following the stable
// HTTP client conventions: kind CLIENT, named after the method, a child of
// the span in the request's context (the caller's), with
// http.request.method, url.full (credentials and query values replaced by
// REDACTED), server.address, server.port, http.response.status_code,
// error.type, and http.request.resend_count (1 for the first retry, 2 for
// the next, ...) on every attempt but the first. A redirect is a resend
// too, as the conventions say: the request that http.Client sends after a
// redirect (Request.Response set) continues the count of the attempts that
// led to it, so / → 302 → /hello gives the /hello span a count of 1. The attempt's context is
// injected into its headers with the propagator (WithPropagators, or the
// global one). An attempt rejected by a breaker sends nothing and has no
// span.
//
// Attempts of one request that run at once (hedges) are siblings under
// the same parent; one that the Transport cancels because another
// answered first ends at once with the status Error, the description
// "canceled: another attempt answered first" and error.type canceled.
//
// An attempt that is retried gets the event again.retry.wait, with
// again.retry.wait.duration (seconds), when the server asked for the
// wait, again.retry.hint_header, and, when one of the Transport's Classes
// set the wait, again.retry.class, the class's name. The span of the attempt that ends the
// call gets, when the call gave up, the status Error with the reason's
// message and the attribute again.retry.reason. A span with a response
// ends when the response's body is read to its end or closed (retryhttp
// closes those it retries; the final one is the caller's to close, as
// always with net/http), a span without one when its fate is known.
//
// # With otelhttp
//
// Transport's spans carry, for each attempt, the attributes of the HTTP
// client conventions that otelhttp.NewTransport sets, plus the resend
// count and the retry events: do not also give the retryhttp.Transport an
// otelhttp.Transport as its Base, or every attempt has two nested CLIENT
// spans. To keep otelhttp for the logical request (a span, and its
// http.client.* metrics), wrap it around Transport and make its span
// INTERNAL: the logical request is then a parent whose children are the
// attempts' CLIENT spans, which is how the HTTP conventions describe
// resends (the tests check this shape):
//
//	rt := otelhttp.NewTransport(tel.Transport("api", &retryhttp.Transport{Policy: p}),
//		otelhttp.WithSpanOptions(trace.WithSpanKind(trace.SpanKindInternal)))
//
// Two traps of otelhttp do not arise with retryhttp, and the tests check
// both: otelhttp ends its span only when the response's body is read to
// its end or closed, so a response discarded unclosed leaves it open
// (opentelemetry-go-contrib#8258), but retryhttp drains and closes every
// response it does not return; and otelhttp replaces the request's
// GetBody with its own (#8524), which retryhttp calls for each attempt
// after the first, and each attempt still sends the whole body.
//
// Without otelagain, retryhttp.Transport{Base: otelhttp.NewTransport(nil)}
// also gives one CLIENT span per attempt under the caller's, all ended,
// but without http.request.resend_count nor the retry events.
package otelagain
