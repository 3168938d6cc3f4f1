package plan

import (
	"github.com/again-go/again/backoff"
	"github.com/again-go/again/backoff/internal/sched"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestSumQuantilesClosedForms(t *testing.T) {
	qs := []float64{0.01, 0.1, 0.5, 0.9, 0.99}
	tests := []struct {
		name  string
		terms []term
		want  func(q float64) float64
	}{
		{"one uniform", []term{{2, 3, 1}}, func(q float64) float64 { return 2 + q }},
		{"two equal uniforms are triangular", []term{{0, 1, 1}, {0, 1, 1}}, func(q float64) float64 {
			if q <= 0.5 {
				return math.Sqrt(2 * q)
			}
			return 2 - math.Sqrt(2*(1-q))
		}},
		{"uniform and a point mass at its top", []term{{1, 2, 0.5}}, func(q float64) float64 { return 1 + min(1, q/0.5) }},
		{"point masses add", []term{{1, 1, 1}, {4, 4, 1}, {0, 1, 1}}, func(q float64) float64 { return 5 + q }},
		{"sum of 3 uniforms", []term{{0, 1, 1}, {0, 1, 1}, {0, 1, 1}}, irwinHall3Quantile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sumQuantiles(slices.Clone(tt.terms), qs)
			span := 0.0
			for _, x := range tt.terms {
				span += x.width()
			}
			for i, q := range qs {
				// The grid's step is span/4096; allow one step.
				if want := tt.want(q); math.Abs(got[i]-want) > span/4096 {
					t.Errorf("quantile %v = %.6f, want %.6f", q, got[i], want)
				}
			}
		})
	}
}

// irwinHall3Quantile inverts the distribution function of the sum of three
// uniforms on [0, 1] by bisection.
func irwinHall3Quantile(q float64) float64 {
	cdf := func(x float64) float64 {
		switch {
		case x <= 1:
			return x * x * x / 6
		case x <= 2:
			return (-2*x*x*x + 9*x*x - 9*x + 3) / 6
		}
		return 1 - (3-x)*(3-x)*(3-x)/6
	}
	lo, hi := 0.0, 3.0
	for range 100 {
		if mid := (lo + hi) / 2; cdf(mid) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// simulateTotals returns k sorted simulated total waits of p, drawn with
// Sample, independently of the code under test.
func simulateTotals(p backoff.Policy, k int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 42))
	out := make([]float64, k)
	for i := range out {
		var prev, total time.Duration
		for n := 1; n <= p.Retries; n++ {
			prev = p.Sample(n, prev, r)
			total += prev
		}
		out[i] = float64(total)
	}
	slices.Sort(out)
	return out
}

func TestPercentilesMatchMonteCarlo(t *testing.T) {
	if testing.Short() {
		t.Skip("long Monte Carlo check; the full test run (no -short) runs it")
	}
	tests := []struct {
		name string
		p    backoff.Policy
	}{
		{"seed example, full", seedExample(backoff.FullJitter)},
		{"seed example, equal", seedExample(backoff.EqualJitter)},
		{"seed example, proportional", seedExample(backoff.ProportionalJitter)},
		{"one retry, full", backoff.Policy{Initial: time.Second, Retries: 1}},
		{"proportional 1 at the cap", backoff.Policy{Initial: time.Second, Multiplier: 3, Max: 10 * time.Second, Retries: 6, Jitter: backoff.ProportionalJitter, JitterFactor: 1}},
		{"full, 200 retries, capped", backoff.Policy{Initial: 100 * time.Millisecond, Multiplier: 1.5, Max: 5 * time.Second, Retries: 200}},
		{"proportional, 300 retries, capped", backoff.Policy{Initial: 100 * time.Millisecond, Multiplier: 2, Max: time.Second, Retries: 300, Jitter: backoff.ProportionalJitter, JitterFactor: 0.5}},
		{"equal, 160 growing retries", backoff.Policy{Initial: time.Millisecond, Multiplier: 1.03, Retries: 160, Jitter: backoff.EqualJitter}},
	}
	const k = 40_000
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tot := Analyze(tt.p, DefaultSeed).Total
			sim := simulateTotals(tt.p, k, 7)
			span := float64(tot.Max - tot.Min)
			for _, c := range []struct {
				q   float64
				got time.Duration
			}{{0.5, tot.P50}, {0.9, tot.P90}, {0.99, tot.P99}} {
				want := quantile(sim, c.q)
				// The requirement is 0.5 % of Max − Min; the simulation's own
				// error is far below that at this sample size.
				if err := math.Abs(float64(c.got) - want); err > 0.005*span {
					t.Errorf("P%g = %v, simulation gives %v: off by %.3f %% of Max − Min, want <= 0.5 %%",
						c.q*100, c.got, time.Duration(want), 100*err/span)
				}
			}
		})
	}
}

