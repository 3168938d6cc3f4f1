// Package throttle holds a client's requests back from an overloaded
// dependency. It rejects them before they are sent: the first attempts,
// not only the retries that a retry.Budget caps.
//
// Two admitters, both retry.Admitter:
//
//   - Throttler is the client-side throttling of Google's SRE book: each
//     request is rejected locally with probability
//     max(0, (requests − K·accepts) / (requests + 1)) over a rolling
//     window (K 2, 2 minutes by default). requests counts the requests the
//     Throttler rejected too, which is what keeps the load reaching the
//     dependency near K times what it accepts, whatever the demand.
//     A request sent counts when its outcome is known, so that requests
//     in flight never throttle a dependency that has not signalled
//     overload.
//   - Rate is AWS's adaptive retry mode: a send rate learned with CUBIC
//     from throttles (HTTP 429), in a token bucket that stays off until
//     the first throttle; Admit waits for a token or fails fast.
//
// # When a request counts
//
// A Throttler counts a request it sends when Done reports its outcome, an
// accept or an overload, and a request it rejects when it rejects it. A
// request in flight counts for nothing: counted when admitted, the first
// of many concurrent requests to a new dependency would be requests
// without accepts, and p would reject most of the others (55 of 64 to a
// healthy server, before this rule). The steady state is the book's,
// since every request sent is answered within the window.
//
// An outcome counts in the bucket of the time it came. Done does not read
// the clock, to keep an admitted request at two atomic adds: it counts the
// outcome at the Throttler's last decision, which it followed. While p is
// 0 a Throttler admits without the clock only as many requests as came in
// the last quarter of a bucket (2.5 s by default, at most 64), and an
// overload makes the next request read it; so an outcome is dated never
// late, and early by at most its request's duration and about that quarter
// of a bucket. After an idle spell the outcomes of what is left of that
// credit are dated at the decision before it, and may leave the window
// early. DoneAt counts an outcome at the time given. Snapshot reads the
// counts without moving them.
//
// # Cold start
//
// Counted literally, the book's formula shuts a client out for minutes
// after a burst of overload signals with no accept (a backend that starts
// empty or restarts, at a demand many times its capacity): p reaches
// requests/(requests+1), nearly 1, the few requests let through earn
// accepts one by one while the Throttler's own rejections keep counting,
// and the window fills with rejections faster than with accepts. On a
// virtual clock, after a one-second outage at 10 times the capacity and
// without retries, the book's counting lets through 1 to 2 % of what the
// backend can take for the next three minutes.
//
// A Throttler therefore does not count the requests it rejects while the
// window holds no accept at all. p is then (sent)/(sent + 1) over the
// overloads actually sent, still near 1: a dead dependency sees a trickle
// of probes (about √(2·D·t) of them over t at a demand D), and when one is
// accepted the counting is the book's again, from a window that the
// outage did not fill. The steady state is untouched, since any window
// with an accept counts as the book does. After the backend recovers
// (TestRecovery, demand 3 to 30 times the capacity, no retries), it is
// back at 90 % of its capacity within 3 s of a 1 s outage and within 15 s
// of a 30 s one; after an outage as long as the window, within about a
// minute. A cap on p (Config.MaxP: failsafe-go caps at 0.9, Envoy's
// admission control at 0.8) shortens that further, at a price: with it,
// at least 1−MaxP of the demand is always sent, so above K/(1−MaxP) times
// what the dependency accepts (retried attempts included) the load is
// no longer K times the accepts. The default has no cap.
//
// What counts as an accept is up to the integration, which knows its
// protocol: retry.IsOverload for retry.Do (rejections, an exhausted
// budget, errors with an Overload() bool method), HTTP 429 and 503 in
// retryhttp.Transport, RESOURCE_EXHAUSTED and UNAVAILABLE in retrygrpc.
// Anything that is not an overload signal is an accept.
//
// A request a throttler refuses is not sent: the error (a *RejectedError
// or a *RateError) matches ErrRejected and reads as a rejection to package
// retry (Rejected() is true), so that a retry Budget neither spends nor
// refunds for it.
//
// Group keeps one admitter per key (per host in retryhttp.Transport, per
// target or method in retrygrpc), with a bound on the keys.
//
// # Quick start
//
//	th, err := throttle.New(throttle.Config{}) // K 2 over 2 minutes
//	if err != nil {
//		return err
//	}
//	err = retry.Run(ctx, backoff.Default(), call,
//		retry.WithAdmitter(th, nil), // nil: retry.IsOverload classifies
//		retry.WithBudget(budget))
//	if errors.Is(err, throttle.ErrRejected) {
//		// rejected locally: the dependency is overloaded
//	}
//
// Over HTTP, per host:
//
//	client := &http.Client{Transport: &retryhttp.Transport{
//		Throttles: &throttle.Group{}, // SRE throttlers, one per host
//	}}
//
// Time is a parameter: AdmitAt, SnapshotAt, AcquireAt and DoneAt take it,
// and Config.Clock and RateConfig.Clock replace time.Now, so that tests
// and the simulator (again sim throttle) drive them on a virtual clock.
// Randomness comes from Config.Rand, which a test fixes.
package throttle
