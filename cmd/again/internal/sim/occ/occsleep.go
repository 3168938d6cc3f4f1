package occ

import (
	"math"
	"time"

	"github.com/again-go/again/backoff"
)

// occSleeps draws an algorithm's sleeps for the OCC model: exactly the
// values, and the random draws, of backoff.Policy.Sample on a.Policy(base,
// cap), which TestSimOCCSleepsMatchPolicy checks bit for bit.
//
// Sample resolves the policy's zero rule, computes the nominal delay and
// picks the jitter's formula on every call, through a backoff.Rand
// interface; the model calls it for every failed write (7 million times
// in the default table). Here the nominal delays are computed once, by
// Policy.Delay itself, into a table indexed by the failure count, and the
// jitter's formula is picked once, so a sleep costs a load, a draw and the
// formula.
type occSleeps struct {
	jitter  backoff.Jitter
	none    bool            // NoBackoff: no sleep and no draw
	delays  []time.Duration // Delay(n) for n = 1, …, len; the last is the cap, as is every later one
	initial float64         // decorrelated: the first previous sleep and the least sleep
	mult    float64         // decorrelated: the multiplier of the previous sleep
	ceiling time.Duration   // the cap: no sleep is longer
}

// newOCCSleeps returns the sleeps of a with the post's base and cap, both
// positive (Config's defaults and bounds make them so).
func newOCCSleeps(a Algorithm, base, cap time.Duration) occSleeps {
	p := a.Policy(base, cap)
	s := occSleeps{jitter: p.Jitter, ceiling: p.Max}
	if p.Initial < 0 {
		s.none, s.ceiling = true, 0
		return s
	}
	s.initial, s.mult = float64(p.Initial), p.EffectiveMultiplier()
	// The nominal delay doubles (or triples) from at least 1 ns, so it
	// reaches a cap of at most an hour within 42 steps and stays there.
	// Decorrelated jitter reads only the cap and Initial from here.
	for n := 1; ; n++ {
		d := p.Delay(n)
		s.delays = append(s.delays, d)
		if d >= p.Max {
			break
		}
	}
	return s
}

// longest returns the longest sleep.
func (s *occSleeps) longest() time.Duration { return s.ceiling }

// sample returns the sleep after the n-th failure (n ≥ 1) when the previous
// sleep was prev (0 before the first), drawing from r as Sample would.
func (s *occSleeps) sample(n int, prev time.Duration, r *occRand) time.Duration {
	if s.none {
		return 0
	}
	d := s.delays[min(n, len(s.delays))-1]
	fd := float64(d)
	switch s.jitter {
	case backoff.NoJitter:
		return d
	case backoff.FullJitter:
		return min(d, occRound(r.Float64()*fd))
	case backoff.EqualJitter:
		return min(d, occRound(fd/2+r.Float64()*fd/2))
	default: // decorrelated
		if prev <= 0 {
			prev = time.Duration(s.initial)
		}
		lo := s.initial
		hi := min(max(float64(prev)*s.mult, lo), 1e300)
		return min(s.ceiling, occRound(lo+r.Float64()*(hi-lo)))
	}
}

// occRound is the conversion Sample applies to a delay in nanoseconds:
// rounded to the nearest, 0 for a negative one and the largest Duration
// for one beyond it.
func occRound(ns float64) time.Duration {
	switch {
	case !(ns > 0):
		return 0
	case ns >= math.MaxInt64:
		return math.MaxInt64
	}
	return time.Duration(math.Round(ns))
}