func TestSymmetricMedianIsMean(t *testing.T) {
	for _, j := range []backoff.Jitter{backoff.FullJitter, backoff.EqualJitter} {
		for _, p := range []backoff.Policy{
			seedExample(j),
			{Initial: 3 * time.Millisecond, Multiplier: 1.7, Max: 7 * time.Second, Retries: 1000, Jitter: j},
			{Initial: 333 * time.Millisecond, Multiplier: 1.01, Retries: 20, Jitter: j},
			{Initial: time.Hour, Multiplier: 10, Retries: 100, Jitter: j},
		} {
			if tot := Analyze(p, DefaultSeed).Total; tot.P50 != tot.Mean {
				t.Errorf("%+v: P50 = %v, want the mean %v", p, tot.P50, tot.Mean)
			}
		}
	}
}

func TestDecorrelatedStats(t *testing.T) {
	p := backoff.Policy{Initial: 100 * time.Millisecond, Multiplier: 3, Max: 5 * time.Second, Retries: 12, Jitter: backoff.DecorrelatedJitter}
	st := Analyze(p, DefaultSeed)
	for i, r := range st.Retries {
		n := i + 1
		wantMax := min(p.Max, sched.ToDuration(float64(p.Initial)*math.Pow(3, float64(n))))
		if r.Min != p.Initial || r.Max != wantMax || r.Delay != wantMax {
			t.Errorf("Retries[%d] min, max, delay = %v, %v, %v; want %v, %v, %v", i, r.Min, r.Max, r.Delay, p.Initial, wantMax, wantMax)
		}
		if wantCapped := float64(p.Initial)*math.Pow(3, float64(n)) > float64(p.Max); r.Capped != wantCapped {
			t.Errorf("Retries[%d].Capped = %v, want %v", i, r.Capped, wantCapped)
		}
	}
	tot := st.Total
	if !tot.Estimated || tot.StdErr <= 0 {
		t.Fatalf("Total.Estimated, StdErr = %v, %v; want true and > 0", tot.Estimated, tot.StdErr)
	}
	sim := simulateTotals(p, 40_000, 9)
	mean := 0.0
	for _, x := range sim {
		mean += x / float64(len(sim))
	}
	if d := math.Abs(float64(tot.Mean) - mean); d > 5*float64(tot.StdErr) {
		t.Errorf("Total.Mean = %v, independent simulation gives %v: %.1f standard errors apart", tot.Mean, time.Duration(mean), d/float64(tot.StdErr))
	}
	span := float64(tot.Max - tot.Min)
	for _, c := range []struct {
		q   float64
		got time.Duration
	}{{0.5, tot.P50}, {0.9, tot.P90}, {0.99, tot.P99}} {
		if want := quantile(sim, c.q); math.Abs(float64(c.got)-want) > 0.01*span {
			t.Errorf("P%g = %v, independent simulation gives %v", c.q*100, c.got, time.Duration(want))
		}
	}
	if again := Analyze(p, DefaultSeed); again.Total != tot {
		t.Errorf("Analyze(p, DefaultSeed) twice = %+v and %+v, want equal", tot, again.Total)
	}
	if other := Analyze(p, 2).Total; other == tot {
		t.Errorf("Analyze(p, 2).Total = Analyze(p, 1).Total = %+v, want the seed to matter", tot)
	}
}

func TestDecorrelatedUncappedMeanIsExact(t *testing.T) {
	p := backoff.Policy{Initial: time.Second, Multiplier: 3, Max: backoff.NoCap, Retries: 5, Jitter: backoff.DecorrelatedJitter}
	// E(n) = (1 s + 3 E(n−1)) / 2 from E(0) = 1 s: 2, 3.5, 5.75, 9.125, 14.1875 s.
	want := []time.Duration{2 * time.Second, 3500 * time.Millisecond, 5750 * time.Millisecond, 9125 * time.Millisecond, 14187500 * time.Microsecond}
	st := Analyze(p, DefaultSeed)
	for i, w := range want {
		if got := st.Retries[i].Mean; got != w {
			t.Errorf("Retries[%d].Mean = %v, want %v", i, got, w)
		}
	}
	if st.Total.Mean != 34562500*time.Microsecond || st.Total.StdErr != 0 {
		t.Errorf("Total.Mean, StdErr = %v, %v; want 34.5625s, 0", st.Total.Mean, st.Total.StdErr)
	}
}

