package backoff

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestDefault(t *testing.T) {
	want := Policy{Initial: 500 * time.Millisecond, Multiplier: 2, Max: 10 * time.Second, Retries: 3, Jitter: FullJitter}
	if got := Default(); got != want {
		t.Errorf("Default() = %+v, want %+v", got, want)
	}
	if err := Default().Validate(); err != nil {
		t.Errorf("Default().Validate() = %v, want nil", err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		p     Policy
		field string // "" for valid
	}{
		{"zero", Policy{}, ""},
		{"default", Default(), ""},
		{"multiplier 1", Policy{Multiplier: 1}, ""},
		{"proportional default factor", Policy{Jitter: ProportionalJitter}, ""},
		{"proportional factor 1", Policy{Jitter: ProportionalJitter, JitterFactor: 1}, ""},
		{"negative initial means no wait", Policy{Initial: -1}, ""},
		{"initial above the default cap", Policy{Initial: 30 * time.Second}, "Initial"},
		{"initial above an explicit cap", Policy{Initial: 30 * time.Second, Max: time.Second}, ""},
		{"initial without cap", Policy{Initial: 30 * time.Second, Max: NoCap}, ""},
		{"multiplier below 1", Policy{Multiplier: 0.5}, "Multiplier"},
		{"negative multiplier", Policy{Multiplier: -2}, "Multiplier"},
		{"NaN multiplier", Policy{Multiplier: math.NaN()}, "Multiplier"},
		{"infinite multiplier", Policy{Multiplier: math.Inf(1)}, "Multiplier"},
		{"negative max means no cap", Policy{Max: -time.Second}, ""},
		{"negative retries means none", Policy{Retries: -1}, ""},
		{"unknown jitter", Policy{Jitter: GRPCJitter + 1}, "Jitter"},
		{"negative jitter", Policy{Jitter: -1}, "Jitter"},
		{"factor above 1", Policy{Jitter: ProportionalJitter, JitterFactor: 1.5}, "JitterFactor"},
		{"negative factor", Policy{Jitter: ProportionalJitter, JitterFactor: -0.1}, "JitterFactor"},
		{"NaN factor", Policy{Jitter: ProportionalJitter, JitterFactor: math.NaN()}, "JitterFactor"},
		{"factor without proportional", Policy{Jitter: FullJitter, JitterFactor: 0.5}, "JitterFactor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Fatalf("Validate() = %v, want a *FieldError for %s", err, tt.field)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("errors.Is(Validate(), ErrInvalid) = false, want true")
			}
			if fe.Accepted == "" || fe.Value == "" {
				t.Errorf("Validate() = %#v, want Value and Accepted set", fe)
			}
		})
	}
}

// TestZeroRule checks the one rule for zero and negative fields: the zero
// Policy behaves exactly like Default, a partly filled Policy keeps the
// defaults of the fields it leaves out, and negative values mean none.
func TestZeroRule(t *testing.T) {
	def := Default()
	for n := -1; n <= 12; n++ {
		if got, want := (Policy{}).Delay(n), def.Delay(n); got != want {
			t.Errorf("Policy{}.Delay(%d) = %v, want Default().Delay(%d) = %v", n, got, n, want)
		}
	}
	if got, want := (Policy{}).MaxAttempts(), def.MaxAttempts(); got != want {
		t.Errorf("Policy{}.MaxAttempts() = %d, want Default's %d", got, want)
	}
	tests := []struct {
		name     string
		p        Policy
		attempts int
		delays   []time.Duration // Delay(1), Delay(2), ...
	}{
		// Partial policies once meant retrying at once; neither is a storm now.
		{"only Retries set", Policy{Retries: 5}, 6, []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}},
		{"only Max set", Policy{Max: 5 * time.Second}, 4, []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}},
		{"zero", Policy{}, 4, []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}},
		{"NoRetries", Policy{Retries: NoRetries}, 1, nil},
		{"any negative Retries", Policy{Retries: -7}, 1, nil},
		{"no wait", Policy{Initial: -1, Retries: 2}, 3, []time.Duration{0, 0}},
		{"NoCap", Policy{Initial: 8 * time.Second, Max: NoCap, Retries: 2}, 3, []time.Duration{8 * time.Second, 16 * time.Second}},
		{"MaxInt retries", Policy{Retries: math.MaxInt}, math.MaxInt, []time.Duration{500 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.p.Validate(); err != nil {
				t.Fatalf("Validate() = %v, want nil", err)
			}
			if got := tt.p.MaxAttempts(); got != tt.attempts {
				t.Errorf("MaxAttempts() = %d, want %d", got, tt.attempts)
			}
			for i, want := range tt.delays {
				if got := tt.p.Delay(i + 1); got != want {
					t.Errorf("Delay(%d) = %v, want %v", i+1, got, want)
				}
				if got := tt.p.Sample(i+1, 0, fixed(0.999999)); got > want || got < want*99/100 {
					t.Errorf("Sample(%d) with u≈1 = %v, want about %v", i+1, got, want)
				}
			}
		})
	}
}

