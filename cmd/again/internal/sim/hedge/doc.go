// Package hedge models hedged requests against a long-tailed latency.
//
// [Run] shows the tail cut at normal load (The Tail at Scale) and the hedge
// storm on an overloaded server, with and without a budget.
//
// Like every model of package sim, it is a pure function of its
// configuration and a seed, on a virtual clock.
package hedge
