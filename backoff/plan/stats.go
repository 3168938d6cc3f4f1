package plan

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/backoff/internal/sched"
)

// RetryStats describes the delay before one retry.
type RetryStats struct {
	Retry int // 1-based retry number
	// Delay is the nominal delay d(n). For DecorrelatedJitter, which has no
	// nominal delay, it is the largest possible delay, min(Max, Initial × Multiplier^n).
	Delay time.Duration
	// Capped reports whether Max lowered Delay.
	Capped bool
	// Min, Mean and Max bound the jittered delay before this retry. They are
	// exact except the Mean of a Capped retry under DecorrelatedJitter,
	// which is estimated (see Total.Estimated): the cap clamps delays that
	// depend on the previous ones, which has no closed form.
	Min, Mean, Max time.Duration
	// TotalMin, TotalMean and TotalMax are the same for the sum of the delays
	// before retries 1..Retry: how long a caller may have waited so far.
	TotalMin, TotalMean, TotalMax time.Duration
}

// Total describes the total wait over all of a policy's retries.
type Total struct {
	// Min and Max are exact. Mean is exact except under DecorrelatedJitter
	// when some retry is Capped: the capped retries' share of it is then a
	// Monte Carlo estimate.
	Min, Mean, Max time.Duration
	// P50, P90 and P99 are percentiles of the total wait, always within
	// [Min, Max] and in order. For NoJitter, FullJitter, EqualJitter and
	// ProportionalJitter they are computed numerically from the exact distribution of the sum
	// of independent delays, to within 0.5 % of Max − Min (in practice far
	// closer; see the package tests). Under FullJitter and EqualJitter the
	// total is symmetric about its mean and P50 is exactly Mean. For
	// DecorrelatedJitter they are Monte Carlo estimates (see Estimated).
	P50, P90, P99 time.Duration
	// Estimated reports that the percentiles (and, if a retry is Capped,
	// part of Mean) come from a seeded Monte Carlo simulation, as they do
	// for DecorrelatedJitter, whose delays depend on each other. The
	// simulation runs as many whole schedules as take about two million
	// delays, but never fewer than 256 nor more than 20,000; equal seeds
	// give equal numbers.
	Estimated bool
	// StdErr is the standard error of the simulated mean total wait: the
	// true mean lies within ±2 StdErr of the estimate about 95 % of the time.
	// A percentile p estimated from k schedules is off by about
	// sqrt(p(1−p)/k) in probability: with 256 schedules (10,000 retries) the
	// estimated P99 lies roughly between the true 98.4th and 99.6th
	// percentiles; with 20,000 (up to 100 retries), between the 98.93rd and
	// 99.07th.
	// StdErr is 0 when Mean is exact: always when Estimated is false, and
	// under DecorrelatedJitter when no retry is Capped.
	StdErr time.Duration
}

// Stats is the full analysis of a policy: one RetryStats per retry and the
// totals. Durations saturate at the largest time.Duration (about 292 years)
// instead of overflowing.
type Stats struct {
	// Policy is the policy analysed, as given to Analyze.
	Policy backoff.Policy
	// Retries has one entry per retry analysed (see Truncated), in order:
	// Retries[i].Retry is i+1.
	Retries []RetryStats
	// Total describes the sum of the delays over the retries analysed.
	Total Total
	// Truncated reports that Policy.Retries exceeds MaxStatsRetries, so that
	// Retries and Total cover only the first MaxStatsRetries retries.
	Truncated bool
}

// MaxStatsRetries is the largest number of retries that Analyze analyses one
// by one (see Stats.Truncated). It is far beyond any useful schedule and keeps
// a Stats's memory bounded (about 100 bytes per retry).
const MaxStatsRetries = 100_000

// DefaultSeed is the seed to give Analyze and Solve for their Monte Carlo
// estimates when the caller has no reason to choose one; the same seed always
// gives the same numbers.
const DefaultSeed uint64 = 1

// running accumulates the totals of consecutive retries. The mean is summed
// exactly and rounded once, so that rounding each retry's mean to the
// nanosecond does not add up over thousands of retries.
type running struct {
	min, max time.Duration
	mean     float64
}

// add adds the retry r, whose exact mean is mean, and sets r's totals.
func (a *running) add(r *RetryStats, mean float64) {
	a.min, a.max = sched.AddSat(a.min, r.Min), sched.AddSat(a.max, r.Max)
	a.mean += mean
	r.TotalMin, r.TotalMax = a.min, a.max
	// Clamping keeps the order, and the totals non-decreasing, even where
	// the rounded bounds and the float64 sum disagree by a nanosecond.
	r.TotalMean = min(a.max, max(a.min, sched.ToDuration(a.mean)))
}