// Until the cap can lower a delay, decorrelated delays are never clamped,
// so their means follow the exact recurrence even when a cap is set; only
// the retries the cap reaches are estimated.
func TestDecorrelatedMeanExactBeforeTheCap(t *testing.T) {
	// E(n) = (0.5 s + 2 E(n−1)) / 2 from E(0) = 0.5 s: 0.75, 1, 1.25, 1.5 s.
	exact := []time.Duration{750 * time.Millisecond, time.Second, 1250 * time.Millisecond, 1500 * time.Millisecond}
	t.Run("cap reached", func(t *testing.T) {
		// Largest delays 1, 2, 4, 8, then 16 and 32 s capped at 10 s.
		p := backoff.Policy{Initial: 500 * time.Millisecond, Multiplier: 2, Max: 10 * time.Second, Retries: 6, Jitter: backoff.DecorrelatedJitter}
		st := Analyze(p, DefaultSeed)
		for i, w := range exact {
			if got := st.Retries[i].Mean; got != w {
				t.Errorf("Retries[%d].Mean = %v, want %v (exact)", i, got, w)
			}
		}
		if st.Total.StdErr <= 0 {
			t.Errorf("Total.StdErr = %v, want > 0: retries 5 and 6 are estimated", st.Total.StdErr)
		}
	})
	t.Run("cap not reached", func(t *testing.T) {
		p := backoff.Policy{Initial: 500 * time.Millisecond, Multiplier: 2, Max: time.Minute, Retries: 4, Jitter: backoff.DecorrelatedJitter}
		st := Analyze(p, DefaultSeed)
		for i, w := range exact {
			if got := st.Retries[i].Mean; got != w {
				t.Errorf("Retries[%d].Mean = %v, want %v (exact)", i, got, w)
			}
		}
		if st.Total.Mean != 4500*time.Millisecond || st.Total.StdErr != 0 || !st.Total.Estimated {
			t.Errorf("Total.Mean, StdErr, Estimated = %v, %v, %v; want 4.5s, 0, true (exact mean, estimated percentiles)",
				st.Total.Mean, st.Total.StdErr, st.Total.Estimated)
		}
	})
}

func TestStatsSaturates(t *testing.T) {
	for _, j := range []backoff.Jitter{backoff.NoJitter, backoff.FullJitter, backoff.EqualJitter, backoff.ProportionalJitter, backoff.DecorrelatedJitter} {
		p := backoff.Policy{Initial: time.Hour, Multiplier: 10, Max: backoff.NoCap, Retries: 100, Jitter: j}
		st := Analyze(p, DefaultSeed)
		checkStats(t, st)
		if st.Total.Max != sched.MaxDuration {
			t.Errorf("%v: Total.Max = %v, want the largest Duration", j, st.Total.Max)
		}
	}
}

func TestStatsTruncated(t *testing.T) {
	p := backoff.Policy{Initial: time.Millisecond, Max: time.Second, Retries: MaxStatsRetries + 1, Jitter: backoff.NoJitter}
	st := Analyze(p, DefaultSeed)
	if !st.Truncated || len(st.Retries) != MaxStatsRetries {
		t.Fatalf("Analyze() Truncated, len(Retries) = %v, %d; want true, %d", st.Truncated, len(st.Retries), MaxStatsRetries)
	}
	// Deadline still covers every retry.
	fit := st.Deadline(time.Duration(MaxStatsRetries+1) * time.Second)
	if !fit.WorstCaseFits || fit.RetriesWithin != MaxStatsRetries+1 {
		t.Errorf("Deadline() = %+v, want the worst case to fit with %d retries", fit, MaxStatsRetries+1)
	}
	if p.Retries = MaxStatsRetries; Analyze(p, DefaultSeed).Truncated {
		t.Errorf("Analyze() with MaxStatsRetries retries: Truncated = true, want false")
	}
}

