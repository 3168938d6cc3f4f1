package rate

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Rate
	}{
		{"40/s", Rate{40, time.Second}},
		{" 40/s ", Rate{40, time.Second}},
		{"0.5/s", Rate{0.5, time.Second}},
		{"600/m", Rate{600, time.Minute}},
		{"600/1m", Rate{600, time.Minute}},
		{"10/100ms", Rate{10, 100 * time.Millisecond}},
		{"1e3/h", Rate{1000, time.Hour}},
		{"3/1m30s", Rate{3, 90 * time.Second}},
		{"3/.5s", Rate{3, 500 * time.Millisecond}},
		{"1/us", Rate{1, time.Microsecond}},
		{"0/s", Rate{0, time.Second}},
		{"0", Rate{0, time.Second}}, // 0 is 0 in every unit
		{"0.0", Rate{0, time.Second}},
	} {
		got, err := Parse(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tt := range []struct {
		in     string
		noUnit bool
	}{
		{"40", true}, {"1.5", true}, {"1e3", true}, {" 40 ", true},
		{"", false}, {"/s", false}, {"40/", false}, {"40/100", false}, {"40/0s", false}, {"40/-1s", false},
		{"-1/s", false}, {"+1/s", false}, {"inf/s", false}, {"NaN/s", false}, {"0x10/s", false}, {"1_000/s", false},
		{"1e999/s", false}, {"40/sec", false}, {"40/second", false}, {"40 / s", false}, {"40/s/s", false},
		{"forty/s", false}, {"40per s", false}, {"-40", false},
	} {
		r, err := Parse(tt.in)
		if !errors.Is(err, ErrSyntax) || errors.Is(err, ErrNoUnit) != tt.noUnit {
			t.Errorf("Parse(%q) = %v, %v; want ErrSyntax, ErrNoUnit %v", tt.in, r, err, tt.noUnit)
		}
		var e *Error
		if !errors.As(err, &e) || e.Value != tt.in {
			t.Errorf("Parse(%q) error %v, want an *Error with the input", tt.in, err)
		}
	}
}

func TestPerSecondAndString(t *testing.T) {
	for _, tt := range []struct {
		r         Rate
		perSecond float64
		s         string
	}{
		{Rate{40, time.Second}, 40, "40/s"},
		{Rate{600, time.Minute}, 10, "600/m"},
		{Rate{10, 100 * time.Millisecond}, 100, "10/100ms"},
		{Rate{3600, time.Hour}, 1, "3600/h"},
		{Rate{0.5, time.Second}, 0.5, "0.5/s"},
		{Rate{3, 90 * time.Second}, 3.0 / 90, "3/1m30s"},
		{Rate{3, 2 * time.Minute}, 3.0 / 120, "3/2m"},
		{Rate{7200, 2 * time.Hour}, 1, "7200/2h"},
		{Rate{1, 90 * time.Minute}, 1.0 / 5400, "1/1h30m"},
	} {
		if got := tt.r.PerSecond(); math.Abs(got-tt.perSecond) > 1e-12 {
			t.Errorf("%v.PerSecond() = %v, want %v", tt.r, got, tt.perSecond)
		}
		if got := tt.r.String(); got != tt.s {
			t.Errorf("Rate%+v.String() = %q, want %q", tt.r, got, tt.s)
		}
	}
}

// FuzzParse: Parse never panics; what it accepts is a finite rate of 0 or
// more per a duration above 0, which its String writes back as the same
// Rate; what it refuses is an *Error with the input.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"40/s", "0.5/s", "600/m", "10/100ms", "0", "40", "1e308/ns", "1/1m30s", "1/2m0s", "1/2h0m0s", "", "/", "4e-324/h", "9223372036854775807/ns"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Value != s || !errors.Is(err, ErrSyntax) {
				t.Fatalf("Parse(%q) error %v, want an *Error with the input matching ErrSyntax", s, err)
			}
			return
		}
		if !(r.N >= 0) || math.IsInf(r.N, 0) || r.Per <= 0 {
			t.Fatalf("Parse(%q) = %+v, want N finite and >= 0, Per > 0", s, r)
		}
		if ps := r.PerSecond(); !(ps >= 0) {
			t.Fatalf("Parse(%q).PerSecond() = %v, want >= 0", s, ps)
		}
		back, err := Parse(r.String())
		if err != nil || back != r {
			t.Fatalf("Parse(%q) = %+v, written %q, read back as %+v, %v", s, r, r.String(), back, err)
		}
	})
}