// total returns the totals so far, without percentiles.
func (a *running) total() Total {
	return Total{Min: a.min, Mean: min(a.max, max(a.min, sched.ToDuration(a.mean))), Max: a.max}
}

// jitterTerm returns the exact distribution of the jittered delay before
// retry n and its rounded bounds, for every kind of jitter but Decorrelated.
func (p schedule) jitterTerm(n int) (t term, lo, mean, hi time.Duration) {
	d := p.Delay(n)
	fd := float64(d)
	switch p.jitter {
	case backoff.NoJitter:
		t = term{fd, fd, 1}
		lo, hi = d, d
	case backoff.EqualJitter:
		t = term{fd / 2, fd, 1}
		lo, hi = sched.ToDuration(fd/2), d
	case backoff.ProportionalJitter:
		f := p.Factor
		a, b, c := fd*(1-f), fd*(1+f), float64(p.Ceiling())
		if b <= c {
			t = term{a, b, 1}
			hi = min(sched.ToDuration(b), p.Ceiling())
		} else {
			// The part of [a, b] above the cap is clamped to it: a uniform
			// part plus a point mass at the cap.
			t = term{a, c, (c - a) / (b - a)}
			hi = p.Ceiling()
		}
		lo = min(sched.ToDuration(a), hi)
	case backoff.GRPCJitter:
		if n == 1 {
			// gRPC's first wait is its base delay, not jittered.
			t = term{fd, fd, 1}
			lo, hi = d, d
			break
		}
		// The cap is applied before the jitter: [a, b] is not clamped.
		f := p.Factor
		a, b := fd*(1-f), fd*(1+f)
		t = term{a, b, 1}
		lo, hi = sched.ToDuration(a), sched.ToDuration(b)
	default: // backoff.FullJitter, and values Validate rejects
		t = term{0, fd, 1}
		lo, hi = 0, d
	}
	if t.q == 0 || t.hi <= t.lo {
		t = term{t.hi, t.hi, 1}
	}
	return t, lo, min(hi, max(lo, sched.ToDuration(t.mean()))), hi
}

// decorrelatedMax returns the largest possible delay before retry n under
// Decorrelated jitter, min(Max, Initial × Multiplier^n), and whether the cap
// lowered it.
func (p schedule) decorrelatedMax(n int) (time.Duration, bool) {
	if n < 1 || p.Initial <= 0 {
		return 0, false
	}
	raw := float64(p.Initial) * sched.Pow(p.Multiplier, n)
	c := p.Ceiling()
	return min(c, sched.ToDuration(raw)), p.Max > 0 && raw > float64(p.Max)
}

// retryMax returns the largest possible delay before retry n; it never
// decreases with n and never exceeds the ceiling, but under GRPCJitter,
// whose jitter follows the cap: the ceiling × (1 + Factor).
func (p schedule) retryMax(n int) time.Duration {
	if p.jitter == backoff.DecorrelatedJitter {
		d, _ := p.decorrelatedMax(n)
		return d
	}
	_, _, _, hi := p.jitterTerm(n)
	return hi
}

// schedule is a policy with the zero rule applied, and its jitter.
type schedule struct {
	sched.Schedule
	jitter backoff.Jitter
}

// resolve applies the zero rule of backoff.Policy to p.
func resolve(p backoff.Policy) schedule {
	return schedule{sched.Resolve(p.Initial, p.Multiplier, p.Max, p.Retries, p.JitterFactor), p.Jitter}
}

// Analyze analyses the policy p, with the zero rule of backoff.Policy
// applied: the bounds of every retry's delay and of the total wait, and the
// total's percentiles. seed fixes the Monte Carlo estimates made for
// DecorrelatedJitter, so equal inputs give equal output; use DefaultSeed if
// unsure. Analyze never panics, whatever the policy: values Validate
// rejects are analysed as backoff.Policy's methods treat them.
//
// Analyze for 10,000 retries takes a few milliseconds (see the benchmarks).
func Analyze(p backoff.Policy, seed uint64) Stats {
	s := resolve(p).stats(seed)
	s.Policy = p
	return s
}

