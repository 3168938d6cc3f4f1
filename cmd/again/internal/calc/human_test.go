package calc

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestHuman(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0 ms"},
		{time.Nanosecond, "1 ns"},
		{999 * time.Nanosecond, "999 ns"},
		{time.Microsecond, "1 µs"},
		{1499 * time.Nanosecond, "1 µs"},
		{250 * time.Microsecond, "250 µs"},
		{499 * time.Microsecond, "499 µs"},
		{999*time.Microsecond + 499, "999 µs"},
		{999*time.Microsecond + 500, "1 ms"},
		{1500 * time.Microsecond, "2 ms"},
		{250 * time.Millisecond, "250 ms"},
		{999*time.Millisecond + 499*time.Microsecond, "999 ms"},
		{999*time.Millisecond + 500*time.Microsecond, "1 s"},
		{time.Second, "1 s"},
		{12100 * time.Millisecond, "12.1 s"},
		{45750 * time.Millisecond, "45.8 s"},
		{59949 * time.Millisecond, "59.9 s"},
		{59950 * time.Millisecond, "1 min"},
		{91500 * time.Millisecond, "1 min 32 s"},
		{2 * time.Minute, "2 min"},
		{time.Hour + 5*time.Second, "1 h 5 s"},
		{25*time.Hour + 61*time.Second, "25 h 1 min 1 s"},
		{math.MaxInt64 - 1, "2562047 h 47 min 17 s"},
		{math.MaxInt64, "more than 292 years"},
		{-250 * time.Millisecond, "−250 ms"},
		{-math.MaxInt64 - 1, "−more than 292 years"},
	}
	for _, tt := range tests {
		if got := Human(tt.d); got != tt.want {
			t.Errorf("Human(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// parseHuman reads Human's output back, returning the duration and how far
// the rounding may have moved it.
func parseHuman(t *testing.T, s string) (d, tolerance time.Duration) {
	t.Helper()
	for _, u := range []struct {
		suffix string
		unit   time.Duration
	}{{" ns", time.Nanosecond}, {" µs", time.Microsecond}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.Atoi(n)
			if err != nil || v <= 0 || v >= 1000 {
				t.Fatalf("Human gave %q", s)
			}
			return time.Duration(v) * u.unit, u.unit / 2
		}
	}
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
		if d == math.MaxInt64 {
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

func TestHumanExact(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0 ms"},
		{999 * time.Nanosecond, "999 ns"},
		{1500 * time.Nanosecond, "1.5 µs"},
		{1500 * time.Microsecond, "1.5 ms"},
		{1000001 * time.Nanosecond, "1.000001 ms"},
		{250 * time.Millisecond, "250 ms"},
		{999*time.Millisecond + 500*time.Microsecond, "999.5 ms"},
		{1500 * time.Millisecond, "1.5 s"},
		{45750 * time.Millisecond, "45.75 s"},
		{91500 * time.Millisecond, "1 min 31.5 s"},
		{2 * time.Minute, "2 min"},
		{time.Hour + 5*time.Second, "1 h 5 s"},
		{time.Hour + time.Nanosecond, "1 h 0.000000001 s"},
		{math.MaxInt64, "2562047 h 47 min 16.854775807 s"},
		{-1500 * time.Microsecond, "−1.5 ms"},
		{math.MinInt64, "−2562047 h 47 min 16.854775808 s"},
	}
	for _, tt := range tests {
		if got := HumanExact(tt.d); got != tt.want {
			t.Errorf("HumanExact(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
	// Read back, every value is exact; where Human does not round, the two
	// are the same text.
	unit := map[string]time.Duration{"ns": time.Nanosecond, "µs": time.Microsecond, "ms": time.Millisecond, "s": time.Second, "min": time.Minute, "h": time.Hour}
	for i := range 3000 {
		d := time.Duration(uint64(i) * 0x9E3779B97F4A7C15 % math.MaxInt64)
		d >>= i % 63 // every order of magnitude
		if i%5 == 0 {
			d = d / time.Millisecond * time.Millisecond
		}
		s := HumanExact(d)
		f := strings.Fields(s)
		var got time.Duration
		for j := 0; j+1 < len(f); j += 2 {
			whole, frac, _ := strings.Cut(f[j], ".")
			n, err := strconv.ParseInt(whole, 10, 64)
			u, ok := unit[f[j+1]]
			if err != nil || !ok || len(f)%2 != 0 {
				t.Fatalf("HumanExact(%d) = %q", d, s)
			}
			got += time.Duration(n) * u
			for k, scale := 0, u/10; k < len(frac); k, scale = k+1, scale/10 {
				got += time.Duration(frac[k]-'0') * scale
			}
		}
		if got != d {
			t.Errorf("HumanExact(%d) = %q, which reads back as %d", d, s, got)
		}
		if h := Human(d); h != s && d < time.Minute && (d < time.Microsecond || d%unitOf(d) == 0) {
			t.Errorf("HumanExact(%v) = %q, Human %q: want the same text where Human does not round", d, s, h)
		}
	}
}

// unitOf returns the unit Human writes d (under a minute) in, at its
// precision: ns, µs, ms, or tenths of seconds.
func unitOf(d time.Duration) time.Duration {
	switch {
	case d < time.Microsecond:
		return time.Nanosecond
	case d < time.Millisecond:
		return time.Microsecond
	case d < time.Second:
		return time.Millisecond
	}
	return 100 * time.Millisecond
}

func TestShort(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{500 * time.Millisecond, "500ms"},
		{1500 * time.Millisecond, "1.5s"},
		{time.Minute, "1m"},
		{90 * time.Second, "1m30s"},
		{time.Hour, "1h"},
		{time.Hour + time.Second, "1h0m1s"},
		{90 * time.Minute, "1h30m"},
		{-time.Hour, "-1h"},
		{time.Microsecond, "1µs"},
		{math.MaxInt64, "2562047h47m16.854775807s"},
	}
	for _, tt := range tests {
		if got := Short(tt.d); got != tt.want {
			t.Errorf("Short(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// FuzzShort checks that every duration Short writes reads back as itself.
func FuzzShort(f *testing.F) {
	for _, d := range []int64{0, 1, int64(time.Hour), int64(time.Minute), math.MaxInt64, math.MinInt64} {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, n int64) {
		d := time.Duration(n)
		back, err := time.ParseDuration(Short(d))
		if err != nil || back != d {
			t.Errorf("time.ParseDuration(Short(%d)) = %v, %v; want %v", n, back, err, d)
		}
	})
}