// TestSampleNilSource checks that a nil source draws from math/rand/v2
// instead of panicking, within the same bounds.
func TestSampleNilSource(t *testing.T) {
	p := Policy{Initial: time.Second, Max: 3 * time.Second, Retries: 5}
	for _, j := range []Jitter{FullJitter, NoJitter, EqualJitter, ProportionalJitter, DecorrelatedJitter} {
		p.Jitter = j
		distinct := map[time.Duration]bool{}
		for range 100 {
			d := p.Sample(3, 0, nil)
			if d < 0 || d > 3*time.Second {
				t.Fatalf("%v: Sample(3, 0, nil) = %v, want within [0, 3s]", j, d)
			}
			distinct[d] = true
		}
		if j != NoJitter && len(distinct) < 10 {
			t.Errorf("%v: 100 draws with a nil source gave %d distinct delays, want random ones", j, len(distinct))
		}
	}
}

func TestDelay(t *testing.T) {
	huge := Policy{Initial: time.Hour, Multiplier: 10, Max: NoCap, Retries: 100}
	tests := []struct {
		name string
		p    Policy
		n    int
		want time.Duration
	}{
		{"retry 0", Default(), 0, 0},
		{"negative retry", Default(), -5, 0},
		{"first", Default(), 1, 500 * time.Millisecond},
		{"zero multiplier means 2", Policy{Initial: time.Second}, 3, 4 * time.Second},
		{"multiplier 1", Policy{Initial: time.Second, Multiplier: 1}, 1000, time.Second},
		{"capped", Default(), 10, 10 * time.Second},
		{"MaxInt capped", Default(), math.MaxInt, 10 * time.Second},
		{"huge saturates", huge, 100, math.MaxInt64},
		{"MaxInt uncapped saturates", huge, math.MaxInt, math.MaxInt64},
		{"MaxInt multiplier 1", Policy{Initial: time.Second, Multiplier: 1}, math.MaxInt, time.Second},
		{"zero initial means 500ms", Policy{Multiplier: 3}, 1, 500 * time.Millisecond},
		{"zero max means 10s", Policy{Multiplier: 3}, 5, 10 * time.Second},
		{"negative initial means no wait", Policy{Initial: -1, Multiplier: 3}, math.MaxInt, 0},
		{"negative max means no cap", Policy{Max: NoCap}, 20, 500 * time.Millisecond << 19},
		{"invalid multiplier treated as 1", Policy{Initial: time.Second, Multiplier: math.NaN()}, 50, time.Second},
		{"cap below initial", Policy{Initial: time.Minute, Max: time.Second}, 1, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Delay(tt.n); got != tt.want {
				t.Errorf("Delay(%d) = %v, want %v", tt.n, got, tt.want)
			}
		})
	}
}

