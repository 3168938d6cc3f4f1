package limiter

import (
	"fmt"
	"time"

	"github.com/again-go/again/backoff"
)

// DefaultLimit is the limit of a Config whose Limit and Algorithm are
// zero: 25, resilience4j's bulkhead's default.
const DefaultLimit = 25

// Sampling of an adaptive limit's RTTs (see Config.SampleEvery and the
// package doc).
const (
	// DefaultSampleEvery is the SampleEvery of a Config whose SampleEvery
	// is zero: when calls are frequent, at most one in 16 is measured,
	// which brings the admitted call's average cost to about twice a
	// fixed limit's (BENCHMARKS.md).
	DefaultSampleEvery = 16
	// MaxSampleEvery is the largest SampleEvery.
	MaxSampleEvery = 1024
	// MinSampleRate is the rate of calls, per second and per Limiter, up
	// to which every call is measured. Above it one call in N is, N the
	// largest power of two ≤ rate ÷ MinSampleRate (and ≤ SampleEvery), so
	// that the algorithm still learns from at least MinSampleRate RTTs a
	// second, or rate ÷ SampleEvery beyond SampleEvery × MinSampleRate.
	MinSampleRate = 10_000
)

// sampleWindow is how long a Limiter counts the permits taken before it
// chooses N again from their rate, on its clock: long enough that a burst
// of a few calls does not make it sample sparsely, short enough to follow
// a rate that changes within a second.
const sampleWindow = 10 * time.Millisecond

// Clock tells a Limiter the time. It reads it when a measured permit is
// taken and when its call ends, and when a call drops (only with an
// Algorithm that learns from RTTs: a fixed limit, or AIMD without a
// Timeout, never reads it), so a virtual clock, as in tests and the
// simulator, drives the adaptive limits completely.
type Clock interface {
	Now() time.Time
}

// Config sets a Limiter's rules. The zero Config is a fixed limit of 25
// calls in flight, refusing at once the calls beyond it.
type Config struct {
	// Limit is the fixed limit: how many calls may be in flight at once.
	// Zero means DefaultLimit (25); otherwise it must be ≥ 1. It must be
	// zero when Algorithm is set, which has its own (Initial, Min, Max).
	Limit int
	// Algorithm, if not nil, makes the limit adaptive: AIMD, Vegas or
	// Gradient2, each learning from how the calls end (see Sample).
	Algorithm Algorithm
	// MaxWait is how long a call waits for a permit when none is free,
	// never past its context's deadline. Zero (the default) and negative
	// values mean no wait: a call beyond the limit is refused at once.
	MaxWait time.Duration
	// MaxWaiting bounds the calls waiting at once (when MaxWait is
	// positive): one more is refused at once. Zero means as many as the
	// limit (at the time), negative no bound.
	MaxWaiting int
	// Clock, if not nil, replaces time.Now for the adaptive limits' RTTs
	// and probe intervals. Waits (MaxWait) run on real timers.
	Clock Clock
	// SampleEvery bounds how sparsely an adaptive limit measures RTTs when
	// calls are frequent: at most one call in SampleEvery (see the
	// package doc's Sampling). Zero means DefaultSampleEvery (16); 1
	// measures every call; otherwise it must be a power of two up to
	// MaxSampleEvery. Only RTTs are sampled: every call counts in flight,
	// and every drop reaches the algorithm. A fixed limit ignores it.
	SampleEvery int
	// Rand is the source of the jitter of the adaptive limits' probes;
	// nil means math/rand/v2's global generator. A Limiter draws under its
	// lock, so a Rand that is not safe for concurrent use is fine.
	Rand backoff.Rand
}

// Validate reports the first field out of range: a *FieldError, which
// matches ErrInvalid.
func (c Config) Validate() error {
	switch {
	case c.Limit < 0:
		return &FieldError{"Config.Limit", fmt.Sprint(c.Limit), "≥ 0 (0 means 25)"}
	case c.Limit != 0 && c.Algorithm != nil:
		return &FieldError{"Config.Limit", fmt.Sprint(c.Limit), "0 with an Algorithm (set the Algorithm's Initial, Min and Max)"}
	case c.SampleEvery < 0 || c.SampleEvery > MaxSampleEvery || c.SampleEvery&(c.SampleEvery-1) != 0:
		return &FieldError{"Config.SampleEvery", fmt.Sprint(c.SampleEvery), "a power of two from 1 to 1024 (0 means 16)"}
	}
	if c.Algorithm != nil {
		return c.Algorithm.validate()
	}
	return nil
}
