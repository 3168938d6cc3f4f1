package retryhttp_test

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/again-go/again/retryhttp"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 250_000_000, time.UTC) // 12:00:00.25

func TestParseRetryAfter(t *testing.T) {
	tests := []struct {
		value  string
		want   time.Duration
		wantOK bool
	}{
		{"0", 0, true},
		{"120", 120 * time.Second, true},
		{"  5\t", 5 * time.Second, true},
		{"0005", 5 * time.Second, true},
		{"99999999999999999999999", time.Duration(math.MaxInt64), true},
		{"Mon, 30 Nov 2026 12:00:10 GMT", 9750 * time.Millisecond, true},
		{"Monday, 30-Nov-26 12:00:10 GMT", 9750 * time.Millisecond, true},
		{"Mon Nov 30 12:00:10 2026", 9750 * time.Millisecond, true},
		{"Mon, 30 Nov 2026 12:00:00 GMT", 0, false}, // 250 ms in the past
		{"Mon, 30 Nov 2026 11:00:00 GMT", 0, false},
		{"", 0, false},
		{"   ", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{"1.5", 0, false},
		{"1e3", 0, false},
		{"5s", 0, false},
		{"soon", 0, false},
		{"30 Nov 2026 12:00:10", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			got, ok := retryhttp.ParseRetryAfter(tt.value, now)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.value, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestParseRateLimit(t *testing.T) {
	tests := []struct {
		value  string
		want   time.Duration
		wantOK bool
	}{
		{`"default";r=0;t=30`, 30 * time.Second, true},
		{`default;r=0;t=30`, 30 * time.Second, true},
		{`"default";t=30;r=0`, 30 * time.Second, true},
		{`"default";r=0;t=0`, 0, true},
		{`"a";r=5;t=10, "b";r=0;t=20`, 20 * time.Second, true},
		{`"a";r=0;t=10,"b";r=0;t=40`, 40 * time.Second, true},
		{`"a";r=0;t=10;pk=:cHJvZmlsZQ==:;x="y"`, 10 * time.Second, true},
		{`"a";r=0;t=10;flag`, 10 * time.Second, true},
		{`"default";r=5;t=30`, 0, false},
		{`"default";t=30`, 0, false},
		{``, 0, false},
		{`"default";r=0`, 0, false},
		{`"default";r=0;t=-1`, 0, false},
		{`"default";r=0;t=1.5`, 0, false},
		{`"default";r=0;t=abc`, 0, false},
		{`"default";r=0;t=30,`, 0, false},
		{`"default";r=0;t=30 junk`, 0, false},
		{`"unterminated;r=0;t=30`, 0, false},
		{`"a";r=5;t=10, garbage!`, 0, false},
		{`"a";r=0;t=1234567890123456`, 0, false},
		{`"a";R=0;T=30`, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			got, ok := retryhttp.ParseRateLimit(tt.value)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("ParseRateLimit(%q) = %v, %v; want %v, %v", tt.value, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestParseRateLimitReset(t *testing.T) {
	epoch := strconv.FormatInt(now.Unix(), 10) // 12:00:00, 250 ms before now
	tests := []struct {
		value  string
		want   time.Duration
		wantOK bool
	}{
		{"0", 0, true}, // seconds: a hint of 0, which the loop floors
		{"30", 30 * time.Second, true},
		{" 30 ", 30 * time.Second, true},
		{strconv.FormatInt(now.Unix()+10, 10), 9750 * time.Millisecond, true}, // an epoch time: 12:00:10
		{strconv.FormatInt(now.Unix()+1, 10), 750 * time.Millisecond, true},   // just ahead
		// A Unix time at or before now is no hint (the schedule applies),
		// as a past date in Retry-After: a broken clock must not cause a
		// retry storm.
		{epoch, 0, false}, // a reset just past
		{strconv.FormatInt(now.Unix()-1, 10), 0, false}, // a second in the past
		{"1600000000", 0, false},                        // 2020
		{"31535999", 31535999 * time.Second, true},      // just under a year: seconds
		{"31536000", 0, false},                          // 1971: a Unix time long past
		{"99999999999999999999999", time.Duration(math.MaxInt64), true},
		{"", 0, false},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{"Mon, 30 Nov 2026 12:00:10 GMT", 0, false},
	}
	for _, tt := range tests {
		got, ok := retryhttp.ParseRateLimitReset(tt.value, now)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("ParseRateLimitReset(%q) = %v, %v; want %v, %v", tt.value, got, ok, tt.want, tt.wantOK)
		}
	}
}

func FuzzParseRateLimitReset(f *testing.F) {
	for _, s := range []string{"0", "30", " 7 ", "-1", "1.5", "soon", "99999999999999999999", "1796040010", "1600000000", "31536000"} {
		f.Add(s, int64(0))
	}
	f.Fuzz(func(t *testing.T, value string, offset int64) {
		at := now.Add(time.Duration(offset))
		d, ok := retryhttp.ParseRateLimitReset(value, at)
		v := strings.TrimSpace(value)
		digits := v != "" && strings.Trim(v, "0123456789") == ""
		n, err := strconv.ParseInt(v, 10, 64)
		saturated := digits && (err != nil || n > math.MaxInt64/int64(time.Second))
		// A Unix time (a year of seconds or more) at or before at is no
		// hint.
		past := digits && !saturated && n >= 365*24*3600 && !time.Unix(n, 0).After(at)
		if !ok {
			if d != 0 {
				t.Fatalf("ParseRateLimitReset(%q) = %v, false; want 0 when not ok", value, d)
			}
			if digits && !past {
				t.Fatalf("ParseRateLimitReset(%q) at %v = 0, false; want a hint", value, at)
			}
			return
		}
		if d < 0 || !digits || past {
			t.Fatalf("ParseRateLimitReset(%q) at %v = %v, true; want a non-negative wait from digits only, not a time past", value, at, d)
		}
		if saturated {
			return // saturates, as TestParseRateLimitReset checks
		}
		// Below a year of seconds, the seconds themselves; from there on
		// the time until that Unix time, which is ahead.
		want := time.Duration(n) * time.Second
		if n >= 365*24*3600 {
			want = time.Unix(n, 0).Sub(at)
		}
		if d != want {
			t.Fatalf("ParseRateLimitReset(%q) at %v = %v, want %v", value, at, d, want)
		}
	})
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"0", "120", " 7 ", "-1", "1.5", "soon", "99999999999999999999",
		"Mon, 30 Nov 2026 12:00:10 GMT", "Monday, 30-Nov-26 12:00:10 GMT", "Mon Nov 30 12:00:10 2026"} {
		f.Add(s, int64(0))
	}
	f.Fuzz(func(t *testing.T, value string, offset int64) {
		at := now.Add(time.Duration(offset))
		d, ok := retryhttp.ParseRetryAfter(value, at)
		if !ok {
			if d != 0 {
				t.Fatalf("ParseRetryAfter(%q) = %v, false; want 0 when not ok", value, d)
			}
			return
		}
		if d < 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v, want a non-negative wait", value, d)
		}
		v := strings.TrimSpace(value)
		if strings.Trim(v, "0123456789") == "" {
			want := time.Duration(math.MaxInt64)
			if n, err := strconv.ParseUint(v, 10, 64); err == nil && n <= math.MaxInt64/uint64(time.Second) {
				want = time.Duration(n) * time.Second
			}
			if d != want {
				t.Fatalf("ParseRetryAfter(%q) = %v, want %v", value, d, want)
			}
			return
		}
		date, err := http.ParseTime(v)
		if err != nil {
			t.Fatalf("ParseRetryAfter(%q) accepted a value that is neither seconds nor an HTTP-date", value)
		}
		if want := date.Sub(at); d != want || d == 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v, want %v (> 0)", value, d, want)
		}
	})
}

func FuzzParseRateLimit(f *testing.F) {
	for _, s := range []string{`"default";r=0;t=30`, `a;r=5;t=1, b;r=0;t=9`, `"x";r=0;t=1;q=?1`, `:AA==:;r=0;t=1`, `"a\"b";r=0;t=2`, `1.5;r=0;t=3`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		d, ok := retryhttp.ParseRateLimit(value)
		if d < 0 || (!ok && d != 0) {
			t.Fatalf("ParseRateLimit(%q) = %v, %v; want a non-negative wait, 0 when not ok", value, d, ok)
		}
		if ok && (!strings.Contains(value, "r=") || !strings.Contains(value, "t=")) {
			t.Fatalf("ParseRateLimit(%q) found an exhausted quota without r= and t=", value)
		}
		// A second, well-formed member with a longer reset must win.
		if ok {
			joined := value + `, "extra";r=0;t=999999`
			if d2, ok2 := retryhttp.ParseRateLimit(joined); !ok2 || d2 != max(d, 999999*time.Second) {
				t.Fatalf("ParseRateLimit(%q) = %v, %v; want %v, true", joined, d2, ok2, max(d, 999999*time.Second))
			}
		}
	})
}

func TestNewIdempotencyKey(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		k := retryhttp.NewIdempotencyKey()
		if !uuidV4.MatchString(k) {
			t.Fatalf("NewIdempotencyKey() = %q, want a UUID v4", k)
		}
		if seen[k] {
			t.Fatalf("NewIdempotencyKey() repeated %q", k)
		}
		seen[k] = true
	}
}