func TestParseJitter(t *testing.T) {
	tests := []struct {
		in     string
		jitter Jitter
		factor float64
		field  string // the *FieldError's field, "" for success
	}{
		{"none", NoJitter, 0, ""},
		{"full", FullJitter, 0, ""},
		{"equal", EqualJitter, 0, ""},
		{"decorrelated", DecorrelatedJitter, 0, ""},
		{"proportional", ProportionalJitter, 0, ""},
		{"proportional:0.25", ProportionalJitter, 0.25, ""},
		{"proportional:1", ProportionalJitter, 1, ""},
		{"proportional:1e-3", ProportionalJitter, 0.001, ""},
		{"", 0, 0, "Jitter"},
		{"Full", 0, 0, "Jitter"},
		{" full", 0, 0, "Jitter"},
		{"random", 0, 0, "Jitter"},
		{"full:0.5", 0, 0, "Jitter"},
		{"none:", 0, 0, "Jitter"},
		{"proportional:", 0, 0, "JitterFactor"},
		{"proportional:0", 0, 0, "JitterFactor"},
		{"proportional:1.01", 0, 0, "JitterFactor"},
		{"proportional:-0.5", 0, 0, "JitterFactor"},
		{"proportional:NaN", 0, 0, "JitterFactor"},
		{"proportional:Inf", 0, 0, "JitterFactor"},
		{"proportional:25%", 0, 0, "JitterFactor"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			j, f, err := ParseJitter(tt.in)
			if tt.field != "" {
				var fe *FieldError
				if !errors.As(err, &fe) || fe.Field != tt.field || !errors.Is(err, ErrInvalid) {
					t.Fatalf("ParseJitter(%q) = %v, %v, %v; want a *FieldError for %s", tt.in, j, f, err, tt.field)
				}
				return
			}
			if err != nil || j != tt.jitter || f != tt.factor {
				t.Fatalf("ParseJitter(%q) = %v, %v, %v; want %v, %v, nil", tt.in, j, f, err, tt.jitter, tt.factor)
			}
			// The parsed value round-trips through JitterText.
			p := Policy{Jitter: j, JitterFactor: f}
			if j2, f2, err := ParseJitter(p.JitterText()); err != nil || j2 != j || (f != 0 && f2 != f) {
				t.Errorf("ParseJitter(JitterText() = %q) = %v, %v, %v; want %v, %v", p.JitterText(), j2, f2, err, j, f)
			}
		})
	}
}

func TestJitterString(t *testing.T) {
	for j, want := range map[Jitter]string{FullJitter: "full", NoJitter: "none", EqualJitter: "equal", ProportionalJitter: "proportional", DecorrelatedJitter: "decorrelated", 7: "Jitter(7)"} {
		if got := j.String(); got != want {
			t.Errorf("Jitter(%d).String() = %q, want %q", int(j), got, want)
		}
	}
}

// fixed is a Rand that always returns u, possibly out of range.
type fixed float64

func (f fixed) Float64() float64 { return float64(f) }

