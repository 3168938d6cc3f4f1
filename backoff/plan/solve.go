package plan

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/again-go/again/backoff"
)

// Param names the Policy field that Solve searches for. The zero value is
// ParamInitial.
type Param int

// The parameters Solve can search for.
const (
	ParamInitial    Param = iota // Policy.Initial
	ParamMultiplier              // Policy.Multiplier
	ParamRetries                 // Policy.Retries
)

// String returns "initial", "multiplier" or "retries".
func (p Param) String() string {
	switch p {
	case ParamInitial:
		return "initial"
	case ParamMultiplier:
		return "multiplier"
	case ParamRetries:
		return "retries"
	}
	return fmt.Sprintf("Param(%d)", int(p))
}

// Target is the statistic of the total wait that Solve keeps within the
// deadline. The zero value is TargetMax, the worst case.
type Target int

// The statistics Solve can hold to a deadline.
const (
	TargetMax Target = iota // the longest possible total wait (Total.Max)
	TargetP99               // the 99th percentile of the total wait (Total.P99)
)

// String returns "max" or "p99".
func (t Target) String() string {
	switch t {
	case TargetMax:
		return "max"
	case TargetP99:
		return "p99"
	}
	return fmt.Sprintf("Target(%d)", int(t))
}

// ErrUnsolvable is returned by Solve when no value of the parameter keeps
// the target within the deadline: the smallest value is already too long.
var ErrUnsolvable = errors.New("plan: no value fits the deadline")

// ErrUnbounded is returned by Solve when every value of the parameter keeps
// the target within the deadline, so there is no largest one: for example
// the multiplier when even Retries delays of Max each fit, the initial delay
// when Retries is NoRetries, or the retries when every delay is 0. Under TargetP99,
// Solve also returns it for the retries when MaxStatsRetries retries fit,
// since it analyses no more.
var ErrUnbounded = errors.New("plan: every value fits the deadline")

// ErrArgument is matched by errors.Is for the errors Solve returns when its
// deadline, param or target is out of range.
var ErrArgument = errors.New("plan: invalid argument")

// Solve returns p with param set to the largest value for which the target
// statistic of the total wait ends at least backoff.DeadlineReserve before
// deadline, the time the retry loops keep for the last attempt, so that
// they shorten no wait (see DeadlineFit); the other fields of p are kept. The statistics are those of Analyze(p, seed), so the returned
// policy's statistics show a target within deadline.
//
// Larger values never shorten the total wait, so a search finds the answer:
// for TargetMax, to the nanosecond for Initial, the exact float64 for
// Multiplier and the exact count for Retries. TargetP99 calls Analyze at
// each step and stops at a relative precision of about 10⁻⁴ for Initial
// and Multiplier (the percentile itself is only that accurate); the retry
// count is exact. A TargetP99 search needs p.Retries <= MaxStatsRetries for
// Initial and Multiplier.
//
// Solve fails with
//   - the error of p.Validate (matching backoff.ErrInvalid) for an invalid policy;
//   - an error matching ErrArgument when deadline <= 0 or param or target is
//     not one of the constants, or a TargetP99 search would exceed MaxStatsRetries;
//   - ErrUnsolvable, returning p unchanged, when even the smallest value
//     (no wait, Multiplier 1, NoRetries) is too long: the multiplier, or
//     the initial delay when the deadline is no more than the reserve away
//     (the loop then makes no retry at all);
//   - ErrUnbounded, returning p unchanged, when every value fits.
func Solve(p backoff.Policy, param Param, deadline time.Duration, target Target, seed uint64) (backoff.Policy, error) {
	if err := p.Validate(); err != nil {
		return p, err
	}
	switch {
	case deadline <= 0:
		return p, fmt.Errorf("%w: deadline must be > 0, got %v", ErrArgument, deadline)
	case param < ParamInitial || param > ParamRetries:
		return p, fmt.Errorf("%w: param must be ParamInitial, ParamMultiplier or ParamRetries, got %v", ErrArgument, param)
	case target != TargetMax && target != TargetP99:
		return p, fmt.Errorf("%w: target must be TargetMax or TargetP99, got %v", ErrArgument, target)
	case target == TargetP99 && param != ParamRetries && p.Retries > MaxStatsRetries:
		return p, fmt.Errorf("%w: a p99 target needs at most %d retries, got %d", ErrArgument, MaxStatsRetries, p.Retries)
	}
	s := solver{p: resolve(p), param: param, deadline: deadline, seed: seed}
	x, err := s.solve(TargetMax, s.smallest(), s.largest())
	if target == TargetP99 && !errors.Is(err, ErrUnbounded) {
		// Every value whose worst case fits has its p99 within the deadline
		// too, so the p99 answer is at least the worst-case one.
		lo := s.smallest()
		if err == nil {
			lo = x
		}
		x, err = s.solveP99(lo)
	}
	if err != nil {
		return p, err
	}
	// Only param changes; the other fields stay as the caller wrote them.
	q := s.with(x)
	switch param {
	case ParamInitial:
		p.Initial = q.Initial
	case ParamMultiplier:
		p.Multiplier = q.Multiplier
	case ParamRetries:
		p.Retries = q.Retries
	}
	return p, nil
}

