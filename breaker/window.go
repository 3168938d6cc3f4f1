package breaker

import "time"

// window counts outcomes over the last len(b)×width of time in buckets of
// width each; bucket e%len(b) holds the outcomes of [e×width, (e+1)×width).
// It is not safe for concurrent use: the breaker holds its lock.
type window struct {
	b     []bucket
	width time.Duration
	epoch int64 // the newest bucket's number
}

type bucket struct{ ok, fail int64 }

func newWindow(buckets int, width time.Duration) window {
	return window{b: make([]bucket, buckets), width: max(width, 1)}
}

// roll forgets the buckets that left the window by now.
func (w *window) roll(now time.Duration) {
	e := int64(now / w.width)
	if e <= w.epoch {
		return
	}
	n := int64(len(w.b))
	if e-w.epoch >= n {
		clear(w.b)
	} else {
		for j := w.epoch + 1; j <= e; j++ {
			w.b[j%n] = bucket{}
		}
	}
	w.epoch = e
}

// add counts ok successes and fail failures at now.
func (w *window) add(now time.Duration, ok, fail int64) {
	w.roll(now)
	b := &w.b[w.epoch%int64(len(w.b))]
	b.ok += ok
	b.fail += fail
}

// sums returns the calls and failures in the window at now.
func (w *window) sums(now time.Duration) (calls, fail int64) {
	w.roll(now)
	for _, b := range w.b {
		calls += b.ok + b.fail
		fail += b.fail
	}
	return calls, fail
}

func (w *window) reset() { clear(w.b) }