// stats is Analyze for the resolved schedule; Policy is left unset.
func (p schedule) stats(seed uint64) Stats {
	n := min(p.RetryCount(), MaxStatsRetries)
	s := Stats{Retries: make([]RetryStats, n), Truncated: p.Retries > n}
	if p.jitter == backoff.DecorrelatedJitter {
		s.Total = p.decorrelatedStats(s.Retries, seed)
		return s
	}
	terms := make([]term, n)
	var tot running
	symmetric := true
	for i := range s.Retries {
		t, lo, mean, hi := p.jitterTerm(i + 1)
		terms[i] = t
		symmetric = symmetric && t.q == 1
		s.Retries[i] = RetryStats{
			Retry: i + 1, Delay: p.Delay(i + 1), Capped: p.Capped(i + 1),
			Min: lo, Mean: mean, Max: hi,
		}
		tot.add(&s.Retries[i], t.mean())
	}
	s.Total = tot.total()
	if s.Total.Min == s.Total.Max {
		s.Total.P50, s.Total.P90, s.Total.P99 = s.Total.Mean, s.Total.Mean, s.Total.Mean
		return s
	}
	q := sumQuantiles(terms, []float64{0.5, 0.9, 0.99})
	s.Total.setPercentiles(q[0], q[1], q[2])
	if symmetric {
		// Every delay is uniform, so the total is symmetric about its mean
		// and its median is the mean; the grid reaches it only up to rounding.
		s.Total.P50 = s.Total.Mean
		s.Total.P90 = max(s.Total.P90, s.Total.P50)
		s.Total.P99 = max(s.Total.P99, s.Total.P90)
	}
	return s
}

// setPercentiles rounds the percentiles, clamps them into [Min, Max] and
// keeps them in order, so that numerical error can never break an invariant.
func (t *Total) setPercentiles(p50, p90, p99 float64) {
	clamp := func(x float64) time.Duration { return min(t.Max, max(t.Min, sched.ToDuration(x))) }
	t.P50 = clamp(p50)
	t.P90 = max(t.P50, clamp(p90))
	t.P99 = max(t.P90, clamp(p99))
}

// monteCarloDraws is the number of delays the Decorrelated simulation draws,
// spread over as many schedules as fit, within [minSchedules, maxSchedules].
const (
	monteCarloDraws = 2_000_000
	minSchedules    = 256
	maxSchedules    = 20_000
)

// decorrelatedStats fills rs for Decorrelated jitter and returns the totals.
// Min and Max of each retry are exact: the smallest delay is min(Max,
// Initial) and the largest grows by Multiplier per retry from Initial. The
// mean of a retry the cap cannot reach is exact, by E(n) = (Initial +
// Multiplier × E(n−1)) / 2 with E(0) = Initial; the means of capped retries
// and the percentiles come from simulating whole schedules with a PCG
// generator seeded by seed.
func (p schedule) decorrelatedStats(rs []RetryStats, seed uint64) Total {
	n := len(rs)
	c := p.Ceiling()
	first := min(c, max(p.Initial, 0))
	for i := range rs {
		hi, capped := p.decorrelatedMax(i + 1)
		rs[i] = RetryStats{Retry: i + 1, Delay: hi, Capped: capped, Min: min(first, hi), Max: hi}
	}
	if n == 0 || p.Initial <= 0 {
		// Without a first delay every delay is 0: there is nothing to estimate.
		return Total{}
	}
	// Until the cap can lower a delay (Capped is false from retry 1 to
	// exact), no delay was clamped, so the means follow the exact recurrence;
	// without a cap that holds for every retry. Max grows with n, so the
	// capped retries are the last ones.
	exact := n
	if p.Max > 0 {
		exact = 0
		for exact < n && !rs[exact].Capped {
			exact++
		}
	}
	schedules := min(maxSchedules, max(minSchedules, monteCarloDraws/n))
	means, totals, tails := p.simulate(n, schedules, exact, seed)

	e, m := float64(max(p.Initial, 0)), p.Multiplier
	var tot running
	for i := range rs {
		r := &rs[i]
		mean := means[i]
		if i < exact {
			e = (float64(p.Initial) + m*e) / 2
			mean = e
		}
		r.Mean = min(r.Max, max(r.Min, sched.ToDuration(mean)))
		tot.add(r, mean)
	}
	t := tot.total()
	t.Estimated = true
	if exact < n {
		// Only the capped retries' share of the mean is estimated.
		sum, sq := 0.0, 0.0
		for _, x := range tails {
			sum += x
		}
		avg := sum / float64(len(tails))
		for _, x := range tails {
			sq += (x - avg) * (x - avg)
		}
		t.StdErr = sched.ToDuration(math.Sqrt(sq / float64(len(tails)-1) / float64(len(tails))))
	}
	slices.Sort(totals)
	t.setPercentiles(quantile(totals, 0.5), quantile(totals, 0.9), quantile(totals, 0.99))
	return t
}

