package sched

import (
	"math"
	"testing"
	"time"
)

func TestPowMatchesMathPow(t *testing.T) {
	for _, m := range []float64{1, 2, 3, 10, 1 << 25, 1.5, 1.0000001} {
		for k := range 1100 {
			if got, want := Pow(m, k), math.Pow(m, float64(k)); got != want {
				t.Fatalf("pow(%v, %d) = %v, want %v", m, k, got, want)
			}
		}
	}
}

func TestDelayDoublingMatchesFloat(t *testing.T) {
	for _, initial := range []time.Duration{1, 3, 500 * time.Millisecond, 1<<53 - 1, 1 << 53, 1<<62 + 12345} {
		p := Resolve(initial, 2, -1, 0, 0)
		for n := 1; n <= 70; n++ {
			if got, want := p.Delay(n), min(MaxDuration, ToDuration(p.Raw(n))); got != want {
				t.Fatalf("Initial %d: Delay(%d) = %d, want %d", initial, n, got, want)
			}
		}
	}
}
