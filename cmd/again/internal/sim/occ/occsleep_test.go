package occ

import (
	"testing"
	"time"
)

// TestSimOCCSleepsMatchPolicy checks that the model's sleeps are the
// library's: for every algorithm and a range of bases and caps, the sleep
// after each of 80 failures in a row (the previous sleep fed back, as the
// model does) equals backoff.Policy.Sample's to the nanosecond, and both
// leave the random source in the same state, so that a run draws the same
// numbers after them.
func TestSimOCCSleepsMatchPolicy(t *testing.T) {
	for _, c := range []struct{ base, cap time.Duration }{
		{5 * time.Millisecond, 2 * time.Second}, // the post's
		{time.Nanosecond, time.Nanosecond},
		{time.Nanosecond, time.Hour},
		{3 * time.Millisecond, 7 * time.Millisecond},
		{time.Second, time.Millisecond}, // a cap below the first delay
		{time.Hour, time.Hour},
		{1234567, 987654321},
	} {
		for _, a := range Algorithms() {
			s, p := newOCCSleeps(a, c.base, c.cap), a.Policy(c.base, c.cap)
			for seed := range uint64(20) {
				mine, lib := &occRand{s: seed}, &occRand{s: seed}
				var got, want time.Duration
				for n := 1; n <= 80; n++ {
					got, want = s.sample(n, got, mine), p.Sample(n, want, lib)
					if got != want || mine.s != lib.s {
						t.Fatalf("%s, base %v, cap %v, seed %d: sleep %d = %v, Policy.Sample %v (draws alike: %t)",
							a, c.base, c.cap, seed, n, got, want, mine.s == lib.s)
					}
					if got > s.longest() {
						t.Fatalf("%s, base %v, cap %v: sleep %d = %v, longer than longest() = %v", a, c.base, c.cap, n, got, s.longest())
					}
				}
			}
		}
	}
}
