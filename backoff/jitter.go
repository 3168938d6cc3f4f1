package backoff

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/again-go/again/backoff/internal/sched"
)

// Jitter is the way a policy draws the actual delay around the nominal delay
// d(n). With u uniform in [0, 1):
//
//   - FullJitter: u × d(n), in [0, d(n)]. The zero value.
//   - NoJitter: exactly d(n).
//   - EqualJitter: d(n)/2 + u × d(n)/2, in [d(n)/2, d(n)].
//   - ProportionalJitter: d(n) × (1 + f × (2u − 1)), i.e. ±f around d(n), never above Max.
//   - DecorrelatedJitter: next = min(Max, uniform(Initial, previous × Multiplier)),
//     previous starting at Initial (Marc Brooker's "decorrelated jitter";
//     with Multiplier 3 it is exactly the published formula).
//   - GRPCJitter: gRPC's connection backoff, as grpc-go's internal/backoff
//     computes it: d(1) exactly, the first wait without jitter, then
//     d(n) × (1 + f × (2u − 1)) with the cap applied to d(n) before the
//     jitter, so that a wait may exceed Max by the factor f (up to
//     Max × (1 + f): 144 s for gRPC's 120 s and 0.2). It is the one kind
//     whose waits may exceed Max.
//
// Jitter exists because clients that failed at the same moment would
// otherwise retry at the same moments too, in synchronised waves.
type Jitter int

// The kinds of jitter. FullJitter is the zero value so that a policy whose author
// never mentioned jitter still gets it.
const (
	FullJitter Jitter = iota
	NoJitter
	EqualJitter
	ProportionalJitter
	DecorrelatedJitter
	GRPCJitter
)

var jitterNames = [...]string{FullJitter: "full", NoJitter: "none", EqualJitter: "equal", ProportionalJitter: "proportional", DecorrelatedJitter: "decorrelated", GRPCJitter: "grpc"}

// String returns the lowercase name used by the command line and the page:
// "full", "none", "equal", "proportional", "decorrelated" or "grpc".
func (j Jitter) String() string {
	if j >= FullJitter && j <= GRPCJitter {
		return jitterNames[j]
	}
	return "Jitter(" + strconv.Itoa(int(j)) + ")"
}

// jitterSyntax lists the forms that ParseJitter accepts, for its errors.
const jitterSyntax = "none, full, equal, decorrelated, proportional:F or grpc:F with F in (0, 1]"

// ParseJitter parses the textual form of a jitter kind: "none", "full",
// "equal", "decorrelated", or "proportional:F" or "grpc:F" with F in
// (0, 1], such as "proportional:0.25". The factor returned is F for
// "proportional:F" and "grpc:F", and 0 for every other form, a bare
// "proportional" or "grpc" included: a zero JitterFactor, which means the
// default 0.25.
// Names are lowercase and the input is not trimmed. Errors are *FieldError
// values naming Jitter or JitterFactor; they match ErrInvalid.
func ParseJitter(s string) (Jitter, float64, error) {
	name, arg, hasArg := strings.Cut(s, ":")
	for j, n := range jitterNames {
		if name != n {
			continue
		}
		if !Jitter(j).hasFactor() {
			if hasArg {
				return 0, 0, &FieldError{"Jitter", strconv.Quote(s), jitterSyntax + " (only proportional and grpc take a factor)"}
			}
			return Jitter(j), 0, nil
		}
		if !hasArg {
			return Jitter(j), 0, nil
		}
		f, err := strconv.ParseFloat(arg, 64)
		if err != nil || !(f > 0 && f <= 1) {
			return 0, 0, &FieldError{"JitterFactor", strconv.Quote(arg), "a number in (0, 1]"}
		}
		return Jitter(j), f, nil
	}
	return 0, 0, &FieldError{"Jitter", strconv.Quote(s), jitterSyntax}
}

// hasFactor reports whether the kind takes JitterFactor: proportional
// and grpc.
func (j Jitter) hasFactor() bool { return j == ProportionalJitter || j == GRPCJitter }

// JitterText returns the policy's jitter in the form ParseJitter accepts,
// with the effective factor for proportional and grpc jitter
// ("proportional:0.25").
func (p Policy) JitterText() string {
	if p.Jitter.hasFactor() {
		return p.Jitter.String() + ":" + strconv.FormatFloat(p.EffectiveJitterFactor(), 'g', -1, 64)
	}
	return p.Jitter.String()
}

// Rand is a source of uniformly distributed numbers in [0, 1).
// *math/rand/v2.Rand satisfies it; so does a fixed sequence in a test.
type Rand interface {
	Float64() float64
}

// Sample returns a jittered delay before retry n drawn with r. prev is the
// delay actually used before the previous retry; only DecorrelatedJitter
// reads it, and prev <= 0 means Initial. The result is never negative and
// never above Max (or the largest time.Duration when there is no cap),
// except under GRPCJitter, whose jitter follows the cap: at most
// Max × (1 + JitterFactor).
// A nil r means math/rand/v2's top-level functions, which are safe for
// concurrent use; pass a seeded source for reproducible delays.
// Sample applies the zero rule (see Policy) and does not allocate.
// n < 1 gives 0.
func (p Policy) Sample(n int, prev time.Duration, r Rand) time.Duration {
	if n < 1 {
		return 0
	}
	// The zero rule, field by field: inlined, unlike a whole Resolve.
	initial, maxDelay := sched.InitialOf(p.Initial), sched.MaxOf(p.Max)
	c := sched.CeilingOf(maxDelay)
	if p.Jitter == DecorrelatedJitter {
		if prev <= 0 {
			prev = initial
		}
		lo := float64(max(initial, 0))
		// Bounding hi keeps u × (hi − lo) finite (and never NaN) with a huge
		// multiplier; anything above the ceiling is clamped to it anyway.
		hi := min(max(float64(prev)*sched.MultiplierOf(p.Multiplier), lo), 1e300)
		return min(c, sched.ToDuration(lo+unit(r)*(hi-lo)))
	}
	d := sched.Delay(initial, sched.MultiplierOf(p.Multiplier), maxDelay, n)
	fd := float64(d)
	switch p.Jitter {
	case NoJitter:
		return d
	case EqualJitter:
		return min(d, sched.ToDuration(fd/2+unit(r)*fd/2))
	case ProportionalJitter:
		f := sched.FactorOf(p.JitterFactor)
		return min(c, sched.ToDuration(fd*(1+f*(2*unit(r)-1))))
	case GRPCJitter:
		if n == 1 {
			return d // grpc-go's Backoff(0): BaseDelay, not jittered
		}
		f := sched.FactorOf(p.JitterFactor)
		return sched.ToDuration(fd * (1 + f*(2*unit(r)-1)))
	default: // FullJitter, and values Validate rejects
		return min(d, sched.ToDuration(unit(r)*fd))
	}
}

// unit returns r.Float64() forced into [0, 1), so that a faulty source can
// never push a delay out of its bounds; a nil r draws from math/rand/v2.
func unit(r Rand) float64 {
	var u float64
	if r == nil {
		u = rand.Float64()
	} else {
		u = r.Float64()
	}
	if !(u >= 0) { // negative or NaN
		return 0
	}
	if u >= 1 {
		return 0x1.fffffffffffffp-1
	}
	return u
}
