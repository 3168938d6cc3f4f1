package backoff

import (
	"iter"
	"time"
)

// Waits returns the waits of one call: the jittered delay before each retry
// in turn, p.MaxAttempts()−1 of them, drawn with r as Sample draws them (a
// nil r means math/rand/v2's top-level functions). The sequence keeps the
// previous delay, which DecorrelatedJitter needs, so each range over it is
// one call's schedule from the start; ranging twice gives two independent
// schedules. Under NoRetries it yields nothing.
//
//	for d := range p.Waits(nil) {
//		if err := op(); err == nil {
//			return nil
//		}
//		time.Sleep(d) // or a timer that also watches the context
//	}
//	return op() // the last attempt
//
// For code written against cenkalti/backoff's NextBackOff, iter.Pull gives
// the same shape, with ok == false in place of backoff.Stop:
//
//	next, stop := iter.Pull(p.Waits(nil))
//	defer stop()
//	d, ok := next()
//
// Unlike a cenkalti/backoff value, a Policy holds no state: the state lives
// in the sequence, so one Policy can serve any number of calls at once. The
// retry package runs this loop for you, with contexts, deadlines and
// Retry-After hints.
func (p Policy) Waits(r Rand) iter.Seq[time.Duration] {
	return func(yield func(time.Duration) bool) {
		var prev time.Duration
		for n := 1; n < p.MaxAttempts(); n++ {
			prev = p.Sample(n, prev, r)
			if !yield(prev) {
				return
			}
		}
	}
}
