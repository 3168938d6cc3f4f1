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
//   - Rate is AWS's adaptive retry mode: a send rate learned with CUBIC
//     from throttles (HTTP 429), in a token bucket that stays off until
//     the first throttle; Admit waits for a token or fails fast.
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
