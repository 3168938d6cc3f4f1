// Package retrygrpc provides gRPC client interceptors that retry and hedge.
// They retry calls on the schedule of a backoff.Policy, with the retry loop
// of package retry, a shared retry.Budget, per-target circuit breakers
// (package breaker) and hedging of idempotent unary calls (package hedge),
// as gRPC's proposal A6 describes them.
//
// # Quick start
//
// One Interceptor per dependency, shared by its connections; its
// DialOptions install the unary and stream interceptors and turn grpc-go's
// own retries off:
//
//	ic := &retrygrpc.Interceptor{
//		Policy:   backoff.Policy{Initial: 100 * time.Millisecond, Max: 2 * time.Second, Retries: 4},
//		Budget:   &retry.TokenBucket{},        // or the fleet module's Redis-shared budget
//		Breakers: &breaker.Group{},            // one breaker per target
//	}
//	conn, err := grpc.NewClient(target, append(ic.DialOptions(),
//		grpc.WithTransportCredentials(creds))...)
//
// Every call on conn is then retried: give it a deadline through its
// context, and retries go on until it but no wait ends past it (the last
// is shortened to leave an attempt time to run). The zero
// Interceptor retries UNAVAILABLE 3 times on backoff.Default()'s schedule.
// Its fields follow the library's rule for zero and negative values (see
// backoff.Policy).
//
// # What is retried
//
//   - UNAVAILABLE, by default; Codes lists others instead.
//   - RESOURCE_EXHAUSTED only when the server sent a pushback (or a
//     RetryInfo), or when Codes
//     lists it: a quota that ran out does not come back by itself, unless
//     the server says when.
//   - A grpc-retry-pushback-ms trailer is honoured as A6 says: a value is a
//     wait of that many milliseconds in place of the policy's delay (up to
//     MaxRetryAfter), though never less than the policy's first delay, so
//     that a pushback of 0 on every call is no hot loop; a negative or
//     malformed one means "do not retry" (see ParsePushback). After a
//     retry that a pushback drove, the policy's schedule starts over: the
//     next retry without a pushback waits the policy's first delay, as
//     A6 and grpc-go's retries do.
//   - A google.rpc.RetryInfo status detail, which Google's APIs send with
//     RESOURCE_EXHAUSTED and UNAVAILABLE, is honoured as the trailer is:
//     its retry_delay is a lower bound on the wait, floored and limited
//     alike, in unary calls, streams and hedged calls, and it makes
//     RESOURCE_EXHAUSTED retryable (see Pushback.RetryInfo).
//   - The call's deadline is kept both ways: retries go on until it and
//     never past it. A policy's wait that would end later than the reserve
//     before the deadline is shortened to end then (the reserve is
//     AttemptTimeout for unary calls, or backoff.DeadlineReserve, 100 ms,
//     without one and for streams; see backoff.FitDeadline), and the call
//     ends with retry.ErrDeadline only when no more than the reserve is
//     left, or at once when a pushback would end after the deadline (a
//     pushback is never shortened). AttemptTimeout bounds each attempt of a
//     unary call, so that a server that stalls costs one attempt.
//   - A stream is retried only while nothing of the response has reached
//     the caller: no message, no headers. Until then the messages sent are
//     replayed on a new stream; afterwards a failure is returned as it is,
//     so that no message is ever received twice (see Stream).
//
// A call whose first attempt fails with a code that is not retried returns
// that status error unchanged. Any other failure is a *retry.Error whose
// Reason says why retrying stopped (retry.ErrExhausted, ErrBudget,
// ErrDeadline, ...) and which wraps the last attempt's status error:
// status.Code(err) and status.FromError(err) read its code as usual,
// except when the call's context ended: the code is then CANCELED (or
// DEADLINE_EXCEEDED), as grpc-go's own calls end, not the UNAVAILABLE of
// the attempt that was about to be retried.
//
// # Budgets and breakers
//
// Budget limits retries across calls: with a *retry.TokenBucket, gRPC's
// retry throttling, but shared by every connection it is given to, and
// across processes with the fleet module's budget. Breakers puts a breaker
// in front of each attempt, one per target (cc.Target(), or per method with
// BreakerKey). By default a call that meets an open breaker fails at once
// with an error matching breaker.ErrOpen, whose status code is
// UNAVAILABLE, without reaching the network or spending budget, so that
// the caller can fall back; BreakerWait makes it wait for the breaker's
// probe instead.
//
// # Hedging
//
// With Hedger set, the unary methods that Idempotent marks are hedged
// instead of merely retried: when an attempt has not answered after the
// Hedger's delay (fixed, or a quantile of the method's recent latencies),
// a copy is sent, up to Hedger.MaxHedges. The first success wins and the
// other copies are canceled; a code that is retried sends the next hedge at
// once; a code that is not ends the call; a positive pushback on a copy
// delays the next hedge by the pushback (A6), and a negative or malformed
// one stops the hedging of the attempt; once every copy has failed, the
// retry loop waits what the server asked (or stops, for a negative one). Hedger.Budget caps the extra load, and an open
// breaker sends no hedge. Only methods that may run twice at once should
// be hedged: reads, and writes the server deduplicates.
//
//	ic := &retrygrpc.Interceptor{
//		Policy:     backoff.Policy{Retries: backoff.NoRetries}, // A6: hedging replaces retries
//		Hedger:     &hedge.Hedger{Quantile: 0.95, Budget: &retry.TokenBucket{TokenRatio: 0.1}},
//		Idempotent: retrygrpc.Methods("/users.Users/Get", "/catalog.Catalog/"),
//	}
//
// # grpc-go's own retries
//
// grpc-go retries by itself when a service config (from the resolver, or
// grpc.WithDefaultServiceConfig) has a retryPolicy. Those retries run
// inside each attempt of the
// Interceptor, so the attempts multiply: 4 of the Interceptor's times 5 of
// the service config's make up to 20 calls to a server that is down, and
// its waits add to ours. The recommended setup, which DialOptions gives,
// passes grpc.WithDisableRetry so that only the Interceptor retries. Keep
// grpc-go's retry only for its transparent retries of calls that never
// left the client, which it makes even with retries disabled.
//
// # Telemetry
//
// OnRetry, OnGiveUp and OnSuccess receive an Event with the call's context
// (which carries the caller's span) and what gRPC's telemetry conventions
// name: rpc.system is System ("grpc"), rpc.method is Event.Method (see
// SplitMethod for rpc.service), rpc.grpc.status_code is int(Event.Code), and
// Event.Err is the attempt's status error; Event.Class names the class of
// Classes whose schedule set the wait, "" when none did (as an attribute,
// add it only when it is not empty: otelagain's again.retry.class). Event
// embeds retry.Event, so
// that a hook written for retry.WithOnRetry, such as an OpenTelemetry
// module's, takes e.Event unchanged. The metrics of gRPC's proposal A96
// follow from the events: grpc.client.call.retries is OnSuccess's or
// OnGiveUp's Attempt-1, grpc.client.call.hedges their Hedges, and
// grpc.client.call.retry_delay the sum of OnRetry's Delay. Per-attempt
// spans come from an OpenTelemetry stats handler (otelgrpc's
// NewClientHandler, with grpc.WithStatsHandler): grpc-go runs it for each
// attempt the Interceptor makes, as siblings under the caller's span.
//
// # Shedding load on the server
//
// ShedServer's interceptors put a gRPC server behind a shed.Shedder: a
// concurrency limit, a queue by criticality (again-criticality metadata)
// under CoDel, deadlines from grpc-timeout, and RESOURCE_EXHAUSTED with a
// grpc-retry-pushback-ms trailer for what is shed, which the Interceptor
// obeys. The Interceptor sends, on each attempt of a call whose context
// carries a criticality (shed.WithCriticality), that class and the attempt
// number: each attempt of a unary call, each copy of a hedged one (with
// its attempt's number: a hedge is not a retry), and each opening of a
// stream, a retried one included:
//
//	s, err := shed.New(shed.Config{Limit: 64})
//	if err != nil {
//		return err
//	}
//	srv := grpc.NewServer((&retrygrpc.ShedServer{Shedder: s}).ServerOptions()...)
//
// # Concurrency
//
// An Interceptor is safe for concurrent use; the hooks run on the
// goroutine of the call. Hedged calls run each copy on a goroutine of its
// own, and return only once every copy has returned. Nothing runs in the
// background, and the package keeps no global state.
package retrygrpc
