package plan

import (
	"testing"
	"time"

	"github.com/again-go/again/backoff"
)

// seedExample is the worked example of the seed's calculator: 500 ms, ×2,
// capped at 30 s, 8 retries.
func seedExample(j backoff.Jitter) backoff.Policy {
	return backoff.Policy{Initial: 500 * time.Millisecond, Multiplier: 2, Max: 30 * time.Second, Retries: 8, Jitter: j}
}

// capped reports whether the cap lowered the nominal delay before retry n.
func capped(p backoff.Policy, n int) bool {
	s := resolve(p)
	return s.Capped(n)
}

func TestSeedExample(t *testing.T) {
	const s = time.Second
	delays := []time.Duration{s / 2, s, 2 * s, 4 * s, 8 * s, 16 * s, 30 * s, 30 * s}
	tests := []struct {
		jitter          backoff.Jitter
		min, mean, max  time.Duration
		retryMin, retry func(d time.Duration) time.Duration
	}{
		{backoff.NoJitter, 91500 * time.Millisecond, 91500 * time.Millisecond, 91500 * time.Millisecond,
			func(d time.Duration) time.Duration { return d }, func(d time.Duration) time.Duration { return d }},
		{backoff.FullJitter, 0, 45750 * time.Millisecond, 91500 * time.Millisecond,
			func(time.Duration) time.Duration { return 0 }, func(d time.Duration) time.Duration { return d / 2 }},
		{backoff.EqualJitter, 45750 * time.Millisecond, 68625 * time.Millisecond, 91500 * time.Millisecond,
			func(d time.Duration) time.Duration { return d / 2 }, func(d time.Duration) time.Duration { return d * 3 / 4 }},
	}
	for _, tt := range tests {
		t.Run(tt.jitter.String(), func(t *testing.T) {
			p := seedExample(tt.jitter)
			st := Analyze(p, DefaultSeed)
			if len(st.Retries) != len(delays) {
				t.Fatalf("len(Analyze().Retries) = %d, want %d", len(st.Retries), len(delays))
			}
			for i, want := range delays {
				n := i + 1
				r := st.Retries[i]
				if got := p.Delay(n); got != want {
					t.Errorf("Delay(%d) = %v, want %v", n, got, want)
				}
				if r.Delay != want {
					t.Errorf("Retries[%d].Delay = %v, want %v", i, r.Delay, want)
				}
				if wantCapped := n >= 7; capped(p, n) != wantCapped || r.Capped != wantCapped {
					t.Errorf("Capped(%d) = %v, Retries[%d].Capped = %v, want %v", n, capped(p, n), i, r.Capped, wantCapped)
				}
				if r.Min != tt.retryMin(want) || r.Mean != tt.retry(want) || r.Max != want {
					t.Errorf("Retries[%d] min, mean, max = %v, %v, %v; want %v, %v, %v", i, r.Min, r.Mean, r.Max, tt.retryMin(want), tt.retry(want), want)
				}
			}
			tot := st.Total
			if tot.Min != tt.min || tot.Mean != tt.mean || tot.Max != tt.max {
				t.Errorf("Total min, mean, max = %v, %v, %v; want %v, %v, %v", tot.Min, tot.Mean, tot.Max, tt.min, tt.mean, tt.max)
			}
			if last := st.Retries[len(st.Retries)-1]; last.TotalMin != tot.Min || last.TotalMean != tot.Mean || last.TotalMax != tot.Max {
				t.Errorf("last retry's totals = %v, %v, %v; want the Total's %v, %v, %v", last.TotalMin, last.TotalMean, last.TotalMax, tot.Min, tot.Mean, tot.Max)
			}
			if tot.P50 != tot.Mean {
				t.Errorf("Total.P50 = %v, want the mean %v (the total is symmetric)", tot.P50, tot.Mean)
			}
			if tot.Estimated || tot.StdErr != 0 {
				t.Errorf("Total.Estimated, StdErr = %v, %v; want false, 0", tot.Estimated, tot.StdErr)
			}
		})
	}
	if got := Analyze(seedExample(backoff.FullJitter), DefaultSeed).Total.Mean; got != 45750*time.Millisecond {
		t.Errorf("full jitter mean = %v, want 45.75s", got)
	}
}
