package throttle

import (
	"math"
	"sync/atomic"
)

// maxCredit bounds a credit: the requests admitted, or the responses
// counted, without the clock are counted at the next decision under the
// lock, at most this many late (the breaker, likewise, places its
// successes in its window every 16th): a clock read and the lock cost
// more than the rest of an admission.
const maxCredit = 64

// credit is what the Throttler and the Rate let calls do without the lock
// or the clock: granted by a decision under the lock, spent with one
// atomic add, and taken back by the next decision, which counts what was
// spent. A call that finds none left takes it below zero and goes to the
// lock. The zero credit holds nothing.
type credit struct {
	left    atomic.Int64
	granted int64 // the last grant; the owner's lock guards it
}

// spend takes one unit and reports whether there was one.
func (c *credit) spend() bool { return c.left.Add(-1) >= 0 }

// settle takes the credit back and returns how much of it was spent since
// the grant. The owner's lock is held.
func (c *credit) settle() int64 {
	used := c.granted - max(c.left.Swap(0), 0)
	c.granted = 0
	return used
}

// grant gives the whole units of n, at most maxCredit and none below 1.
// The owner's lock is held, and the last grant was settled.
func (c *credit) grant(n float64) {
	c.granted = int64(math.Min(math.Max(n, 0), maxCredit))
	c.left.Store(c.granted)
}
