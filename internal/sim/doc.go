// Package sim holds the models behind `again sim`: discrete-event
// simulations of many clients retrying against a shared dependency, driven
// by the library's own schedules ([backoff.Policy]), retry budgets and
// circuit breakers, so that what they show is what that code does.
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
// Quick start, the optimistic-concurrency model of the AWS Architecture
// Blog's "Exponential Backoff And Jitter":
//
//	rows := sim.OCC(sim.OCCConfig{Clients: []int{50}, Runs: 100, Seed: 1})
//	for _, r := range rows {
//		fmt.Println(r.Algorithm, r.Calls, r.TimeMS)
//	}
//
// and, for a page that shows what one schedule does to a server when many
// clients fail at once, [Storm].
package sim
