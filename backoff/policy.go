package backoff

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Policy describes a retry schedule: how long to wait before each retry and
// how many retries to make after the first attempt.
//
// The nominal delay before retry n (1-based) is
//
//	d(n) = min(Max, Initial × Multiplier^(n−1))
//
// and Jitter spreads the actual delay around it so that clients that failed
// together do not retry together. Max is a hard ceiling: no jitter exceeds it.
//
// # Zero and negative fields
//
// Every field follows one rule, the rule of net.Dialer.KeepAlive: zero means
// the documented default, and a negative value means "none":
//
//	Field         zero means          negative means
//	Initial       500 ms              no wait: retry at once
//	Multiplier    2                   invalid (it must be 0 or a finite number >= 1)
//	Max           10 s                no cap ([NoCap])
//	Retries       3                   no retries: one attempt ([NoRetries])
//	Jitter        [FullJitter]        invalid
//	JitterFactor  0.25                invalid (it must be 0 or in (0, 1])
//
// So the zero Policy behaves exactly like [Default], and a partly filled
// Policy such as Policy{Retries: 5} keeps the defaults of the fields it
// leaves out: it never becomes a burst of retries without waits.
//
// Because the default cap is 10 s, Validate rejects a Policy whose Initial is
// above 10 s while Max is zero (Policy{Initial: 30 * time.Second} would
// otherwise wait 10 s, not 30 s): set Max, or Max: NoCap. An explicit Max
// below Initial is accepted and means every delay is Max.
//
// A Policy is a plain value: its methods never modify it and are safe for
// concurrent use.
type Policy struct {
	// Initial is the nominal delay before the first retry.
	// Zero means 500 ms; negative means no wait.
	Initial time.Duration
	// Multiplier is the growth factor between consecutive delays, a finite
	// number >= 1. Zero means 2.
	Multiplier float64
	// Max caps every delay, jitter included. Zero means 10 s; negative
	// ([NoCap]) means no cap.
	Max time.Duration
	// Retries is how many retries follow the first attempt, so an operation
	// runs at most Retries+1 times (see MaxAttempts). Zero means 3;
	// negative ([NoRetries]) means none: the first attempt is the only one.
	Retries int
	// Jitter is how the actual delay is drawn around the nominal one.
	// The zero value is FullJitter.
	Jitter Jitter
	// JitterFactor is f for ProportionalJitter, in (0, 1]; zero means 0.25.
	// It must be zero for every other kind of jitter.
	JitterFactor float64
}

// NoCap is a Max that means "no cap": delays grow until they saturate at
// the largest time.Duration. Any negative Max means the same.
const NoCap time.Duration = -1

// NoRetries is a Retries that means "no retries": the first attempt is the
// only one. Any negative Retries means the same.
const NoRetries = -1

// Default returns the recommended policy: 500 ms first delay, ×2, capped at
// 10 s, 3 retries, full jitter, with every field spelled out. It behaves
// exactly like the zero Policy. These are the seed article's values, with
// full jitter because it minimises total work when many clients contend.
// Each call returns a new value; change its fields freely.
func Default() Policy {
	return Policy{
		Initial:    defaultInitial,
		Multiplier: defaultMultiplier,
		Max:        defaultMax,
		Retries:    defaultRetries,
		Jitter:     FullJitter,
	}
}

const (
	defaultInitial      = 500 * time.Millisecond
	defaultMax          = 10 * time.Second
	defaultRetries      = 3
	defaultMultiplier   = 2
	defaultJitterFactor = 0.25
	// maxDuration is the largest time.Duration; every computation saturates here.
	maxDuration = time.Duration(math.MaxInt64)
)

// ErrInvalid is matched by errors.Is for every error that Validate returns.
var ErrInvalid = errors.New("backoff: invalid policy")

// FieldError reports a Policy field whose value is outside its accepted range.
// It matches ErrInvalid with errors.Is.
type FieldError struct {
	Field    string // the Policy field, e.g. "Multiplier"
	Value    string // the rejected value, formatted
	Accepted string // what is accepted, e.g. "a finite number >= 1"
}

// Error returns "backoff: FIELD must be ACCEPTED, got VALUE", such as
// "backoff: Retries must be a whole number >= 0, got -1".
func (e *FieldError) Error() string {
	return fmt.Sprintf("backoff: %s must be %s, got %s", e.Field, e.Accepted, e.Value)
}

// Is reports whether target is ErrInvalid.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

// Validate reports the first field that is out of range, as a *FieldError.
// It applies the zero rule (see Policy): zero fields take their defaults and
// negative Initial, Max and Retries mean none. It also rejects an Initial
// above the default cap of 10 s when Max is zero, since such a policy would
// silently wait less than Initial.
func (p Policy) Validate() error {
	switch {
	case math.IsNaN(p.Multiplier) || math.IsInf(p.Multiplier, 0) || (p.Multiplier != 0 && p.Multiplier < 1):
		return &FieldError{"Multiplier", fmt.Sprint(p.Multiplier), "a finite number >= 1 (or 0 for the default 2)"}
	case p.Max == 0 && p.Initial > defaultMax:
		return &FieldError{"Initial", p.Initial.String(), "at most the default Max of 10s when Max is 0 (set Max, or Max: NoCap)"}
	case p.Jitter < FullJitter || p.Jitter > DecorrelatedJitter:
		return &FieldError{"Jitter", fmt.Sprint(int(p.Jitter)), "one of FullJitter, NoJitter, EqualJitter, ProportionalJitter, DecorrelatedJitter"}
	case p.Jitter == ProportionalJitter && (math.IsNaN(p.JitterFactor) || p.JitterFactor < 0 || p.JitterFactor > 1):
		return &FieldError{"JitterFactor", fmt.Sprint(p.JitterFactor), "a number in (0, 1] (or 0 for the default 0.25)"}
	case p.Jitter != ProportionalJitter && p.JitterFactor != 0:
		return &FieldError{"JitterFactor", fmt.Sprint(p.JitterFactor), "0 unless Jitter is ProportionalJitter"}
	}
	return nil
}

