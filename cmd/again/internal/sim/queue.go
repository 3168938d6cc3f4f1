package sim

import "time"

// queue is the event queue of a model: a binary min-heap of events ordered
// by time, ties broken by the order in which they were pushed so that a run
// never depends on the heap's internal layout. E is the model's event
// payload, kept small and free of pointers.
type queue[E any] struct {
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

func (q *queue[E]) len() int { return len(q.items) }

// push schedules e at time at.
func (q *queue[E]) push(at time.Duration, e E) {
	q.seq++
	q.items = append(q.items, item[E]{at, q.seq, e})
	h := q.items
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].before(&h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

// pop removes and returns the earliest event. The queue must not be empty.
func (q *queue[E]) pop() (time.Duration, E) {
	h := q.items
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h[r].before(&h[l]) {
			m = r
		}
		if !h[m].before(&h[i]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	q.items = h
	return top.at, top.e
}

// peek returns the time of the earliest event, and false if the queue is
// empty.
func (q *queue[E]) peek() (time.Duration, bool) {
	if len(q.items) == 0 {
		return 0, false
	}
	return q.items[0].at, true
}
