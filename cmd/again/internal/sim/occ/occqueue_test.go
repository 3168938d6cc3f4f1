package occ

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/sim"
)

// FuzzOCCCalendar checks that the calendar pops exactly what the heap
// pops, in the same order, ties included: OCC's results must not depend on
// which queue ran it. Each client has one event at a time, as in OCC; the
// delays mix the jitter's spread, exact ties, sleeps up to the calendar's
// longest and a few beyond it, which wrap its year. Two runs go through
// one calendar, the second shaped for other clients and sleeps, as a
// worker's calendar serves one run after another.
func FuzzOCCCalendar(f *testing.F) {
	f.Add(uint16(190), 10.0, 2.0, uint16(2000), uint64(1), uint16(5000))
	f.Add(uint16(10), 10.0, 2.0, uint16(0), uint64(2), uint16(500))
	f.Add(uint16(3), 0.5, 0.3, uint16(50), uint64(3), uint16(2000))
	f.Add(uint16(1000), 100.0, 0.1, uint16(60000), uint64(4), uint16(3000))
	f.Fuzz(func(t *testing.T, clients uint16, meanMs, sdMs float64, sleepMs uint16, seed uint64, events uint16) {
		if !(meanMs >= 0 && meanMs <= 1000 && sdMs >= 0 && sdMs <= 100) {
			return
		}
		net := occNet{mean: meanMs * 1e6, sd: sdMs * 1e6}
		r := rand.New(rand.NewPCG(seed, 0))
		nr := &occRand{s: seed}
		var c occCalendar
		for pass := range 2 {
			n := int(clients%2000) + 1
			sleep := time.Duration(sleepMs) * time.Millisecond
			if pass == 1 { // other clients, another year
				n = int(clients/7%300) + 1
				sleep = time.Duration(r.Int64N(int64(time.Minute)))
			}
			if !c.reset(n, net, sleep) {
				return // the heap alone serves this configuration
			}
			var q sim.Queue[int32]
			delay := func() time.Duration {
				switch r.IntN(8) {
				case 0:
					return 0 // a tie with the event just popped
				case 1:
					return time.Duration(r.Int64N(int64(sleep) + 1)) // a sleep
				case 2:
					return sleep + time.Duration(r.Int64N(int64(10*time.Second))) // beyond the year
				}
				return net.delay(nr)
			}
			for i := range n {
				d := delay()
				c.push(d, int32(i))
				q.Push(d, int32(i))
			}
			for i := 0; q.Len() > 0; i++ {
				at, e := q.Pop()
				cat, ce := c.pop()
				if at != cat || e != ce {
					t.Fatalf("run %d, event %d: the heap pops %v at %v, the calendar %v at %v", pass, i, e, at, ce, cat)
				}
				if i < int(events) && r.IntN(4) != 0 {
					d := delay()
					q.Push(at+d, e)
					c.push(at+d, e)
				}
			}
			if c.len() != 0 {
				t.Fatalf("run %d: the calendar holds %d events after the heap emptied", pass, c.len())
			}
		}
	})
}

// TestSimOCCNormal checks the model's own normal draw against the standard
// normal: its mean, variance and the mass beyond 1, 2 and 3.5 (the last in
// the ziggurat's tail), on 400,000 draws, well within the sampling error
// of the results the model averages.
func TestSimOCCNormal(t *testing.T) {
	const n = 400_000
	r := &occRand{s: 42}
	var sum, sq float64
	beyond := map[float64]int{1: 0, 2: 0, 3.5: 0}
	for i := 0; i < n; i += 2 {
		x, y := r.norm2()
		for _, v := range []float64{x, y} {
			sum += v
			sq += v * v
			for b := range beyond {
				if math.Abs(v) > b {
					beyond[b]++
				}
			}
		}
	}
	mean, variance := sum/n, sq/n-(sum/n)*(sum/n)
	if math.Abs(mean) > 0.01 || math.Abs(variance-1) > 0.01 {
		t.Errorf("mean %.4f, variance %.4f; want 0 and 1", mean, variance)
	}
	// P(|X| > b) for the standard normal, and 5 standard errors of it.
	for b, want := range map[float64]float64{1: 0.31731, 2: 0.04550, 3.5: 0.000465} {
		got := float64(beyond[b]) / n
		if tol := 5 * math.Sqrt(want*(1-want)/n); math.Abs(got-want) > tol {
			t.Errorf("P(|X| > %v) = %.5f; want %.5f ± %.5f", b, got, want, tol)
		}
	}
}

// TestSimZigStrip checks the rectangles' test kept without |j|: for every
// bound k a strip can have, the draws that pass uint32(j) + off < span
// are exactly those with |j| < k, at the edges and at the extremes.
func TestSimZigStrip(t *testing.T) {
	for _, k := range []uint32{0, 1, 2, 1000, 1 << 30, 1<<31 - 1} {
		var s zigStrip
		s.setK(k)
		for _, j := range []int64{0, 1, -1, int64(k) - 1, int64(k), int64(k) + 1, -int64(k) + 1, -int64(k), -int64(k) - 1, math.MaxInt32, math.MinInt32} {
			if j < math.MinInt32 || j > math.MaxInt32 {
				continue
			}
			got := uint32(int32(j))+s.off < s.span
			if want := uint64(max(j, -j)) < uint64(k); got != want {
				t.Errorf("k = %d, j = %d: the strip's test says %t, |j| < k is %t", k, j, got, want)
			}
		}
	}
}
