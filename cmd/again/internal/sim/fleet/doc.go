// Package fleet models retry amplification across a fleet of clients.
//
// [Run] compares per-client and shared budgets, token buckets and breakers
// over fleet sizes and failure probabilities.
//
// Like every model of package sim, it is a pure function of its
// configuration and a seed, on a virtual clock.
package fleet
