package backoff

import (
	"iter"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestWaits(t *testing.T) {
	tests := []struct {
		name string
		p    Policy
		want int // number of waits
	}{
		{"zero policy: 3 retries", Policy{}, 3},
		{"five retries", Policy{Retries: 5}, 5},
		{"NoRetries", Policy{Retries: NoRetries}, 0},
		{"decorrelated", Policy{Retries: 20, Jitter: DecorrelatedJitter}, 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := slices.Collect(tt.p.Waits(rand.New(rand.NewPCG(1, 2))))
			if len(got) != tt.want || len(got) != tt.p.MaxAttempts()-1 {
				t.Fatalf("Waits() gave %d waits, want %d (MaxAttempts()−1)", len(got), tt.want)
			}
			// The same draws as calling Sample with the previous delay.
			r := rand.New(rand.NewPCG(1, 2))
			var prev time.Duration
			for i, d := range got {
				prev = tt.p.Sample(i+1, prev, r)
				if d != prev {
					t.Errorf("wait %d = %v, want Sample(%d, previous) = %v", i+1, d, i+1, prev)
				}
			}
		})
	}
}

// TestWaitsPerCall checks that each range starts a new call's schedule and
// that stopping early stops the sequence.
func TestWaitsPerCall(t *testing.T) {
	p := Policy{Initial: time.Second, Max: NoCap, Retries: 4, Jitter: NoJitter}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}
	seq := p.Waits(nil)
	for range 2 {
		if got := slices.Collect(seq); !slices.Equal(got, want) {
			t.Errorf("Waits() = %v, want %v on every range", got, want)
		}
	}
	next, stop := iter.Pull(seq)
	if d, ok := next(); !ok || d != time.Second {
		t.Errorf("first next() = %v, %v; want 1s, true", d, ok)
	}
	stop()
	if d, ok := next(); ok {
		t.Errorf("next() after stop = %v, true; want false", d)
	}
}