// simulate draws schedules whole Decorrelated schedules of n retries and
// returns the mean delay before each retry, every schedule's total, and
// every schedule's sum of the delays from retry from+1 on (its tail), in
// nanoseconds. It follows Sample exactly, on float64s.
func (p schedule) simulate(n, schedules, from int, seed uint64) (means, totals, tails []float64) {
	src := rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)
	means, totals, tails = make([]float64, n), make([]float64, schedules), make([]float64, schedules)
	lo, m, c := float64(max(p.Initial, 0)), p.Multiplier, float64(p.Ceiling())
	for s := range totals {
		prev, total, tail := lo, 0.0, 0.0
		for i := range means {
			// Bounding hi keeps u × (hi − lo) finite when Multiplier is huge;
			// anything above c is clamped to c either way.
			hi := prev * m
			if hi < lo {
				hi = lo
			} else if hi > 1e300 {
				hi = 1e300
			}
			u := float64(src.Uint64()>>11) * 0x1p-53
			x := lo + u*(hi-lo)
			if x > c {
				x = c
			}
			means[i] += x
			total += x
			if i >= from {
				tail += x
			}
			prev = x
		}
		totals[s], tails[s] = total, tail
	}
	for i := range means {
		means[i] /= float64(schedules)
	}
	return means, totals, tails
}

// quantile returns the q-quantile of the sorted sample xs, interpolating
// linearly between order statistics.
func quantile(xs []float64, q float64) float64 {
	pos := q * float64(len(xs)-1)
	i := int(pos)
	if i >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	return xs[i] + (pos-float64(i))*(xs[i+1]-xs[i])
}

// DeadlineFit says how a policy's worst case compares with a deadline, as
// the retry loops meet it: by the rule of backoff.FitDeadline, a wait that
// would end later than the reserve (backoff.DeadlineReserve) before the
// deadline is shortened to end then, and the loop stops once no more than
// the reserve is left. Attempts are taken to take no time.
type DeadlineFit struct {
	// Deadline is the deadline compared with, as given to Stats.Deadline.
	Deadline time.Duration
	// Reserve is the time the loop keeps for its last attempt before
	// Deadline: backoff.DeadlineReserve.
	Reserve time.Duration
	// WorstCaseFits reports that even the longest total wait over all
	// Policy.Retries retries ends at least Reserve before Deadline: the loop
	// makes every retry without shortening a wait.
	WorstCaseFits bool
	// P99Fits reports the same of the 99th percentile of the total wait.
	P99Fits bool
	// RetriesWithin is how many retries, at most Policy.Retries, the loop
	// makes before Deadline in the worst case (the longest waits): those
	// whose waits end at least Reserve before it, and one more after a
	// wait the loop shortens, if more than Reserve is left.
	RetriesWithin int
}

// Deadline compares the worst-case total wait of s.Policy with the deadline
// d, under the retry loops' deadline rule (see DeadlineFit). It is exact
// and covers every retry, even when s is Truncated; P99Fits is as exact as
// s.Total.P99.
func (s Stats) Deadline(d time.Duration) DeadlineFit {
	p := resolve(s.Policy)
	n := p.RetryCount()
	within, fits := p.deadlineFit(n, d)
	x, ok := afterReserve(d)
	return DeadlineFit{Deadline: d, Reserve: backoff.DeadlineReserve, WorstCaseFits: fits,
		P99Fits: (n == 0 && d >= 0) || (ok && s.Total.P99 <= x), RetriesWithin: within}
}

// afterReserve returns the time before deadline d by which a wait must end
// to leave the reserve, and false if there is none: d is no more than
// backoff.DeadlineReserve away.
func afterReserve(d time.Duration) (time.Duration, bool) {
	if d <= backoff.DeadlineReserve {
		return 0, false
	}
	return d - backoff.DeadlineReserve, true
}

// deadlineFit returns how many of n retries the retry loop makes before
// the deadline d in the worst case, and whether it makes them all without
// shortening a wait. It is backoff.FitDeadline applied to the longest
// waits, in closed form: retry k+1 is made when the first k waits end
// before x, the deadline minus the reserve (the wait before it is
// shortened if it would end later), and no wait is shortened when all n
// end by x. FuzzDeadlineFit checks the two agree.
func (p schedule) deadlineFit(n int, d time.Duration) (within int, fits bool) {
	if d < 0 {
		// The deadline has passed before the first attempt: nothing fits.
		return 0, false
	}
	x, ok := afterReserve(d)
	if !ok || n <= 0 {
		return 0, n <= 0
	}
	// The first k waits end before x for every k up to retriesWithin(n, x−1);
	// after the last of them, one more retry, after a shortened wait.
	if within = p.retriesWithin(n, x-1); within < n {
		within++
	}
	return within, within == n && p.retriesWithin(n, x) == n
}
