package backoff

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fuzzPolicy builds a policy from fuzz input, valid or not, with a retry
// count small enough for many runs a second.
func fuzzPolicy(initial int64, mult float64, maxd int64, retries uint16, jitter int8, factor float64) Policy {
	return Policy{
		Initial:      time.Duration(initial),
		Multiplier:   mult,
		Max:          time.Duration(maxd),
		Retries:      int(retries % 400),
		Jitter:       Jitter(jitter % 6),
		JitterFactor: factor,
	}
}

func addPolicySeeds(f *testing.F) {
	f.Add(int64(500*time.Millisecond), 2.0, int64(30*time.Second), uint16(8), int8(FullJitter), 0.0, uint64(1), 3)
	f.Add(int64(time.Hour), 10.0, int64(0), uint16(100), int8(NoJitter), 0.0, uint64(2), math.MaxInt)
	f.Add(int64(time.Millisecond), 1.0001, int64(time.Second), uint16(399), int8(ProportionalJitter), 1.0, uint64(3), 1<<40)
	f.Add(int64(100*time.Millisecond), 3.0, int64(5*time.Second), uint16(20), int8(DecorrelatedJitter), 0.0, uint64(4), 7)
	f.Add(int64(-5), math.NaN(), int64(-1), uint16(3), int8(-3), math.Inf(1), uint64(5), -1)
	f.Add(int64(math.MaxInt64), math.MaxFloat64, int64(math.MaxInt64), uint16(50), int8(EqualJitter), -1.0, uint64(6), 0)
}

// FuzzPolicyInvariants checks, for every policy (valid or not): every retry
// satisfies 0 <= min <= mean <= max <= cap, totals never decrease, Min <=
// P50 <= P90 <= P99 <= Max, samples stay within their retry's bounds, and
// Delay never overflows, at any retry number.
func FuzzPolicyInvariants(f *testing.F) {
	addPolicySeeds(f)
	f.Fuzz(func(t *testing.T, initial int64, mult float64, maxd int64, retries uint16, jitter int8, factor float64, seed uint64, n int) {
		p := fuzzPolicy(initial, mult, maxd, retries, jitter, factor)
		c := p.ceiling()
		for _, k := range []int{n, n - 1, n + 1, math.MaxInt, math.MaxInt - 1, 1, 2} {
			d := p.Delay(k)
			if d < 0 || d > c {
				t.Fatalf("%+v: Delay(%d) = %v, want within [0, %v]", p, k, d, c)
			}
			if k < math.MaxInt && p.Delay(k+1) < d {
				t.Fatalf("%+v: Delay(%d) = %v > Delay(%d) = %v", p, k, d, k+1, p.Delay(k+1))
			}
		}
		st := p.Stats(seed)
		checkStats(t, st)
		r := rand.New(rand.NewPCG(seed, 1))
		var prev time.Duration
		for i, rs := range st.Retries {
			prev = p.Sample(i+1, prev, r)
			if prev < rs.Min || prev > rs.Max {
				t.Fatalf("%+v: Sample(%d) = %v, want within [%v, %v]", p, i+1, prev, rs.Min, rs.Max)
			}
		}
		if d := p.Sample(n, time.Duration(initial), r); d < 0 || d > c {
			t.Fatalf("%+v: Sample(%d, %v) = %v, want within [0, %v]", p, n, time.Duration(initial), d, c)
		}
	})
}

// FuzzSolve checks that a worst-case answer fits and is the largest: one
// more nanosecond, float64 step or retry does not fit.
func FuzzSolve(f *testing.F) {
	addPolicySeeds(f)
	f.Fuzz(func(t *testing.T, initial int64, mult float64, maxd int64, retries uint16, jitter int8, factor float64, seed uint64, n int) {
		p := fuzzPolicy(initial, mult, maxd, retries, jitter, factor)
		deadline := time.Duration(seed % uint64(48*time.Hour))
		param := Param(uint(n) % 3)
		got, err := Solve(p, param, deadline, TargetMax, seed)
		if err != nil {
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrArgument) && !errors.Is(err, ErrUnsolvable) && !errors.Is(err, ErrUnbounded) {
				t.Fatalf("Solve() error %v matches no documented sentinel", err)
			}
			return
		}
		within := func(q Policy) bool {
			q = q.resolved()
			n := max(q.Retries, 0)
			return q.retriesWithin(n, deadline) == n
		}
		if !within(got) {
			t.Fatalf("Solve(%+v, %v, %v) = %+v, whose worst case exceeds the deadline", p, param, deadline, got)
		}
		if bigger := next(got, param); within(bigger) && bigger != got {
			t.Fatalf("Solve(%+v, %v, %v) = %+v, but %+v fits too", p, param, deadline, got, bigger)
		}
	})
}