// solver searches one parameter. Values are coded as uint64s whose order is
// the order of the parameter: nanoseconds for Initial, the count for Retries
// and the IEEE 754 bits for Multiplier (for positive floats the bits order as
// the values do).
type solver struct {
	p        schedule
	param    Param
	deadline time.Duration
	seed     uint64
}

func (s solver) smallest() uint64 {
	if s.param == ParamMultiplier {
		return math.Float64bits(1)
	}
	return 0
}

func (s solver) largest() uint64 {
	switch s.param {
	case ParamMultiplier:
		return math.Float64bits(math.MaxFloat64)
	case ParamRetries:
		return math.MaxInt
	}
	return math.MaxInt64
}

// with returns the resolved policy with the value x. The value 0 of Initial
// and Retries is written as -1 (no wait, NoRetries): zero would mean the
// default.
func (s solver) with(x uint64) schedule {
	q := s.p
	switch s.param {
	case ParamInitial:
		q.Initial = time.Duration(x)
		if x == 0 {
			q.Initial = -1
		}
	case ParamMultiplier:
		q.Multiplier = math.Float64frombits(x)
	case ParamRetries:
		q.Retries = int(x)
		if x == 0 {
			q.Retries = backoff.NoRetries
		}
	}
	return q
}

// fits reports whether the value x keeps the target within the deadline,
// leaving the reserve: the retry loop then shortens no wait (see
// DeadlineFit).
func (s solver) fits(x uint64, target Target) bool {
	q := s.with(x)
	n := max(q.Retries, 0)
	if target == TargetMax {
		_, fits := q.deadlineFit(n, s.deadline)
		return fits
	}
	end, ok := afterReserve(s.deadline)
	return n == 0 || (ok && q.stats(s.seed).Total.P99 <= end)
}

// solve finds the largest x in [lo, hi] that fits by bisection, after
// checking the ends.
func (s solver) solve(target Target, lo, hi uint64) (uint64, error) {
	if !s.fits(lo, target) {
		return 0, ErrUnsolvable
	}
	if s.fits(hi, target) {
		return 0, ErrUnbounded
	}
	if target == TargetMax && s.param == ParamRetries {
		// The count follows directly from the prefix sums. lo, no
		// retries, fits and hi does not, so some delay is positive and
		// the deadline is more than the reserve away.
		end, _ := afterReserve(s.deadline)
		return uint64(s.p.retriesWithin(math.MaxInt, end)), nil
	}
	return s.bisect(lo, hi, target, func(lo, hi uint64) bool { return hi-lo <= 1 }), nil
}

