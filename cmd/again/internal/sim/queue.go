package sim

import (
	"math"
	"time"
)

// Queue is the event queue of a model: a min-heap of events ordered by
// time, ties broken by the order in which they were pushed, so that a run
// never depends on the heap's internal layout and any correct heap pops
// the same sequence. E is the model's event payload, kept small and free
// of pointers.
//
// The heap is 4-ary: half the depth of a binary heap for the same number
// of sift steps' comparisons, and a node's children share a cache line.
// Models whose every event schedules the next (most of OCC's) use top and
// replace, one sift instead of a pop's and a push's.
type Queue[E any] struct {
	items []item[E]
	seq   uint64
}

type item[E any] struct {
	at  time.Duration
	seq uint64
	e   E
}

func (a *item[E]) before(b *item[E]) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

// Reset empties q and restarts its tie-breaking order, keeping its storage,
// so that a model reuses one queue across runs without allocating.
func (q *Queue[E]) Reset() { q.items, q.seq = q.items[:0], 0 }

// Len returns the number of events scheduled.
func (q *Queue[E]) Len() int { return len(q.items) }

// Push schedules e at time at. Every model's clock starts at 0 and only
// adds waits and delays to it, so a negative at is a sum that overflowed,
// from a wait as long as a time.Duration can be (a multiplier of 1e308, a
// rate of 1e-20 requests per second): it is the end of time, after every
// other event, rather than a time before the start.
func (q *Queue[E]) Push(at time.Duration, e E) {
	at = EndOfTime(at)
	q.seq++
	q.items = append(q.items, item[E]{at, q.seq, e})
	h := q.items
	i := len(h) - 1
	x := h[i]
	for i > 0 {
		p := (i - 1) / 4
		if !x.before(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
}

// Top returns the earliest event without removing it. The queue must not
// be empty.
func (q *Queue[E]) Top() (time.Duration, E) {
	return q.items[0].at, q.items[0].e
}

// Pop removes and returns the earliest event. The queue must not be empty.
func (q *Queue[E]) Pop() (time.Duration, E) {
	h := q.items
	top := h[0]
	n := len(h) - 1
	last := h[n]
	q.items = h[:n]
	if n > 0 {
		q.down(last)
	}
	return top.at, top.e
}

// Replace removes the earliest event and schedules e at time at: pop then
// push, in one sift. The queue must not be empty.
func (q *Queue[E]) Replace(at time.Duration, e E) {
	at = EndOfTime(at)
	q.seq++
	q.down(item[E]{at, q.seq, e})
}

// down places x at the root, the root's old item being gone, and sifts it
// down to its place.
func (q *Queue[E]) down(x item[E]) {
	h := q.items
	n := len(h)
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for j := c + 1; j < min(c+4, n); j++ {
			if h[j].before(&h[m]) {
				m = j
			}
		}
		if !h[m].before(&x) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = x
}

// Peek returns the time of the earliest event, and false if the queue is
// empty.
func (q *Queue[E]) Peek() (time.Duration, bool) {
	if len(q.items) == 0 {
		return 0, false
	}
	return q.items[0].at, true
}

// EndOfTime maps a negative event time, a sum that overflowed, to the end
// of time (see push).
func EndOfTime(at time.Duration) time.Duration {
	if at < 0 {
		return math.MaxInt64
	}
	return at
}

// FromFloat converts a number of nanoseconds to a Duration, saturating at
// the largest one: a float too large for an int64 would otherwise convert
// to any value, negative ones included, depending on the machine.
func FromFloat(ns float64) time.Duration {
	if !(ns < math.MaxInt64) { // NaN included
		return math.MaxInt64
	}
	if ns < 0 {
		return 0
	}
	return time.Duration(ns)
}
