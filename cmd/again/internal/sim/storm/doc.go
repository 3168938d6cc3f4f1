// Package storm models a retry storm: the attempts over time when N clients
// fail at once.
//
// The clients retry on one [backoff.Policy], with and without jitter:
// [Table] shows the synchronised waves a schedule without jitter makes
// and [Peaks] the busiest moment of each (the calculator page's storm
// view).
//
// Like every model of package sim, it is a pure function of its
// configuration and a seed, on a virtual clock.
package storm
