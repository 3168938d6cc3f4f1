package admission

import (
	"sync/atomic"
	"time"
)

// capBuckets is the number of slices of the window a dropCap counts in.
const capBuckets = 10

// dropCap is Finagle's cap on deadline drops: at most fraction of the
// requests that arrived over the last window may be dropped for their
// deadline, so that a client whose clock or timeout is wrong (every
// deadline already passed on arrival) cannot black-hole its traffic.
// Finagle's DeadlineFilter uses 20 % over 10 s.
//
// It counts in capBuckets slices of the window. Counting an arrival reads
// no clock (it costs one atomic add on the path of every request): it
// lands in the current slice, which only the queue's work moves (advance,
// with the Shedder's lock held, by a request that is queued or dropped).
// After a time with nothing queued, the arrivals of that time are counted
// in the slice that was current, and age out with it: the cap then allows
// fewer drops than it would, never more. An arrival racing with the move
// to a new slice may be lost.
type dropCap struct {
	slice    time.Duration // window / capBuckets
	fraction float64

	cur     atomic.Int64 // index of the current slice's bucket
	buckets [capBuckets]capBucket
}

type capBucket struct {
	arrived atomic.Int64
	epoch   int64 // the slice number counted, from 1; 0: never used. Guarded by the Shedder's lock.
	dropped int64 // guarded by the Shedder's lock
}

// arrive counts an arriving request.
func (c *dropCap) arrive() { c.buckets[c.cur.Load()].arrived.Add(1) }

// advance makes the slice of t (an offset from the Shedder's origin)
// current, resetting its bucket if it counted an older slice. It returns
// the slice's number.
func (c *dropCap) advance(t time.Duration) int64 {
	n := int64(t/c.slice) + 1
	i := n % capBuckets
	if b := &c.buckets[i]; b.epoch != n {
		b.epoch = n
		b.dropped = 0
		b.arrived.Store(0)
	}
	c.cur.Store(i)
	return n
}

// allow reports whether one more deadline drop at t stays within the cap,
// and counts it if so.
func (c *dropCap) allow(t time.Duration) bool {
	n := c.advance(t)
	var arrived, dropped int64
	for i := range c.buckets {
		b := &c.buckets[i]
		if b.epoch > n-capBuckets && b.epoch <= n {
			arrived += b.arrived.Load()
			dropped += b.dropped
		}
	}
	if float64(dropped+1) > c.fraction*float64(arrived) {
		return false
	}
	c.buckets[n%capBuckets].dropped++
	return true
}
