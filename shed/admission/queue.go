package admission

import "time"

// levels is the number of priority levels a queue keeps: two per known
// class (retries below first attempts), Sheddable's lowest.
const levels = 2 * int(CriticalPlus-Sheddable+1)

// level is the queue level of a request of class c (Sheddable or above)
// and attempt number attempt: the greater, the sooner served.
func level(c Criticality, attempt int) int {
	l := 2 * int(c-Sheddable)
	if attempt <= 1 {
		l++
	}
	return l
}

// queue holds the waiting requests by level, each level in arrival order.
// It serves the highest level first: its oldest request while the queue is
// not overloaded (FIFO), its newest while it is (LIFO, "adaptive LIFO" of
// Fail at Scale: under a standing queue the newest are those whose clients
// still wait). It evicts the oldest request of the lowest level. The zero
// queue is empty; it is not safe for concurrent use.
type queue struct {
	lv [levels][]*Waiter
	n  int
}

func (q *queue) push(w *Waiter) {
	q.lv[w.level] = append(q.lv[w.level], w)
	w.queued = true
	q.n++
}

// pop removes and returns the next request to serve (nil if none): the
// highest level's newest if lifo, else its oldest.
func (q *queue) pop(lifo bool) *Waiter {
	for l := levels - 1; l >= 0; l-- {
		s := q.lv[l]
		if len(s) == 0 {
			continue
		}
		if lifo {
			w := s[len(s)-1]
			s[len(s)-1] = nil
			q.lv[l] = s[:len(s)-1]
			return q.done(w)
		}
		return q.removeAt(l, 0)
	}
	return nil
}

// oldest returns when the oldest request waiting was queued; the queue
// must not be empty.
func (q *queue) oldest() time.Time {
	var t time.Time
	for l := range levels {
		if s := q.lv[l]; len(s) > 0 && (t.IsZero() || s[0].since.Before(t)) {
			t = s[0].since
		}
	}
	return t
}

// top returns the level of the highest non-empty level, or -1.
func (q *queue) top() int {
	for l := levels - 1; l >= 0; l-- {
		if len(q.lv[l]) > 0 {
			return l
		}
	}
	return -1
}

// lowest returns the level of the lowest non-empty level, or -1.
func (q *queue) lowest() int {
	for l := range levels {
		if len(q.lv[l]) > 0 {
			return l
		}
	}
	return -1
}

// removeAt removes the i-th request of level l, keeping the order.
func (q *queue) removeAt(l, i int) *Waiter {
	s := q.lv[l]
	w := s[i]
	copy(s[i:], s[i+1:])
	s[len(s)-1] = nil
	q.lv[l] = s[:len(s)-1]
	return q.done(w)
}

func (q *queue) done(w *Waiter) *Waiter {
	w.queued = false
	q.n--
	return w
}

// remove takes w out of the queue, if it is in it.
func (q *queue) remove(w *Waiter) {
	if !w.queued {
		return
	}
	for i, x := range q.lv[w.level] {
		if x == w {
			q.removeAt(w.level, i)
			return
		}
	}
}

// sweep removes, and passes to drop, the requests that drop reports would
// be dropped if they left the queue now, oldest first in each level; it
// stops in a level at the first request drop keeps.
func (q *queue) sweep(drop func(*Waiter) Reason, shed func(*Waiter, Reason)) {
	for l := range levels {
		for len(q.lv[l]) > 0 {
			w := q.lv[l][0]
			r := drop(w)
			if r == Admitted {
				break
			}
			q.removeAt(l, 0)
			shed(w, r)
		}
	}
}
