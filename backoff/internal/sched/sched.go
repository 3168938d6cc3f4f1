// Package sched holds the arithmetic of a resolved retry schedule.
//
// It is shared by package backoff (the schedule) and package backoff/plan
// (its statistics): the zero rule of backoff.Policy, the nominal delays and
// the cap. It is internal so that the public packages stay small; see
// backoff.Policy for the meaning of every field.
package sched

import (
	"math"
	"time"
)

// The defaults that zero fields of backoff.Policy take.
const (
	DefaultInitial      = 500 * time.Millisecond
	DefaultMultiplier   = 2
	DefaultMax          = 10 * time.Second
	DefaultRetries      = 3
	DefaultJitterFactor = 0.25
)

// MaxDuration is the largest time.Duration; every computation saturates here.
const MaxDuration = time.Duration(math.MaxInt64)

// Schedule is a policy with the zero rule applied: no field holds zero to
// mean a default. Initial <= 0 means no wait, Max < 0 no cap, Retries < 0
// no retries (Initial and Max are never zero unless Initial is explicitly
// no wait). Multiplier and Factor are the effective values, forced into
// range so that no method panics on a policy Validate would reject.
type Schedule struct {
	Initial    time.Duration
	Multiplier float64
	Max        time.Duration
	Retries    int
	Factor     float64
}

// Resolve applies the zero rule of backoff.Policy to its fields. It and
// the helpers it calls are small enough to inline, so the hot paths
// (Delay, Sample) pay nothing for the rule.
func Resolve(initial time.Duration, multiplier float64, maxDelay time.Duration, retries int, factor float64) Schedule {
	return Schedule{Initial: InitialOf(initial), Multiplier: MultiplierOf(multiplier), Max: MaxOf(maxDelay), Retries: RetriesOf(retries), Factor: FactorOf(factor)}
}

// InitialOf applies the zero rule to Initial: 0 means DefaultInitial.
func InitialOf(d time.Duration) time.Duration {
	if d == 0 {
		return DefaultInitial
	}
	return d
}

// MaxOf applies the zero rule to Max: 0 means DefaultMax.
func MaxOf(d time.Duration) time.Duration {
	if d == 0 {
		return DefaultMax
	}
	return d
}

// RetriesOf applies the zero rule to Retries: 0 means DefaultRetries.
func RetriesOf(n int) int {
	if n == 0 {
		return DefaultRetries
	}
	return n
}

// MultiplierOf returns the effective multiplier: 0 means
// DefaultMultiplier, and a value Validate rejects (below 1, infinite or
// NaN) is read as 1 so that nothing panics.
func MultiplierOf(m float64) float64 {
	if m == 0 {
		return DefaultMultiplier
	}
	if !(m >= 1) || m > math.MaxFloat64 { // NaN, below 1, +Inf
		return 1
	}
	return m
}

// FactorOf returns the effective proportional factor: 0 means
// DefaultJitterFactor; others are clamped to [0, 1] (NaN to 0).
func FactorOf(f float64) float64 {
	switch {
	case f == 0:
		return DefaultJitterFactor
	case !(f > 0):
		return 0
	case f > 1:
		return 1
	}
	return f
}

// Ceiling is the hard upper bound on any delay: Max, or MaxDuration when
// there is no cap.
func (s *Schedule) Ceiling() time.Duration { return CeilingOf(s.Max) }

// CeilingOf returns the ceiling for a resolved Max: Max, or MaxDuration
// when Max is negative (no cap).
func CeilingOf(maxDelay time.Duration) time.Duration {
	if maxDelay > 0 {
		return maxDelay
	}
	return MaxDuration
}

// RetryCount returns the number of retries, 0 for none.
func (s *Schedule) RetryCount() int { return max(s.Retries, 0) }

// Raw returns Initial × Multiplier^(n−1) in nanoseconds as a float64, without
// cap; it may be +Inf. n < 1 gives 0.
func (s *Schedule) Raw(n int) float64 {
	if n < 1 || s.Initial <= 0 {
		return 0
	}
	return float64(s.Initial) * Pow(s.Multiplier, n-1)
}

// Delay returns min(Ceiling, Initial × Multiplier^(n−1)) in constant time,
// saturating instead of overflowing. n < 1 gives 0.
func (s *Schedule) Delay(n int) time.Duration { return Delay(s.Initial, s.Multiplier, s.Max, n) }

// Delay is Schedule.Delay on the resolved fields, for callers that need no
// Schedule.
func Delay(initial time.Duration, m float64, maxDelay time.Duration, n int) time.Duration {
	var d time.Duration
	if k := n - 1; m == 2 && uint(k) < 63 && initial > 0 && initial < 1<<53 {
		// The default doubling, by shifting: the same value as the float
		// path below (both exact), without a call to Pow.
		if d = MaxDuration; initial <= MaxDuration>>k {
			d = initial << k
		}
	} else if n >= 1 && initial > 0 {
		d = ToDuration(float64(initial) * Pow(m, n-1))
	}
	return min(d, CeilingOf(maxDelay))
}

// Capped reports whether the cap lowered the nominal delay before retry n.
func (s *Schedule) Capped(n int) bool {
	return s.Max > 0 && s.Raw(n) > float64(s.Max)
}

// Pow returns m^k for m >= 1 and k >= 0. Powers of 2 are built from their
// bits and other whole multipliers by exact squaring while the result stays
// below 2^53, so the common schedules cost a few nanoseconds; the results
// are exact there, so they agree with math.Pow, which handles the rest.
func Pow(m float64, k int) float64 {
	switch {
	case m == 1 || k == 0:
		return 1
	case m == 2:
		if k > 1023 {
			return math.Inf(1)
		}
		return math.Float64frombits(uint64(k+1023) << 52)
	case k < 64 && m < 1<<26 && m == math.Trunc(m):
		r, b := 1.0, m
		for e := k; ; {
			if e&1 == 1 {
				r *= b
			}
			if e >>= 1; e == 0 {
				break
			}
			if b *= b; b > 1<<53 {
				return math.Pow(m, float64(k))
			}
		}
		if r <= 1<<53 {
			return r
		}
	}
	return math.Pow(m, float64(k))
}

// ToDuration converts nanoseconds to a Duration, saturating at the largest
// Duration and rounding to the nearest nanosecond.
func ToDuration(ns float64) time.Duration {
	switch {
	case !(ns > 0): // zero, negative or NaN
		return 0
	case ns >= float64(MaxDuration):
		return MaxDuration
	}
	return time.Duration(math.Round(ns))
}

// AddSat adds two non-negative durations, saturating at MaxDuration.
func AddSat(a, b time.Duration) time.Duration {
	if s := a + b; s >= a {
		return s
	}
	return MaxDuration
}
