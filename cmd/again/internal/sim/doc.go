// Package sim holds what the models behind `again sim` share.
//
// The models, one package each, are discrete-event simulations of many
// clients retrying against a shared dependency, driven by the library's own
// schedules ([backoff.Policy]), retry budgets and circuit breakers, so that
// what they show is what that code does:
//
//   - occ: the optimistic-concurrency model of the AWS Architecture Blog's
//     "Exponential Backoff And Jitter" (2015), backoff algorithms compared;
//   - outage: a load spike that leaves a server collapsed unless a retry
//     budget or a circuit breaker limits the retries;
//   - fleet: retry amplification across a fleet, per-client and shared
//     budgets, buckets and breakers;
//   - storm: the attempts per time bucket when N clients fail at once on
//     one policy, with and without jitter (the calculator page's storm
//     view);
//   - hedge: hedged requests against a long-tailed latency (The Tail at
//     Scale), and the hedge storm on an overloaded server, with and
//     without a budget;
//   - throttle: client-side throttling over a demand sweep, the SRE
//     book's counting (package throttle) against a budget alone,
//     failsafe-go's sent-only counting and AWS's CUBIC send rate;
//   - limit: a client's concurrency limit (none, fixed, AIMD, Vegas,
//     Gradient2) on a load ramped past the server's capacity.
//
// This package holds what they share: the configuration errors
// ([FieldError], [ErrInvalid]) and the limits of several models, the
// [Runner] of independent runs and their random streams ([Stream]), the
// event [Queue], the breaker's virtual clock ([VirtualClock]) and the retry
// [Strategy] of the outage and fleet models. Models import it and never
// each other; the command and the page import the models.
//
// Every model is a pure function of its configuration and a seed: it runs on
// a virtual clock (an event queue), reads no wall clock, starts no goroutine
// and does no I/O, so that the calculator page can run it in WebAssembly and
// its results are the same on every machine. Each independent run draws from
// its own random stream, derived from the seed and what identifies the run
// (such as the client count, the algorithm and the run number), never from
// the order in which runs execute: a [Runner] may run them on every core and
// the results do not change.
//
// Quick start:
//
//	rows, err := occ.Run(occ.Config{Clients: []int{50}, Seed: 1})
//	if err != nil {
//		return err // a *sim.FieldError naming the field
//	}
//	for _, r := range rows {
//		fmt.Println(r.Algorithm, r.Calls, r.TimeMS)
//	}
//
// Configurations are plain values whose zero fields mean the published
// models' parameters. The functions are safe for concurrent use; a Runner
// other than nil runs a model's independent runs concurrently.
package sim
