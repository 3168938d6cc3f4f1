package calc

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Human formats a duration the way the calculator shows it:
//
//   - zero: "0 ms";
//   - under 1 µs, nanoseconds: "500 ns";
//   - under 1 ms, whole microseconds, so that a sub-millisecond schedule
//     never shows as "0 ms": "1 µs", "250 µs";
//   - under 1 s, whole milliseconds: "1 ms", "250 ms";
//   - under 1 min, seconds with at most one decimal and no trailing ".0":
//     "1 s", "12.1 s", "45.8 s";
//   - from 1 min, hours, minutes and seconds rounded to the whole second,
//     leaving out zero parts: "1 min 32 s" (91.5 s), "2 min", "1 h 5 s";
//   - the largest time.Duration, where saturated sums end: "more than 292 years".
//
// Negative durations get a leading "−" sign.
func Human(d time.Duration) string {
	if d == math.MaxInt64 {
		return "more than 292 years"
	}
	if d < 0 {
		if d == -math.MaxInt64-1 {
			return "−more than 292 years"
		}
		return "−" + Human(-d)
	}
	if d == 0 {
		return "0 ms"
	}
	if d < time.Microsecond {
		return strconv.FormatInt(int64(d), 10) + " ns"
	}
	if us := round(d, time.Microsecond); us < 1000 {
		return strconv.FormatInt(us, 10) + " µs"
	}
	if ms := round(d, time.Millisecond); ms < 1000 {
		return strconv.FormatInt(ms, 10) + " ms"
	}
	if tenths := round(d, 100*time.Millisecond); tenths < 600 {
		s := strconv.FormatInt(tenths/10, 10)
		if t := tenths % 10; t != 0 {
			s += "." + strconv.FormatInt(t, 10)
		}
		return s + " s"
	}
	secs := round(d, time.Second)
	h, m, s := secs/3600, secs/60%60, secs%60
	var parts []string
	if h > 0 {
		parts = append(parts, strconv.FormatInt(h, 10)+" h")
	}
	if m > 0 {
		parts = append(parts, strconv.FormatInt(m, 10)+" min")
	}
	if s > 0 {
		parts = append(parts, strconv.FormatInt(s, 10)+" s")
	}
	return strings.Join(parts, " ")
}

// HumanExact formats a duration in Human's units without rounding it, so
// that a value the user gave, such as a deadline, is echoed as given: a
// unit's fraction keeps every digit it has ("1.5 ms" where Human writes
// "2 ms", "1 min 31.5 s" where it writes "1 min 32 s"). Where Human does
// not round, the two agree: "500 ms", "1.5 s", "2 min", "1 h 5 s".
func HumanExact(d time.Duration) string {
	if d < 0 {
		if d == math.MinInt64 { // -d overflows
			return "−2562047 h 47 min 16.854775808 s"
		}
		return "−" + HumanExact(-d)
	}
	switch {
	case d == 0:
		return "0 ms"
	case d < time.Microsecond:
		return strconv.FormatInt(int64(d), 10) + " ns"
	case d < time.Millisecond:
		return ExactIn(d, time.Microsecond) + " µs"
	case d < time.Second:
		return ExactIn(d, time.Millisecond) + " ms"
	case d < time.Minute:
		return ExactIn(d, time.Second) + " s"
	}
	h, m, s := d/time.Hour, d/time.Minute%60, d%time.Minute
	var parts []string
	if h > 0 {
		parts = append(parts, strconv.FormatInt(int64(h), 10)+" h")
	}
	if m > 0 {
		parts = append(parts, strconv.FormatInt(int64(m), 10)+" min")
	}
	if s > 0 {
		parts = append(parts, ExactIn(s, time.Second)+" s")
	}
	return strings.Join(parts, " ")
}

// ExactIn writes d (>= 0) in units of unit (1 ns to 1 s, a power of ten)
// with every digit of its fraction, no trailing zeros and a decimal point:
// 1500µs in ms is "1.5". The page writes its exact durations with it too.
func ExactIn(d, unit time.Duration) string {
	s := strconv.FormatInt(int64(d/unit), 10)
	if f := d % unit; f != 0 {
		digits := len(strconv.FormatInt(int64(unit), 10)) - 1
		frac := strconv.FormatInt(int64(f), 10)
		s += "." + strings.TrimRight(strings.Repeat("0", digits-len(frac))+frac, "0")
	}
	return s
}

// round returns d (>= 0) in units of unit, rounded half up. Unlike
// (d + unit/2) / unit it cannot overflow near the largest Duration.
func round(d, unit time.Duration) int64 {
	q := int64(d / unit)
	if d%unit >= unit-unit/2 {
		q++
	}
	return q
}

// Short writes d as the command line writes durations in its flags, help
// and messages: Go syntax, which every duration flag reads back, without
// the zero units that time.Duration's String adds: "1h" (not "1h0m0s"),
// "1h30m", "2m30s", "500ms", "1.5s", "0s".
func Short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