// MaxAttempts returns the most attempts p allows, the first included:
// Retries+1 with the zero rule applied (Retries 0 gives 4, NoRetries gives
// 1), saturating at the largest int.
func (p Policy) MaxAttempts() int {
	n := p.resolved().Retries
	if n < 0 {
		return 1
	}
	if n == math.MaxInt {
		return n
	}
	return n + 1
}

// resolved returns p with the zero rule applied: zero Initial, Max and
// Retries replaced by their defaults. Negative values, which mean none, are
// kept, and the unexported methods read them as none, so resolved is
// idempotent and every exported method may call it on entry.
func (p Policy) resolved() Policy {
	if p.Initial == 0 {
		p.Initial = defaultInitial
	}
	if p.Max == 0 {
		p.Max = defaultMax
	}
	if p.Retries == 0 {
		p.Retries = defaultRetries
	}
	return p
}

// multiplier returns the effective multiplier, applying the default and
// treating values that Validate rejects as 1 so that no method panics.
func (p *Policy) multiplier() float64 {
	m := p.Multiplier
	if m == 0 {
		return defaultMultiplier
	}
	if !(m >= 1) || math.IsInf(m, 0) { // also catches NaN
		return 1
	}
	return m
}

// factor returns the effective proportional jitter factor, clamped to [0, 1].
func (p *Policy) factor() float64 {
	f := p.JitterFactor
	switch {
	case f == 0:
		return defaultJitterFactor
	case !(f > 0): // negative or NaN
		return 0
	case f > 1:
		return 1
	}
	return f
}

// ceiling is the hard upper bound on any delay of the resolved policy: Max,
// or the largest Duration when Max is negative (no cap).
func (p *Policy) ceiling() time.Duration {
	if p.Max > 0 {
		return p.Max
	}
	return maxDuration
}

// EffectiveMultiplier returns the multiplier in effect: Multiplier, or 2 when it is 0.
func (p Policy) EffectiveMultiplier() float64 { return p.multiplier() }

// EffectiveJitterFactor returns the proportional factor in effect:
// JitterFactor, or 0.25 when it is 0.
func (p Policy) EffectiveJitterFactor() float64 { return p.factor() }

// raw returns Initial × Multiplier^(n−1) in nanoseconds as a float64, without
// cap, for the resolved policy; it may be +Inf. n < 1 gives 0.
func (p *Policy) raw(n int) float64 {
	if n < 1 || p.Initial <= 0 {
		return 0
	}
	return float64(p.Initial) * pow(p.multiplier(), n-1)
}

// pow returns m^k for m >= 1 and k >= 0. Powers of 2 are built from their
// bits and other whole multipliers by exact squaring while the result stays
// below 2^53, so the common schedules cost a few nanoseconds; the results
// are exact there, so they agree with math.Pow, which handles the rest.
func pow(m float64, k int) float64 {
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

// toDuration converts nanoseconds to a Duration, saturating at the largest
// Duration and rounding to the nearest nanosecond.
func toDuration(ns float64) time.Duration {
	switch {
	case !(ns > 0): // zero, negative or NaN
		return 0
	case ns >= float64(maxDuration):
		return maxDuration
	}
	return time.Duration(math.Round(ns))
}

// Delay returns the nominal delay before retry n (1-based), with the cap
// applied and without jitter: min(Max, Initial × Multiplier^(n−1)). It runs in
// constant time for every n and saturates at the largest time.Duration
// instead of overflowing. n < 1 gives 0. It applies the zero rule (see Policy).
func (p Policy) Delay(n int) time.Duration {
	return p.resolved().delay(n)
}

// delay is Delay for the resolved policy.
func (p Policy) delay(n int) time.Duration {
	var d time.Duration
	if k := n - 1; (p.Multiplier == 2 || p.Multiplier == 0) && uint(k) < 63 && p.Initial > 0 && p.Initial < 1<<53 {
		// The default doubling, by shifting: the same value as the float
		// path below (both exact), without a call to pow.
		if d = maxDuration; p.Initial <= maxDuration>>k {
			d = p.Initial << k
		}
	} else {
		d = toDuration(p.raw(n))
	}
	if c := p.ceiling(); d > c {
		return c
	}
	return d
}

// Capped reports whether the cap Max lowered the nominal delay before retry n.
func (p Policy) Capped(n int) bool {
	return p.resolved().capped(n)
}

// capped is Capped for the resolved policy.
func (p Policy) capped(n int) bool {
	return p.Max > 0 && p.raw(n) > float64(p.Max)
}
