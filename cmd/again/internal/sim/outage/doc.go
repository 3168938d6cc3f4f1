// Package outage models a metastable failure: a load spike that leaves a
// server collapsed.
//
// Unless a retry budget or a circuit breaker limits the retries, the server
// stays collapsed after the spike ends; [Outage] compares the strategies on
// the same arrivals.
//
// Like every model of package sim, it is a pure function of its
// configuration and a seed, on a virtual clock.
package outage