// TestDeadline checks the worst case under the retry loops' deadline rule:
// the waits that end at least the reserve (100 ms) before the deadline,
// then one more retry after a shortened wait if more than the reserve is
// left.
func TestDeadline(t *testing.T) {
	const s, ms = time.Second, time.Millisecond
	tests := []struct {
		p        backoff.Policy
		deadline time.Duration
		fits     bool
		within   int
	}{
		// Maxima 0.5, 1, 2, 4, 8, 16, 30, 30 s; ends 0.5, 1.5, 3.5, 7.5,
		// 15.5, 31.5, 61.5, 91.5 s.
		{seedExample(backoff.FullJitter), time.Minute, false, 7}, // the 7th wait shortened to end at 59.9 s
		{seedExample(backoff.FullJitter), 91600 * ms, true, 8},
		{seedExample(backoff.FullJitter), 91599 * ms, false, 8},
		{seedExample(backoff.FullJitter), 61601 * ms, false, 8},
		{seedExample(backoff.FullJitter), 61600 * ms, false, 7}, // exactly the reserve left after the 7th
		{seedExample(backoff.FullJitter), 499 * ms, false, 1},
		{seedExample(backoff.FullJitter), 100 * ms, false, 0},
		{seedExample(backoff.FullJitter), 0, false, 0},
		{seedExample(backoff.DecorrelatedJitter), 3 * s, false, 2}, // maxima 1, 2, 4 s
		{backoff.Policy{Initial: -1, Retries: 5}, s, true, 5},
		{backoff.Policy{Initial: -1, Retries: 5}, 100 * ms, false, 0},
		{backoff.Policy{Retries: backoff.NoRetries}, s, true, 0},
		{backoff.Policy{Retries: backoff.NoRetries}, 0, true, 0},
		{backoff.Policy{Retries: backoff.NoRetries}, -s, false, 0},
		{backoff.Policy{}, 3 * s, false, 3}, // the defaults: maxima 0.5, 1, 2 s
		{backoff.Policy{}, 3600 * ms, true, 3},
	}
	for _, tt := range tests {
		got := Analyze(tt.p, DefaultSeed).Deadline(tt.deadline)
		if got.WorstCaseFits != tt.fits || got.RetriesWithin != tt.within || got.Deadline != tt.deadline || got.Reserve != backoff.DeadlineReserve {
			t.Errorf("%v jitter: Deadline(%v) = %+v, want WorstCaseFits %v, RetriesWithin %d", tt.p.Jitter, tt.deadline, got, tt.fits, tt.within)
		}
	}
	// Without jitter the 99th percentile is the worst case.
	p := seedExample(backoff.NoJitter)
	for _, d := range []time.Duration{91600 * ms, 91599 * ms} {
		if got := Analyze(p, DefaultSeed).Deadline(d); got.P99Fits != got.WorstCaseFits {
			t.Errorf("no jitter: Deadline(%v) = %+v, want P99Fits = WorstCaseFits", d, got)
		}
	}
}

// FuzzDeadlineFit checks Deadline's closed form against the rule itself:
// the longest waits, in order, through backoff.FitDeadline, as the retry
// loop applies it with attempts that take no time.
func FuzzDeadlineFit(f *testing.F) {
	f.Add(int64(500*time.Millisecond), 2.0, int64(30*time.Second), uint8(8), int8(0), int64(time.Minute))
	f.Add(int64(-1), 1.0, int64(0), uint8(5), int8(1), int64(time.Second))
	f.Add(int64(time.Second), 1.5, int64(-1), uint8(40), int8(4), int64(100*time.Millisecond))
	f.Fuzz(func(t *testing.T, initial int64, mult float64, maxd int64, retries uint8, jitter int8, deadline int64) {
		p := backoff.Policy{Initial: time.Duration(initial), Multiplier: mult, Max: time.Duration(maxd), Retries: int(retries) - 1, Jitter: backoff.Jitter(jitter % 6)}
		if p.Validate() != nil || p.Retries > MaxStatsRetries {
			return
		}
		d := time.Duration(deadline)
		got := Analyze(p, DefaultSeed).Deadline(d)
		q := resolve(p)
		n := q.RetryCount()
		within, fits := 0, d >= 0
		var now time.Duration
		for i := 1; i <= n && d >= 0; i++ {
			w, ok := backoff.FitDeadline(q.retryMax(i), d-now, 0, false)
			if !ok {
				fits = false
				break
			}
			if w != q.retryMax(i) {
				fits = false
			}
			within++
			now += w
			if w != q.retryMax(i) {
				// The loop's next look finds no more than the reserve left.
				if _, ok := backoff.FitDeadline(0, d-now, 0, false); ok {
					t.Fatalf("%+v: after a shortened wait, FitDeadline lets the loop go on", p)
				}
				break
			}
		}
		if got.RetriesWithin != within || got.WorstCaseFits != fits {
			t.Fatalf("%+v: Deadline(%v) = %+v, want RetriesWithin %d, WorstCaseFits %v (the rule walked)", p, d, got, within, fits)
		}
	})
}

