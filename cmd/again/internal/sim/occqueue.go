package sim

import (
	"math/bits"
	"time"
)

// occCalendar is the OCC model's event queue when the messages' jitter
// spreads the events out: a calendar queue (Brown, 1988), whose push and
// pop take constant time on average where a heap takes log n, with the
// heap's exact order: by time, ties by the order of pushing.
//
// Time is cut into buckets of width 2^shift ns, and the buckets into a
// year that wraps around; an event goes to the bucket of its time modulo
// the year, in a list kept sorted by (time, push order). The queue pops
// from the bucket of the current window, if its first event falls in the
// window, and otherwise moves the window on; after a whole year of empty
// windows it jumps to the earliest event. Each client has at most one
// event in the queue (OCC's clients wait for each reply), so the lists are
// linked through arrays indexed by client, and the queue allocates only
// when it is made.
type occCalendar struct {
	shift    uint
	mask     int
	buckets  []occBucket
	full     []uint64  // a bit per bucket: set if its list is not empty
	ev       []occSlot // per client: its event and its links
	winStart time.Duration
	cur      int
	n        int
	seq      uint64
}

// occBucket is a bucket's sorted list: its first and last client, or -1.
type occBucket struct{ head, tail int32 }

type occSlot struct {
	at         time.Duration
	seq        uint64
	prev, next int32
}

func (a *occSlot) before(b *occSlot) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

// Bounds of a calendar's year, in buckets.
const (
	minCalendarBuckets = 64
	maxCalendarBuckets = 1 << 16
)

// newOCCCalendar returns a calendar for n clients whose messages take
// |N(net.mean, net.sd)|, or nil if a heap would serve better. The buckets
// are narrow enough that the first messages, spread by the jitter alone,
// seldom share one (a width of 4·sd/n: wider ones cost more in sorting
// their lists than the bitmap saves in skipping), and the year spans twice
// the time messages are in flight, so that the earliest events rarely
// share a bucket with later years'. Without jitter, or with little of it,
// events come in clumps that a bucket's list would have to sort: then nil.
func newOCCCalendar(n int, net occNet) *occCalendar {
	width := 4 * net.sd / float64(n)
	if !(width >= 1) {
		return nil
	}
	shift := uint(63 - bits.LeadingZeros64(uint64(width)))
	span := 2 * (net.mean + 4*net.sd)
	buckets := 1 << max(6, bits.Len64(uint64(span)>>shift))
	if buckets > maxCalendarBuckets || buckets < minCalendarBuckets {
		return nil
	}
	c := &occCalendar{
		shift:   shift,
		mask:    buckets - 1,
		buckets: make([]occBucket, buckets),
		full:    make([]uint64, buckets/64),
		ev:      make([]occSlot, n),
	}
	for i := range c.buckets {
		c.buckets[i] = occBucket{-1, -1}
	}
	return c
}

func (c *occCalendar) len() int { return c.n }

// push schedules an event of client s, which has none queued.
func (c *occCalendar) push(at time.Duration, s int32) {
	at = endOfTime(at) // as queue.push
	c.seq++
	ev := c.ev
	x := &ev[s]
	x.at, x.seq = at, c.seq
	b := int(at>>c.shift) & c.mask
	bk := &c.buckets[b]
	// Most events come after those already in their bucket: look from the
	// tail.
	t := bk.tail
	for t >= 0 && x.before(&ev[t]) {
		t = ev[t].prev
	}
	x.prev = t
	if t < 0 {
		x.next = bk.head
		bk.head = s
	} else {
		x.next = ev[t].next
		ev[t].next = s
	}
	if n := x.next; n >= 0 {
		ev[n].prev = s
	} else {
		bk.tail = s
	}
	c.full[b>>6] |= 1 << (b & 63)
	c.n++
}

// pop removes the earliest event and returns its time and client. The
// queue must not be empty.
func (c *occCalendar) pop() (time.Duration, int32) {
	width := time.Duration(1) << c.shift
	for passed := 0; ; {
		// The next bucket with events, from the current one.
		b := c.nextFull(c.cur)
		steps := (b - c.cur) & c.mask
		if passed += steps; passed > c.mask {
			c.jump()
			passed = 0
			continue
		}
		c.cur = b
		c.winStart += time.Duration(steps) * width
		bk := &c.buckets[b]
		h := bk.head
		if x := &c.ev[h]; x.at < c.winStart+width {
			n := x.next
			bk.head = n
			if n >= 0 {
				c.ev[n].prev = -1
			} else {
				bk.tail = -1
				c.full[b>>6] &^= 1 << (b & 63)
			}
			c.n--
			return x.at, h
		}
		// The bucket's events are in later years: on to the next.
		c.cur = (b + 1) & c.mask
		c.winStart += width
		passed++
	}
}

// nextFull returns the first bucket with events at or after b, going
// round the year. At least one bucket has events.
func (c *occCalendar) nextFull(b int) int {
	w := b >> 6
	word := c.full[w] &^ (1<<(b&63) - 1)
	for word == 0 {
		w = (w + 1) % len(c.full)
		word = c.full[w]
	}
	return w<<6 | bits.TrailingZeros64(word)
}

// jump moves the window to the earliest event's, after a year without
// any: the first event of each bucket is its earliest, and the bitmap
// names the buckets that have one.
func (c *occCalendar) jump() {
	first := int32(-1)
	for w, word := range c.full {
		for word != 0 {
			b := w<<6 | bits.TrailingZeros64(word)
			word &= word - 1
			if h := c.buckets[b].head; first < 0 || c.ev[h].before(&c.ev[first]) {
				first = h
			}
		}
	}
	at := c.ev[first].at
	c.winStart = at >> c.shift << c.shift
	c.cur = int(at>>c.shift) & c.mask
}
