package admission

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzParseHeaders checks the header parsers against strconv on any input:
// they never panic, accept exactly the plain decimal integers in range,
// and a criticality is one of the four names in any case, or Unknown.
func FuzzParseHeaders(f *testing.F) {
	for _, s := range []string{"", "1", "0", "3", "-1", "+2", " 5", "86400000", "86400001", "99999999999999999999", "1e3", "CRITICAL", "sheddable_plus", "CRİTICAL", "00000000000000000000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		plain := v != "" && strings.Trim(v, "0123456789") == ""
		n, err := strconv.ParseInt(v, 10, 64)
		inRange := plain && err == nil

		d, ok := ParseTimeout(v)
		if want := inRange && n <= maxTimeoutMs; ok != want {
			t.Fatalf("ParseTimeout(%q) ok = %v, want %v", v, ok, want)
		}
		if ok && d != time.Duration(n)*time.Millisecond {
			t.Fatalf("ParseTimeout(%q) = %v, want %dms", v, d, n)
		}

		a := ParseAttempt(v)
		if want := 1; inRange && n >= 1 && n <= 1<<30 {
			if a != int(n) {
				t.Fatalf("ParseAttempt(%q) = %d, want %d", v, a, n)
			}
		} else if a != want {
			t.Fatalf("ParseAttempt(%q) = %d, want %d", v, a, want)
		}

		c := ParseCriticality(v)
		switch {
		case v == "":
			if c != Unspecified {
				t.Fatalf("ParseCriticality(%q) = %v, want UNSPECIFIED", v, c)
			}
		case c == Unknown:
			for k := Sheddable; k <= CriticalPlus; k++ {
				if strings.ToUpper(v) == k.String() && isASCII(v) {
					t.Fatalf("ParseCriticality(%q) = UNKNOWN, want %v", v, k)
				}
			}
		case c >= Sheddable && c <= CriticalPlus:
			if !strings.EqualFold(v, c.String()) {
				t.Fatalf("ParseCriticality(%q) = %v, not its name", v, c)
			}
		default:
			t.Fatalf("ParseCriticality(%q) = %v, want a class or UNKNOWN", v, c)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