// FuzzParseJitter checks that ParseJitter never panics, accepts only what
// Validate accepts, and that accepted input round-trips through JitterText.
func FuzzParseJitter(f *testing.F) {
	for _, s := range []string{"none", "full", "equal", "decorrelated", "proportional", "proportional:0.25", "proportional:1e-300", "proportional:0x1p-2", "full:", "", ":", "proportional:NaN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		j, factor, err := ParseJitter(s)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || !errors.Is(err, ErrInvalid) || !strings.HasPrefix(err.Error(), "backoff: ") {
				t.Fatalf("ParseJitter(%q) error %v, want a *FieldError matching ErrInvalid", s, err)
			}
			return
		}
		p := Policy{Jitter: j, JitterFactor: factor}
		if err := p.Validate(); err != nil {
			t.Fatalf("ParseJitter(%q) = %v, %v, which Validate rejects: %v", s, j, factor, err)
		}
		j2, f2, err := ParseJitter(p.JitterText())
		if err != nil || j2 != j || (factor != 0 && f2 != factor) {
			t.Fatalf("ParseJitter(%q) = %v, %v; JitterText %q parses as %v, %v, %v", s, j, factor, p.JitterText(), j2, f2, err)
		}
	})
}

// parseHuman reads Human's output back, returning the duration and how far
// the rounding may have moved it.
func parseHuman(t *testing.T, s string) (d, tolerance time.Duration) {
	t.Helper()
	if n, ok := strings.CutSuffix(s, " ms"); ok {
		v, err := strconv.Atoi(n)
		if err != nil {
			t.Fatalf("Human gave %q", s)
		}
		return time.Duration(v) * time.Millisecond, time.Millisecond / 2
	}
	if n, ok := strings.CutSuffix(s, " s"); ok && !strings.Contains(n, " ") {
		v, err := strconv.ParseFloat(n, 64)
		if err != nil || strings.HasSuffix(n, ".0") {
			t.Fatalf("Human gave %q", s)
		}
		return time.Duration(v * float64(time.Second)), 50 * time.Millisecond
	}
	fields := strings.Fields(s)
	if len(fields)%2 != 0 || len(fields) == 0 {
		t.Fatalf("Human gave %q", s)
	}
	units := map[string]time.Duration{"h": time.Hour, "min": time.Minute, "s": time.Second}
	for i := 0; i < len(fields); i += 2 {
		v, err := strconv.ParseInt(fields[i], 10, 64)
		u, ok := units[fields[i+1]]
		if err != nil || !ok || v <= 0 || (u != time.Hour && v >= 60) {
			t.Fatalf("Human gave %q", s)
		}
		d += time.Duration(v) * u
	}
	return d, time.Second / 2
}

// FuzzHuman checks that Human never panics and that its text reads back to
// the duration within the rounding of its unit.
func FuzzHuman(f *testing.F) {
	for _, d := range []int64{0, 1, 499_999, 999_500_000, 59_950_000_000, 91_500_000_000, math.MaxInt64, math.MaxInt64 - 1, math.MinInt64, -1} {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, n int64) {
		d := time.Duration(n)
		s := Human(d)
		if d < 0 {
			if !strings.HasPrefix(s, "−") {
				t.Fatalf("Human(%v) = %q, want a leading minus sign", d, s)
			}
			return
		}
		if d == maxDuration {
			if s != "more than 292 years" {
				t.Fatalf("Human(%v) = %q", d, s)
			}
			return
		}
		got, tol := parseHuman(t, s)
		if diff := got - d; diff > tol || diff < -tol {
			t.Fatalf("Human(%v) = %q, which reads as %v", d, s, got)
		}
	})
}