// bisect narrows [lo, hi], where lo fits and hi does not, until done says so,
// and returns lo.
func (s solver) bisect(lo, hi uint64, target Target, done func(lo, hi uint64) bool) uint64 {
	for !done(lo, hi) {
		mid := lo + (hi-lo)/2
		if s.fits(mid, target) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// solveP99 finds the largest value whose p99 fits, starting from lo, a value
// whose worst case fits (or the smallest value). It gallops upwards to
// bracket the answer, then bisects; each step costs one Analyze.
func (s solver) solveP99(lo uint64) (uint64, error) {
	top := s.largest()
	if s.param == ParamRetries {
		top = MaxStatsRetries
		lo = min(lo, top)
	}
	if !s.fits(lo, TargetP99) {
		return 0, ErrUnsolvable
	}
	// Counts reach top by galloping; for the others, one look at top
	// settles the unbounded case before a long gallop would.
	if s.param != ParamRetries && s.fits(top, TargetP99) {
		return 0, ErrUnbounded
	}
	// Gallop upwards to bracket the answer. The answer lies where the
	// schedule is not yet all at the cap (beyond that nothing changes and
	// top would fit), so this takes a few steps.
	hi := lo
	for {
		next := s.grow(hi, top)
		if next == top && s.param == ParamRetries && s.fits(top, TargetP99) {
			return 0, ErrUnbounded
		}
		if next == top || !s.fits(next, TargetP99) {
			hi = next
			break
		}
		lo, hi = next, next
	}
	return s.bisect(lo, hi, TargetP99, s.closeEnough), nil
}

// grow returns the next value to try when galloping up from x, at most top:
// twice the nanoseconds or the count, the square of the multiplier.
func (s solver) grow(x, top uint64) uint64 {
	if s.param == ParamMultiplier {
		m := math.Float64frombits(x)
		next := max(m*m, m+1.0/1024)
		if next >= math.Float64frombits(top) {
			return top
		}
		return math.Float64bits(next)
	}
	if x >= top/2 {
		return top
	}
	return max(2*x, 1)
}

// closeEnough stops a p99 bisection at a relative precision of 2⁻¹⁴, since
// the percentile itself is no more accurate; counts are searched exactly.
func (s solver) closeEnough(lo, hi uint64) bool {
	switch s.param {
	case ParamMultiplier:
		a, b := math.Float64frombits(lo), math.Float64frombits(hi)
		return hi-lo <= 1 || b-a <= a*0x1p-14
	case ParamInitial:
		return hi-lo <= max(1, lo>>14)
	}
	return hi-lo <= 1
}

// exactWalk bounds how many retries retriesWithin adds one by one before it
// switches to closed forms.
const exactWalk = 1 << 20

// retriesWithin returns the largest n <= limit for which the longest total
// wait over n retries, the sum of retryMax(1..n), is at most d. Delays never
// shrink, and once they stop growing (at the cap, with Multiplier 1, or with
// Initial 0) the rest follows by division, so this is fast for every input.
func (p schedule) retriesWithin(limit int, d time.Duration) int {
	if d < 0 || limit <= 0 {
		return 0
	}
	var sum time.Duration
	for i := 1; i <= limit; i++ {
		hi := p.retryMax(i)
		steady := hi == p.Ceiling() || p.Initial <= 0 || p.Multiplier == 1
		if p.jitter == backoff.GRPCJitter {
			// Its first delay is not jittered, and its jitter reaches
			// beyond the cap: from retry 2 on, a capped delay repeats.
			steady = i > 1 && (p.Capped(i) || p.Initial <= 0 || p.Multiplier == 1)
		}
		if steady {
			// Every later delay equals hi.
			if hi == 0 {
				return limit
			}
			k := int64((d - sum) / hi)
			return i - 1 + int(min(k, int64(limit-i+1)))
		}
		if hi > d-sum {
			return i - 1
		}
		sum += hi
		if i == exactWalk {
			return p.retriesWithinApprox(i, sum, limit, d)
		}
	}
	return limit
}

// retriesWithinApprox continues retriesWithin past retry i0, whose prefix sum
// is sum, with the geometric closed form of the maxima on float64s. It is
// reached only with more than a million retries that still grow, which takes
// a multiplier within about 10⁻⁵ of 1.
func (p schedule) retriesWithinApprox(i0 int, sum time.Duration, limit int, d time.Duration) int {
	a := float64(p.Initial)
	switch p.jitter {
	case backoff.ProportionalJitter:
		a *= 1 + p.Factor
	case backoff.GRPCJitter:
		// Approximate: the first retry's maximum is Initial, the others'
		// jitter reaches beyond the cap (c below).
		a *= 1 + p.Factor
	case backoff.DecorrelatedJitter:
		a *= p.Multiplier
	}
	m, c := p.Multiplier, float64(p.Ceiling())
	// g(k) is the sum of min(c, a·m^(i−1)) over i = 1..k.
	uncapped := math.Floor(math.Log(c/a)/math.Log(m)) + 1
	g := func(k int) float64 {
		kc := min(float64(k), max(uncapped, 0))
		return a*math.Expm1(kc*math.Log(m))/(m-1) + (float64(k)-kc)*c
	}
	budget := float64(d-sum) + g(i0)
	lo, hi := i0, limit
	if g(hi) <= budget {
		return hi
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if g(mid) <= budget {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
