package occ

import (
	"math/bits"
	"time"

	"github.com/again-go/again/cmd/again/internal/sim"
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
// linked through an array indexed by client.
//
// A calendar is empty after a run (every client's write succeeds), which
// leaves every bucket's list empty and the bitmaps clear: reset reuses the
// arrays for the next run instead of allocating and clearing them, so a
// worker's calendar allocates only when a run needs a longer year or more
// clients than any before.
type occCalendar struct {
	shift    uint
	mask     int
	head     []int32   // per bucket: its first client, or -1
	full     []uint64  // a bit per bucket: set if its list is not empty
	some     []uint64  // a bit per word of full: set if the word is not 0
	ev       []occSlot // per client: its event and the next in its bucket
	winStart time.Duration
	cur      int
	n        int
	seq      uint64
}

type occSlot struct {
	at   time.Duration
	seq  uint64
	next int32
}

func (a *occSlot) before(b *occSlot) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

// Bounds of a calendar's year, in bits of its number of buckets: at
// least one word of the bitmap, at most 256 KiB of lists' heads.
const (
	minCalendarBits = 6
	maxCalendarBits = 16
)

// reset shapes c, which must be empty (a new calendar, or one whose run
// popped every event), for n clients whose messages take
// |N(net.mean, net.sd)| and whose sleeps last at most sleep. It reports
// false, leaving c unusable until the next reset, if a heap would serve
// better.
//
// The buckets are narrow enough that the first messages, spread by the
// jitter alone, seldom share one (a width of 4·sd/n: wider ones cost more
// in sorting their lists than the bitmap saves in skipping). Without
// jitter, or with little of it, events come in clumps that a bucket's
// list would have to sort; and when the messages alone span more than the
// largest year, the first events would already wrap round it: then a
// heap.
//
// The year then spans, if the largest year allows, the furthest any event
// is pushed ahead of the one just popped: the longest sleep and four
// messages (reply, read, reply, write) of up to mean + 6·sd each. With a
// shorter year, events a long sleep ahead share the buckets of the current
// year's and every pop walks past them; with this one they are in their
// own bucket, and the bitmap skips the empty stretches between them.
func (c *occCalendar) reset(n int, net occNet, sleep time.Duration) bool {
	width := 4 * net.sd / float64(n)
	if !(width >= 1) {
		return false
	}
	shift := uint(63 - bits.LeadingZeros64(uint64(width)))
	span := 2 * (net.mean + 4*net.sd)
	if bits.Len64(uint64(span)>>shift) > maxCalendarBits {
		return false
	}
	ahead := min(float64(max(sleep, 0))+4*(net.mean+6*net.sd), 1<<62)
	buckets := 1 << max(minCalendarBits, min(maxCalendarBits, bits.Len64(uint64(ahead)>>shift)))
	if cap(c.head) < buckets {
		c.head = make([]int32, buckets)
		for i := range c.head {
			c.head[i] = -1
		}
		c.full = make([]uint64, buckets/64)
		c.some = make([]uint64, max(1, buckets/64/64))
	}
	// Every bucket beyond the year is empty too, so a later, longer year
	// finds them ready.
	c.head, c.full, c.some = c.head[:buckets], c.full[:buckets/64], c.some[:max(1, buckets/64/64)]
	if cap(c.ev) < n {
		c.ev = make([]occSlot, n)
	}
	c.ev = c.ev[:n]
	c.shift, c.mask = shift, buckets-1
	c.winStart, c.cur, c.seq = 0, 0, 0
	return true
}

func (c *occCalendar) len() int { return c.n }

// push schedules an event of client s, which has none queued, at a time no
// earlier than the last event popped.
func (c *occCalendar) push(at time.Duration, s int32) {
	at = sim.EndOfTime(at) // as Queue.Push
	c.seq++
	ev := c.ev
	x := &ev[s]
	x.at, x.seq = at, c.seq
	b := int(at>>c.shift) & c.mask
	// A bucket seldom holds more than one event: walk its list from the
	// head to the first event after x.
	p, q := int32(-1), c.head[b]
	for q >= 0 && ev[q].before(x) {
		p, q = q, ev[q].next
	}
	x.next = q
	if p < 0 {
		c.head[b] = s
	} else {
		ev[p].next = s
	}
	c.full[b>>6] |= 1 << (b & 63)
	c.some[b>>12] |= 1 << (b >> 6 & 63)
	c.n++
}

// pop removes the earliest event and returns its time and client. The
// Queue must not be empty.
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
		h := c.head[b]
		if x := &c.ev[h]; x.at < c.winStart+width {
			n := x.next
			c.head[b] = n
			if n < 0 {
				if c.full[b>>6] &^= 1 << (b & 63); c.full[b>>6] == 0 {
					c.some[b>>12] &^= 1 << (b >> 6 & 63)
				}
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
// round the year. At least one bucket has events. Past b's word of the
// bitmap it looks for the next word with events in the bitmap of words,
// so that it crosses a stretch of empty buckets (a year of 2^16 buckets
// holds 190 events at most in the default table) a word at a time.
func (c *occCalendar) nextFull(b int) int {
	w := b >> 6
	if word := c.full[w] &^ (1<<(b&63) - 1); word != 0 {
		return w<<6 | bits.TrailingZeros64(word)
	}
	w = (w + 1) & (len(c.full) - 1) // a power of two
	s := w >> 6
	word := c.some[s] &^ (1<<(w&63) - 1)
	for word == 0 {
		s = (s + 1) & (len(c.some) - 1) // a power of two
		word = c.some[s]
	}
	w = s<<6 | bits.TrailingZeros64(word)
	return w<<6 | bits.TrailingZeros64(c.full[w])
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
			if h := c.head[b]; first < 0 || c.ev[h].before(&c.ev[first]) {
				first = h
			}
		}
	}
	at := c.ev[first].at
	c.winStart = at >> c.shift << c.shift
	c.cur = int(at>>c.shift) & c.mask
}
