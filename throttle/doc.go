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
