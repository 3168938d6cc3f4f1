package backoff

import (
	"time"
)

// RetryStats describes the delay before one retry.
type RetryStats struct {
	Retry  int           // 1-based retry number
	Delay  time.Duration // nominal delay d(n); for Decorrelated jitter, the largest possible delay
	Capped bool          // whether Max lowered the nominal delay
	// Min, Mean and Max bound the jittered delay before this retry. They are
	// exact except the Mean under Decorrelated jitter, which is estimated.
	Min, Mean, Max time.Duration
	// TotalMin, TotalMean and TotalMax are the same for the sum of the delays
	// before retries 1..Retry: how long a caller may have waited so far.
	TotalMin, TotalMean, TotalMax time.Duration
}

// Total describes the total wait over all of a policy's retries.
type Total struct {
	// Min, Mean and Max are exact, except Mean under Decorrelated jitter.
	Min, Mean, Max time.Duration
	// P50, P90 and P99 are percentiles of the total wait. For None, Full,
	// Equal and Proportional jitter they are computed numerically to within
	// 0.5 % of Max − Min; for Decorrelated jitter they are a Monte Carlo
	// estimate (see Estimated).
	P50, P90, P99 time.Duration
	// Estimated reports that Mean and the percentiles come from a seeded Monte
	// Carlo simulation (Decorrelated jitter); StdErr is then the standard
	// error of Mean.
	Estimated bool
	StdErr    time.Duration
}

// Stats is the full analysis of a policy: one RetryStats per retry and the
// totals. Durations saturate at the largest time.Duration, which Human
// shows as "more than 292 years".
type Stats struct {
	Policy  Policy
	Retries []RetryStats
	Total   Total
}

// DefaultSeed is the seed Stats uses for Monte Carlo estimates when the
// caller has no reason to choose one; it makes output reproducible.
const DefaultSeed uint64 = 1

// addSat adds two non-negative durations, saturating at the largest Duration.
func addSat(a, b time.Duration) time.Duration {
	if s := a + b; s >= a {
		return s
	}
	return maxDuration
}

// retryBounds returns the exact min, mean and max of the jittered delay before
// retry n for every kind of jitter but Decorrelated.
func (p Policy) retryBounds(n int) (lo, mean, hi time.Duration) {
	d := p.Delay(n)
	fd := float64(d)
	switch p.Jitter {
	case None:
		return d, d, d
	case Equal:
		return toDuration(fd / 2), toDuration(fd * 3 / 4), d
	case Proportional:
		f := p.factor()
		a, b := fd*(1-f), fd*(1+f)
		c := float64(p.ceiling())
		if b <= c || b == a {
			return toDuration(a), d, toDuration(b)
		}
		// A part of [a, b] lies above the cap and is clamped to it: the mean
		// is that of the uniform part plus a point mass at the cap.
		m := ((c-a)*(a+c)/2 + (b-c)*c) / (b - a)
		return toDuration(a), toDuration(m), p.ceiling()
	default: // Full
		return 0, toDuration(fd / 2), d
	}
}

// Stats analyses the policy: the bounds of every retry's delay and of the
// total wait. seed fixes the Monte Carlo estimates made for Decorrelated
// jitter, so equal inputs give equal output; use DefaultSeed if unsure.
//
// TODO(stats): percentiles and decorrelated estimates are placeholders.
func (p Policy) Stats(seed uint64) Stats {
	n := max(p.Retries, 0)
	s := Stats{Policy: p, Retries: make([]RetryStats, n)}
	var tmin, tmean, tmax time.Duration
	for i := range s.Retries {
		lo, mean, hi := p.retryBounds(i + 1)
		tmin, tmean, tmax = addSat(tmin, lo), addSat(tmean, mean), addSat(tmax, hi)
		s.Retries[i] = RetryStats{
			Retry: i + 1, Delay: p.Delay(i + 1), Capped: p.Capped(i + 1),
			Min: lo, Mean: mean, Max: hi,
			TotalMin: tmin, TotalMean: tmean, TotalMax: tmax,
		}
	}
	s.Total = Total{Min: tmin, Mean: tmean, Max: tmax, P50: tmean, P90: tmean, P99: tmean}
	return s
}

// DeadlineFit says how a policy's worst case compares with a deadline.
type DeadlineFit struct {
	Deadline time.Duration
	// WorstCaseFits reports that even the longest total wait ends within Deadline.
	WorstCaseFits bool
	// RetriesWithin is the largest number of retries whose longest total
	// wait ends within Deadline.
	RetriesWithin int
}

// Deadline compares the worst-case total wait with the deadline d.
func (s Stats) Deadline(d time.Duration) DeadlineFit {
	f := DeadlineFit{Deadline: d, WorstCaseFits: s.Total.Max <= d}
	for _, r := range s.Retries {
		if r.TotalMax > d {
			break
		}
		f.RetriesWithin = r.Retry
	}
	return f
}