func TestSample(t *testing.T) {
	const s = time.Second
	capped := Policy{Initial: s, Multiplier: 2, Max: 3 * s, Retries: 5}
	tests := []struct {
		name string
		p    Policy
		n    int
		prev time.Duration
		u    float64
		want time.Duration
	}{
		{"full low", capped, 2, 0, 0, 0},
		{"full middle", capped, 2, 0, 0.5, s},
		{"full capped", capped, 3, 0, 0.5, 1500 * time.Millisecond},
		{"full with a faulty source above 1", capped, 2, 0, 7, 2 * s},
		{"full with a NaN source", capped, 2, 0, math.NaN(), 0},
		{"none", with(capped, NoJitter, 0), 3, 0, 0.9, 3 * s},
		{"equal low", with(capped, EqualJitter, 0), 2, 0, 0, s},
		{"equal middle", with(capped, EqualJitter, 0), 2, 0, 0.5, 1500 * time.Millisecond},
		{"proportional low", with(capped, ProportionalJitter, 0.5), 2, 0, 0, s},
		{"proportional high, under the cap", with(capped, ProportionalJitter, 0.25), 2, 0, 0.999, 2*s + 499*time.Millisecond},
		{"proportional clamped at the cap", with(capped, ProportionalJitter, 0.5), 3, 0, 0.999, 3 * s},
		{"retry 0", capped, 0, 0, 0.5, 0},
		{"decorrelated first", with(capped, DecorrelatedJitter, 0), 1, 0, 0.5, 1500 * time.Millisecond},   // uniform(1 s, 2 s)
		{"decorrelated from prev", with(capped, DecorrelatedJitter, 0), 2, 1200 * time.Millisecond, 0, s}, // uniform(1 s, 2.4 s)
		{"decorrelated capped", with(capped, DecorrelatedJitter, 0), 4, 3 * s, 0.99, 3 * s},               // uniform(1 s, 6 s) capped
		{"decorrelated huge multiplier", Policy{Initial: s, Multiplier: math.MaxFloat64, Max: NoCap, Jitter: DecorrelatedJitter}, 2, 0, 0, s},
		{"decorrelated huge multiplier, high", Policy{Initial: s, Multiplier: math.MaxFloat64, Max: NoCap, Jitter: DecorrelatedJitter}, 2, 0, 0.5, math.MaxInt64},
		{"zero policy is Default", Policy{}, 2, 0, 0.5, 500 * time.Millisecond},
		{"zero policy decorrelated", Policy{Jitter: DecorrelatedJitter}, 1, 0, 0.5, 750 * time.Millisecond},
		{"negative initial never waits", Policy{Initial: -1, Jitter: EqualJitter}, 3, 0, 0.5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Sample(tt.n, tt.prev, fixed(tt.u)); got != tt.want {
				t.Errorf("Sample(%d, %v) with u=%v = %v, want %v", tt.n, tt.prev, tt.u, got, tt.want)
			}
		})
	}
}

func with(p Policy, j Jitter, f float64) Policy {
	p.Jitter, p.JitterFactor = j, f
	return p
}

func TestSampleAllocates(t *testing.T) {
	p := Default()
	r := fixed(0.5)
	if n := testing.AllocsPerRun(100, func() { p.Sample(2, 0, r) }); n != 0 {
		t.Errorf("Sample allocates %v times per call, want 0", n)
	}
}

// TestGRPCJitter checks gRPC's connection backoff: the first wait is
// Initial exactly, whatever the draw, and the jitter of the later ones
// follows the cap, so that a capped wait ranges over Max × [1 − f, 1 + f].
func TestGRPCJitter(t *testing.T) {
	p := Policy{Initial: time.Second, Multiplier: 1.6, Max: 120 * time.Second, Jitter: GRPCJitter, JitterFactor: 0.2}
	tests := []struct {
		n    int
		u    fixed
		want time.Duration
	}{
		{1, 0, time.Second},
		{1, 0.999, time.Second},
		{2, 0, 1280 * time.Millisecond},   // 1.6 s × 0.8
		{2, 0.5, 1600 * time.Millisecond}, // 1.6 s
		{30, 0, 96 * time.Second},         // the 120 s cap × 0.8
		{30, 0.5, 120 * time.Second},
	}
	for _, tt := range tests {
		if got := p.Sample(tt.n, 0, tt.u); got != tt.want {
			t.Errorf("Sample(%d) with u %v = %v, want %v", tt.n, float64(tt.u), got, tt.want)
		}
	}
	// Above the cap: 144 s for u → 1.
	if got := p.Sample(30, 0, fixed(0.9999999)); got <= 120*time.Second || got > 144*time.Second {
		t.Errorf("Sample(30) with u near 1 = %v, want in (120s, 144s]: the jitter follows the cap", got)
	}
	if p.JitterText() != "grpc:0.2" || p.Validate() != nil {
		t.Errorf("JitterText() = %q, Validate() = %v; want grpc:0.2, valid", p.JitterText(), p.Validate())
	}
}