func TestRetriesWithinLongGrowth(t *testing.T) {
	// A multiplier this close to 1 grows for millions of retries, past the
	// exact walk; the closed form must agree with the direct sum.
	p := resolve(backoff.Policy{Initial: time.Millisecond, Multiplier: 1 + 1e-7, Max: backoff.NoCap, Jitter: backoff.NoJitter})
	d := 3000 * time.Second // about 2.9 million retries of just over 1 ms
	n := p.retriesWithin(math.MaxInt, d)
	sum := func(n int) float64 { // exact geometric sum
		return float64(p.Initial) * math.Expm1(float64(n)*math.Log1p(1e-7)) / 1e-7
	}
	if !(sum(n) <= float64(d)*(1+1e-9)) || !(sum(n+1) > float64(d)*(1-1e-9)) {
		t.Errorf("retriesWithin(%v) = %d: sums %v and %v, want the deadline between them", d, n, sum(n), sum(n+1))
	}
}

// checkStats asserts the invariants every Stats must satisfy, whatever the policy.
func checkStats(t *testing.T, st Stats) {
	t.Helper()
	sp := resolve(st.Policy)
	c := sp.Ceiling()
	if sp.jitter == backoff.GRPCJitter {
		c = sched.ToDuration(float64(c) * (1 + sp.Factor)) // its jitter follows the cap
	}
	var prev RetryStats
	for i, r := range st.Retries {
		if r.Retry != i+1 {
			t.Fatalf("Retries[%d].Retry = %d, want %d", i, r.Retry, i+1)
		}
		if !(0 <= r.Min && r.Min <= r.Mean && r.Mean <= r.Max && r.Max <= c) {
			t.Fatalf("Retries[%d] min, mean, max = %v, %v, %v; want 0 <= min <= mean <= max <= %v", i, r.Min, r.Mean, r.Max, c)
		}
		if r.TotalMin < prev.TotalMin || r.TotalMean < prev.TotalMean || r.TotalMax < prev.TotalMax {
			t.Fatalf("Retries[%d] totals %v, %v, %v decrease from %v, %v, %v", i, r.TotalMin, r.TotalMean, r.TotalMax, prev.TotalMin, prev.TotalMean, prev.TotalMax)
		}
		if !(r.TotalMin <= r.TotalMean && r.TotalMean <= r.TotalMax) {
			t.Fatalf("Retries[%d] totals %v, %v, %v out of order", i, r.TotalMin, r.TotalMean, r.TotalMax)
		}
		if r.Max < prev.Max {
			t.Fatalf("Retries[%d].Max = %v, below the previous retry's %v", i, r.Max, prev.Max)
		}
		prev = r
	}
	tot := st.Total
	if tot.Min != prev.TotalMin || tot.Mean != prev.TotalMean || tot.Max != prev.TotalMax {
		t.Fatalf("Total %+v disagrees with the last retry %+v", tot, prev)
	}
	if !(tot.Min <= tot.P50 && tot.P50 <= tot.P90 && tot.P90 <= tot.P99 && tot.P99 <= tot.Max) {
		t.Fatalf("Total = %+v, want Min <= P50 <= P90 <= P99 <= Max", tot)
	}
	if tot.StdErr < 0 || (!tot.Estimated && tot.StdErr != 0) {
		t.Fatalf("Total.StdErr = %v with Estimated %v", tot.StdErr, tot.Estimated)
	}
}

func TestStatsTenThousandRetries(t *testing.T) {
	for _, j := range []backoff.Jitter{backoff.NoJitter, backoff.FullJitter, backoff.EqualJitter, backoff.ProportionalJitter, backoff.DecorrelatedJitter} {
		p := backoff.Policy{Initial: 500 * time.Millisecond, Multiplier: 2, Max: 30 * time.Second, Retries: 10_000, Jitter: j}
		st := Analyze(p, DefaultSeed)
		checkStats(t, st)
		// 0.5 + 1 + … + 16 s = 31.5 s for the first 6 retries, then 30 s
		// for each of the other 9,994.
		if want := 31500*time.Millisecond + 9994*30*time.Second; (j == backoff.NoJitter || j == backoff.FullJitter || j == backoff.EqualJitter) && st.Total.Max != want {
			t.Errorf("%v: Total.Max = %v, want %v", j, st.Total.Max, want)
		}
		if st.Truncated || len(st.Retries) != 10_000 {
			t.Errorf("%v: Truncated, len(Retries) = %v, %d; want false, 10000", j, st.Truncated, len(st.Retries))
		}
	}
}
