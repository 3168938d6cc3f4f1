// Package breaker provides a circuit breaker for calls of any type. When a
// dependency fails too often, a breaker stops calling it for a while (open),
// then lets a few probe calls find out whether it is back (half-open), and
// resumes normal traffic (closed) when they succeed. Retrying alone, even with jitter, keeps sending a dependency
// that is down a share of the traffic; a breaker gives it room to recover.
//
// # Quick start
//
//	var b breaker.Breaker // the recommended rules; or breaker.New(cfg)
//
//	user, err := breaker.Call(ctx, &b, func(ctx context.Context) (*User, error) {
//		return client.GetUser(ctx, id)
//	})
//	if errors.Is(err, breaker.ErrOpen) {
//		// Rejected without calling the dependency; err.(*breaker.OpenError).Wait
//		// says when a call may be admitted again.
//	}
//
// One Breaker guards calls of any result type: Do for operations that return
// only an error, Call and CallJudged for operations that return a value
// (CallJudged judges a result from the value too: an HTTP 503 arrives as a
// response, not an error), Allow and Ticket for code that cannot be wrapped
// in a function.
//
// # The rules
//
// Closed, the breaker counts outcomes in a rolling window (10 s in 10
// buckets by default) and trips when the failure ratio reaches a threshold
// (0.5) once the window holds a minimum number of calls (20); optionally
// also after a run of consecutive failures, and calls slower than a
// threshold can count as failures. See Config for every rule and its
// default.
//
// Open, calls are rejected with an *OpenError, matched by ErrOpen, that
// says how long until a probe will be admitted. The open period comes from a
// backoff.Policy: the first trip waits its first delay (5 s, drawn from
// 2.5 s to 5 s by the default equal jitter), each trip after a failed probe
// the next one (10 s, 20 s, ... up to 1 min), with jitter, so
// that a fleet of breakers does not probe in lockstep and a dependency that
// stays down is probed less and less.
//
// Half-open, a limited number of probes (1) are admitted and the other calls
// rejected; enough successful probes close the breaker, a failed probe opens
// it again. A probe that never reports, because its caller hung or vanished,
// counts as failed after ProbeTimeout (10 s), so the breaker is never stuck
// half-open.
//
// Which outcomes count is the caller's choice (Config.Classify,
// CallJudged): by default every error is a failure except context.Canceled
// (a caller gave up: neutral, neither success nor failure) and errors
// wrapped with NotFault (not the dependency's fault: neutral). Isolate and
// Reset control the breaker by hand; Snapshot reports its state and counts;
// Config.OnStateChange is called after each change and Config.OnReject
// for each rejection, outside any lock (Group.Configure gives each key's
// breaker hooks of its own; module otelagain builds its metrics on them).
//
// # Meeting an open breaker: waiting or failing fast
//
// The two ways to put a breaker under a retry loop differ on purpose:
//
//   - retry.Do around a breaker (see the examples) waits for it. An
//     *OpenError implements RetryAfter() time.Duration and Rejected() bool,
//     which package retry reads from any error: the loop waits until the
//     breaker will admit a probe instead of burning its attempts on
//     rejections, stops at once when that is past its deadline or longer
//     than its limit (retry.WithMaxRejectedWait, by default
//     retry.WithMaxRetryAfter's 1 minute), and neither spends nor refunds
//     its budget on a rejection, which is not a failure of the dependency.
//     A caller who wraps a breaker in a retry loop asked for that.
//   - retryhttp.Transport with Breakers fails fast by default: a request
//     that meets an open breaker returns an error matching ErrOpen at once,
//     within microseconds, without touching the network or the budget, so
//     that the caller can fall back, as callers of gobreaker, resilience4j
//     and Hystrix expect. Its BreakerWait field makes it wait for the probe
//     instead, within the request's deadline.
//
// Neither waits for a breaker isolated by hand (Isolate): its *OpenError
// also matches ErrIsolated and reports Permanent() true, so a retry loop
// stops at once with retry.ErrPermanent.
//
// # Time and fleets
//
// Config.Clock makes time injectable: the breaker reads the clock only when
// calls are admitted or report, never sleeps and never starts goroutines or
// timers, so tests and the simulator drive it on virtual time.
// Config.Shared shares one state across a fleet of processes through a store
// such as Redis (see Shared, and package breakertest for a store in memory).
//
// # Cost
//
// The closed state's success path reads no clock and takes no lock: a few
// atomic operations and no allocation.
//
// # Concurrency
//
// A Breaker is safe for concurrent use; Config and the other types are plain
// values. Nothing runs in the background.
package breaker
