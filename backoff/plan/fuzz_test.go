package plan

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
)

// fuzzPolicy builds a policy from fuzz input, valid or not, with a retry
// count small enough for many runs a second.
func fuzzPolicy(initial int64, mult float64, maxd int64, retries uint16, jitter int8, factor float64) backoff.Policy {
	return backoff.Policy{
		Initial:      time.Duration(initial),
		Multiplier:   mult,
		Max:          time.Duration(maxd),
		Retries:      int(retries % 400),
		Jitter:       backoff.Jitter(jitter % 7),
		JitterFactor: factor,
	}
}

func addPolicySeeds(f *testing.F) {
	f.Add(int64(500*time.Millisecond), 2.0, int64(30*time.Second), uint16(8), int8(backoff.FullJitter), 0.0, uint64(1), 3)
	f.Add(int64(time.Hour), 10.0, int64(0), uint16(100), int8(backoff.NoJitter), 0.0, uint64(2), math.MaxInt)
	f.Add(int64(time.Millisecond), 1.0001, int64(time.Second), uint16(399), int8(backoff.ProportionalJitter), 1.0, uint64(3), 1<<40)
	f.Add(int64(100*time.Millisecond), 3.0, int64(5*time.Second), uint16(20), int8(backoff.DecorrelatedJitter), 0.0, uint64(4), 7)
	f.Add(int64(-5), math.NaN(), int64(-1), uint16(3), int8(-3), math.Inf(1), uint64(5), -1)
	f.Add(int64(math.MaxInt64), math.MaxFloat64, int64(math.MaxInt64), uint16(50), int8(backoff.EqualJitter), -1.0, uint64(6), 0)
	f.Add(int64(time.Second), 1.6, int64(120*time.Second), uint16(20), int8(backoff.GRPCJitter), 0.2, uint64(7), 1)
	f.Add(int64(time.Second), 1.0, int64(time.Second), uint16(20), int8(backoff.GRPCJitter), 0.0, uint64(8), 2)
}

// FuzzPolicyInvariants checks, for every policy (valid or not): every retry
// satisfies 0 <= min <= mean <= max <= cap, totals never decrease, Min <=
// P50 <= P90 <= P99 <= Max, samples stay within their retry's bounds, and
// the sums never overflow (backoff's FuzzSchedule checks Delay and Sample
// alone at any retry number).
func FuzzPolicyInvariants(f *testing.F) {
	addPolicySeeds(f)
	f.Fuzz(func(t *testing.T, initial int64, mult float64, maxd int64, retries uint16, jitter int8, factor float64, seed uint64, n int) {
		p := fuzzPolicy(initial, mult, maxd, retries, jitter, factor)
		st := Analyze(p, seed)
		checkStats(t, st)
		r := rand.New(rand.NewPCG(seed, 1))
		var prev time.Duration
		for i, rs := range st.Retries {
			prev = p.Sample(i+1, prev, r)
			if prev < rs.Min || prev > rs.Max {
				t.Fatalf("%+v: Sample(%d) = %v, want within [%v, %v]", p, i+1, prev, rs.Min, rs.Max)
			}
		}
	})
}

// FuzzSolve checks that a worst-case answer fits and is the largest: one
// more nanosecond, float64 step or retry does not fit. Fitting is the
// loops' rule: the worst-case total wait ends at least the reserve before
// the deadline (so no wait is shortened), or there is no retry at all.
func FuzzSolve(f *testing.F) {
	addPolicySeeds(f)
	f.Fuzz(func(t *testing.T, initial int64, mult float64, maxd int64, retries uint16, jitter int8, factor float64, seed uint64, n int) {
		p := fuzzPolicy(initial, mult, maxd, retries, jitter, factor)
		deadline := time.Duration(seed % uint64(48*time.Hour))
		param := Param(uint(n) % 3)
		got, err := Solve(p, param, deadline, TargetMax, seed)
		if err != nil {
			if !errors.Is(err, backoff.ErrInvalid) && !errors.Is(err, ErrArgument) && !errors.Is(err, ErrUnsolvable) && !errors.Is(err, ErrUnbounded) {
				t.Fatalf("Solve() error %v matches no documented sentinel", err)
			}
			return
		}
		within := func(q backoff.Policy) bool {
			s := resolve(q)
			_, fits := s.deadlineFit(s.RetryCount(), deadline)
			return fits
		}
		if !within(got) {
			t.Fatalf("Solve(%+v, %v, %v) = %+v, whose worst case exceeds the deadline", p, param, deadline, got)
		}
		if bigger := next(got, param); within(bigger) && bigger != got {
			t.Fatalf("Solve(%+v, %v, %v) = %+v, but %+v fits too", p, param, deadline, got, bigger)
		}
	})
}
