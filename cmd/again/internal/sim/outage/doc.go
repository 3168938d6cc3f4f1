// Package outage models a metastable failure: a load spike that leaves a
// server collapsed.
//
// Unless a retry budget or a circuit breaker limits the retries, the server
// stays collapsed after the spike ends; [Run] compares the strategies on
// the same arrivals. With Config.Shed the server protects itself
// with package shed's decisions (admission.Core, the middleware's own
// code) on the model's clock, and the clients wait the Retry-After it sends.
//
// Like every model of package sim, it is a pure function of its
// configuration and a seed, on a virtual clock.
package outage
