// Package backoff describes a retry schedule: exponential backoff with jitter.
// A Policy says how long to wait before each retry and how many retries to
// make.
//
//	d(n) = min(Max, Initial × Multiplier^(n−1))   the nominal delay before retry n
//
// Jitter draws the actual delay around d(n) so that clients that failed
// together do not retry together; see [Jitter] for the five kinds. Max is a
// hard ceiling that no jitter exceeds. Delay runs in constant time and
// saturates instead of overflowing, for every n.
//
// # Quick start
//
//	p := backoff.Policy{Retries: 5} // zero fields take their defaults
//	p.MaxAttempts()                 // 6: the first attempt and 5 retries
//	p.Delay(3)                      // 2s: 500ms × 2², the nominal delay
//	p.Sample(3, 0, nil)             // a jittered delay in [0, 2s]
//	for d := range p.Waits(nil) {   // one call's waits, in order
//		...
//	}
//
// Most programs do not loop themselves: package retry runs the loop (with
// contexts, deadlines, Retry-After hints and budgets) and package retryhttp
// retries HTTP requests, both from a Policy. Package backoff/plan computes
// what can be known about a schedule in advance: the distribution of the
// total wait, whether it fits a deadline, and which parameter makes it fit.
//
// # Deadlines
//
// [FitDeadline] is the rule every retry loop of the module applies to a
// wait before a deadline: a wait drawn from the schedule that would end
// later than [DeadlineReserve] (100 ms, or the attempts' own timeout)
// before the deadline is shortened to end then, so that one more attempt
// starts in time; the loop stops only when no more than the reserve is
// left. A server's hint is never shortened. The calculator and the
// simulator apply the same function, so that they predict what the loops
// do.
//
// # Zero and negative fields
//
// [Policy] states the module's rule for zero and negative values, with the
// table of its fields: the zero Policy is [Default].
//
// # Purity and concurrency
//
// The package is pure: no clock, no sleeping, no goroutines, no I/O; the
// randomness comes from a [Rand] the caller may fix. A Policy is a plain
// value whose methods never modify it and are safe for concurrent use;
// Sample and Waits are as safe as the Rand passed to them (nil, the
// default, is safe).
package backoff
