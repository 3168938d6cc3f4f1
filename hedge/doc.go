// Package hedge sends a copy of a slow call and takes the first answer.
// Retries fight failures; hedges fight slowness: when most
// answers come in 5 ms but one in fifty takes a second, a copy sent after
// the 95th percentile of the latency answers, most of the time, long
// before the slow one would have (The Tail at Scale, Dean and Barroso,
// 2013). Hedging at the q-th quantile costs about 1 − q extra requests.
//
// # Quick start
//
//	// One Hedger per dependency, shared by every call to it.
//	h := &hedge.Hedger{
//		Quantile: 0.95,                                // hedge after the key's p95
//		Budget:   &retry.TokenBucket{TokenRatio: 0.1}, // hedges ≤ ~10 % of successes
//	}
//	user, err := hedge.Do(ctx, backoff.Policy{Retries: -1}, h, "users-db",
//		func(ctx context.Context) (User, error) { return lookup(ctx, id) })
//
// Do is retry.Do with each attempt hedged; with no retries, as above, it
// is gRPC's hedging (proposal A6). Attempt makes one hedged attempt, for
// code that runs its own loop (retryhttp.Transport, a gRPC interceptor).
//
// # What a copy's answer does
//
//   - A success wins: the other copies' contexts are canceled, and the call
//     returns once they have returned. A loser's value, if it succeeded
//     too, goes to Call.Discard.
//   - A retryable failure (not Permanent, accepted by the classifier) sends
//     the next hedge at once, if one is left, instead of waiting for the
//     delay: the failure said nothing about slowness.
//   - A permanent failure ends the attempt at once: another copy would meet
//     it too.
//   - A failure with a wait hint (a server's Retry-After or pushback), or
//     one refused by a breaker, stops hedging: the copies in flight run on,
//     and if they all fail the attempt's error is the hinted one, so that
//     the retry loop waits what the server asked.
//   - When every copy failed, the retry loop gets one error, and gives up
//     with one *retry.Error, as it does without hedging.
//
// # The delay
//
// A fixed delay (Hedger.After), or a quantile of the latencies of recent
// successful attempts to the same key, over a sliding window of the last
// Hedger.Window of them, with no hedging of a key until Hedger.Warmup
// latencies were seen. Failures are not observed: a fast failure would pull
// the quantile down and send hedges too early. A copy that lost although it
// began first is observed with the time it ran, a lower bound of its
// latency, so that the winners' short latencies do not drag the quantile
// down either.
//
// # When not to hedge
//
//   - A request that must not run twice: a hedge is a duplicate by design,
//     sent while the first copy may still succeed. Hedge only reads and
//     idempotent writes (an Idempotency-Key the server honours).
//   - A server slow because it is overloaded: a hedge adds load exactly
//     when it hurts, and with a fixed delay every request is hedged once the
//     server slows past it: twice the load, a storm. A Budget caps the
//     extra load (a retry.TokenBucket with TokenRatio 0.1 holds hedges near
//     10 % of successful attempts); a quantile delay follows the slowdown,
//     so it hedges about 1 − q of requests however slow the server is.
//   - A request that costs a lot to serve (a large scan, an expensive
//     computation): the copy doubles that cost, and canceling the loser
//     saves only the part the server has not done yet.
//   - A latency that is uniform rather than long-tailed: hedging after p95
//     then saves little, since the copy takes as long as the first.
//
// # Concurrency
//
// The first copy runs on the calling goroutine, each hedge on a goroutine
// of its own. An attempt whose first copy answers before the delay starts
// no goroutine. Once the delay passes, the hedge timer's goroutine
// coordinates the attempt while the first copy runs on: it starts the
// hedges, reads the copies' answers, watches the caller's context for the
// copies, and calls the hooks and Call.Discard; one goroutine at a time
// coordinates. Every copy has returned when Do or Attempt returns, so an
// operation must return soon after its context is done. A copy's context
// ends with the attempt (Call.KeepWinner keeps the one a result still
// needs); the first copy's context follows the caller's on its own until
// the timer fires.
// Budget, Allow and the latency windows are shared by concurrent calls
// and checked atomically: a hedge is sent only after the Budget granted
// it, however many calls race for the last token.
package hedge
