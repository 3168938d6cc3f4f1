// Package limit models a client bounding its calls in flight before an
// overloaded server.
//
// [Run] compares no limit, a fixed one and package limiter's adaptive
// limits (AIMD, Vegas, Gradient2) on a load ramped past the server's
// capacity, after Envoy's adaptive concurrency filter.
//
// Like every model of package sim, it is a pure function of its
// configuration and a seed, on a virtual clock.
package limit
