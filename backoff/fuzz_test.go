package backoff

import (
	"errors"
	"github.com/again-go/again/backoff/internal/sched"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// FuzzSchedule checks, for every policy (valid or not), that Delay never
// decreases, never overflows and stays within [0, cap] at any retry number,
// and that Sample stays within [0, cap] with any previous delay.
func FuzzSchedule(f *testing.F) {
	f.Add(int64(500*time.Millisecond), 2.0, int64(30*time.Second), int8(FullJitter), 0.0, uint64(1), 3, int64(0))
	f.Add(int64(time.Hour), 10.0, int64(-1), int8(NoJitter), 0.0, uint64(2), math.MaxInt, int64(time.Hour))
	f.Add(int64(0), 0.0, int64(0), int8(DecorrelatedJitter), 0.0, uint64(3), 7, int64(-5))
	f.Add(int64(-5), math.NaN(), int64(-1), int8(-3), math.Inf(1), uint64(5), -1, int64(math.MaxInt64))
	f.Add(int64(math.MaxInt64), math.MaxFloat64, int64(math.MaxInt64), int8(ProportionalJitter), -1.0, uint64(6), 0, int64(1))
	// Once found by plan's FuzzPolicyInvariants (its corpus moved there).
	f.Add(int64(47), math.NaN(), int64(17), int8(-127), math.Inf(1), uint64(106), -24, int64(0))
	f.Fuzz(func(t *testing.T, initial int64, mult float64, maxd int64, jitter int8, factor float64, seed uint64, n int, prev int64) {
		p := Policy{Initial: time.Duration(initial), Multiplier: mult, Max: time.Duration(maxd), Jitter: Jitter(jitter % 7), JitterFactor: factor}
		c := time.Duration(maxd)
		switch {
		case c == 0:
			c = 10 * time.Second
		case c < 0:
			c = math.MaxInt64
		}
		// A wait's bound: the cap, or under GRPCJitter the cap and its
		// jitter, which gRPC applies after it.
		w := c
		if p.Jitter == GRPCJitter {
			w = sched.ToDuration(float64(c) * (1 + sched.FactorOf(p.JitterFactor)))
		}
		r := rand.New(rand.NewPCG(seed, 1))
		for _, k := range []int{n, n - 1, n + 1, math.MaxInt, math.MaxInt - 1, 1, 2} {
			d := p.Delay(k)
			if d < 0 || d > c {
				t.Fatalf("%+v: Delay(%d) = %v, want within [0, %v]", p, k, d, c)
			}
			if k < math.MaxInt && p.Delay(k+1) < d {
				t.Fatalf("%+v: Delay(%d) = %v > Delay(%d) = %v", p, k, d, k+1, p.Delay(k+1))
			}
			if s := p.Sample(k, time.Duration(prev), r); s < 0 || s > w {
				t.Fatalf("%+v: Sample(%d, %v) = %v, want within [0, %v]", p, k, time.Duration(prev), s, w)
			}
		}
		// One call's waits: MaxAttempts()−1 of them, each within [0, cap].
		p.Retries = n % 64
		count := 0
		for d := range p.Waits(r) {
			if d < 0 || d > w {
				t.Fatalf("%+v: a wait of %v, want within [0, %v]", p, d, w)
			}
			count++
		}
		if count != p.MaxAttempts()-1 {
			t.Fatalf("%+v: %d waits, want MaxAttempts()−1 = %d", p, count, p.MaxAttempts()-1)
		}
	})
}

// FuzzParseJitter checks that ParseJitter never panics, accepts only what
// Validate accepts, and that accepted input round-trips through JitterText.
func FuzzParseJitter(f *testing.F) {
	for _, s := range []string{"none", "full", "equal", "decorrelated", "proportional", "proportional:0.25", "proportional:1e-300", "proportional:0x1p-2", "grpc", "grpc:0.2", "full:", "", ":", "proportional:NaN"} {
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
