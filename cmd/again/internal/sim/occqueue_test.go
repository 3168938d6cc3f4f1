package sim

import (
	"math/rand/v2"
	"testing"
	"time"
)

// FuzzOCCCalendar checks that the calendar pops exactly what the heap
// pops, in the same order, ties included: OCC's results must not depend on
// which queue ran it. Each client has one event at a time, as in OCC; the
// delays mix the jitter's spread, exact ties and long sleeps that wrap the
// calendar's year.
func FuzzOCCCalendar(f *testing.F) {
	f.Add(uint16(190), 10.0, 2.0, uint64(1), uint16(5000))
	f.Add(uint16(10), 10.0, 2.0, uint64(2), uint16(500))
	f.Add(uint16(3), 0.5, 0.3, uint64(3), uint16(2000))
	f.Add(uint16(1000), 100.0, 0.1, uint64(4), uint16(3000))
	f.Fuzz(func(t *testing.T, clients uint16, meanMs, sdMs float64, seed uint64, events uint16) {
		n := int(clients%2000) + 1
		if !(meanMs >= 0 && meanMs <= 1000 && sdMs >= 0 && sdMs <= 100) {
			return
		}
		net := occNet{mean: meanMs * 1e6, sd: sdMs * 1e6}
		c := newOCCCalendar(n, net)
		if c == nil {
			return // the heap alone serves this configuration
		}
		var q queue[occEvent]
		r := rand.New(rand.NewPCG(seed, 0))
		delay := func() time.Duration {
			switch r.IntN(8) {
			case 0:
				return 0 // a tie with the event just popped
			case 1:
				return time.Duration(r.Int64N(int64(2 * time.Second))) // a sleep
			}
			return net.delay(r)
		}
		for i := range n {
			d := delay()
			c.push(d, occEvent{client: int32(i), kind: 1, version: int32(i)})
			q.push(d, occEvent{client: int32(i), kind: 1, version: int32(i)})
		}
		for i := 0; q.len() > 0; i++ {
			at, e := q.pop()
			cat, ce := c.pop()
			if at != cat || e != ce {
				t.Fatalf("event %d: the heap pops %v at %v, the calendar %v at %v", i, e, at, ce, cat)
			}
			if i < int(events) && r.IntN(4) != 0 {
				d := delay()
				e.version++
				q.push(at+d, e)
				c.push(at+d, e)
			}
		}
		if c.len() != 0 {
			t.Fatalf("the calendar holds %d events after the heap emptied", c.len())
		}
	})
}
