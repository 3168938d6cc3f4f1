package retryhttp

import (
	"math"
	"net/http"
	"strings"
	"time"
)

// maxDuration is the largest time.Duration; parsed hints saturate here, so a
// huge but well-formed value reads as "longer than anyone will wait" instead
// of overflowing into a negative or short delay.
const maxDuration = time.Duration(math.MaxInt64)

// ParseRetryAfter interprets a Retry-After header value (RFC 9110, section
// 10.2.3) relative to now and reports how long the server asked the client to
// wait.
//
// Both forms are accepted: delay-seconds (a non-negative decimal integer, so
// "120") and an HTTP-date in any of the three formats [http.ParseTime]
// accepts (IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT", the obsolete RFC 850
// and ANSI C asctime forms). A date is measured against now with full
// precision, so a date 1.5 s ahead yields 1.5 s, not 1 s or 2 s. Surrounding
// whitespace is ignored; delay-seconds too large for a time.Duration saturate
// at the largest one.
//
// ok is false, and the value must be ignored, for an empty value, garbage
// ("soon", "1.5", "-3", "+3"), and a date that is not after now: a server
// cannot ask for a wait in the past, and treating such a value as "retry now"
// would let a broken clock cause a retry storm.
func ParseRetryAfter(value string, now time.Time) (d time.Duration, ok bool) {
	v := strings.TrimSpace(value)
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		return secondsToDuration(v), true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d = t.Sub(now)
	if d <= 0 {
		return 0, false
	}
	return d, true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// secondsToDuration converts a string of decimal digits to seconds,
// saturating instead of overflowing.
func secondsToDuration(digits string) time.Duration {
	const limit = int64(maxDuration / time.Second)
	var n int64
	for i := 0; i < len(digits); i++ {
		n = n*10 + int64(digits[i]-'0')
		if n > limit {
			return maxDuration
		}
	}
	return time.Duration(n) * time.Second
}

// ParseRateLimit interprets the IETF RateLimit header field
// (draft-ietf-httpapi-ratelimit-headers), for example
//
//	RateLimit: "default";r=0;t=30
//
// and reports how long to wait before the quota resets. The field is a
// Structured Field list; each member names a quota policy and carries
// parameters r (remaining quota units) and t (seconds until the quota
// resets). Only members whose quota is exhausted (r=0) set a wait, and with
// several exhausted quotas the longest reset wins, because the request
// succeeds only once all of them allow it.
//
// ok is false when no quota is exhausted, when an exhausted quota has no
// valid t, and when the field is malformed anywhere: RFC 9651 says a field
// that fails to parse is ignored as a whole. Several header lines are joined
// with commas before parsing, as RFC 9110 prescribes for list fields.
func ParseRateLimit(value string) (d time.Duration, ok bool) {
	var longest time.Duration
	found := false
	rest := strings.TrimLeft(value, " \t")
	for rest != "" {
		var m member
		var good bool
		m, rest, good = parseMember(rest)
		if !good {
			return 0, false
		}
		if m.hasR && m.r == 0 {
			if !m.hasT || m.t < 0 {
				return 0, false
			}
			found = true
			longest = max(longest, secondsToDurationInt(m.t))
		}
		rest = strings.TrimLeft(rest, " \t")
		if rest == "" {
			break
		}
		if rest[0] != ',' {
			return 0, false
		}
		rest = strings.TrimLeft(rest[1:], " \t")
		if rest == "" {
			return 0, false // trailing comma
		}
	}
	return longest, found
}

func secondsToDurationInt(n int64) time.Duration {
	if n > int64(maxDuration/time.Second) {
		return maxDuration
	}
	return time.Duration(n) * time.Second
}

// member holds the parameters of one RateLimit list member that matter here.
type member struct {
	r, t       int64
	hasR, hasT bool
}

// parseMember parses one Structured Field list member: a bare item (string or
// token; the policy name) followed by parameters. It returns the unparsed
// remainder.
func parseMember(s string) (m member, rest string, ok bool) {
	s, ok = skipBareItem(s)
	if !ok {
		return m, "", false
	}
	for len(s) > 0 && s[0] == ';' {
		s = strings.TrimLeft(s[1:], " ")
		key, after := takeKey(s)
		if key == "" {
			return m, "", false
		}
		s = after
		if len(s) == 0 || s[0] != '=' {
			// A bare key is boolean true; r and t must be integers.
			if key == "r" || key == "t" {
				return m, "", false
			}
			continue
		}
		s = s[1:]
		if key != "r" && key != "t" {
			if s, ok = skipBareItem(s); !ok {
				return m, "", false
			}
			continue
		}
		var n int64
		n, s, ok = takeInteger(s)
		if !ok {
			return m, "", false
		}
		if key == "r" {
			m.r, m.hasR = n, true
		} else {
			m.t, m.hasT = n, true
		}
	}
	return m, s, true
}

// skipBareItem skips a Structured Field bare item: a string, token, integer,
// decimal, byte sequence or boolean. It is lenient about which characters a
// token holds but strict about where items end.
func skipBareItem(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	switch c := s[0]; {
	case c == '"':
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
				if i >= len(s) || (s[i] != '"' && s[i] != '\\') {
					return "", false
				}
			case '"':
				return s[i+1:], true
			default:
				if s[i] < 0x20 || s[i] > 0x7e {
					return "", false
				}
			}
		}
		return "", false
	case c == ':':
		end := strings.IndexByte(s[1:], ':')
		if end < 0 {
			return "", false
		}
		return s[end+2:], true
	case c == '?':
		if len(s) < 2 || (s[1] != '0' && s[1] != '1') {
			return "", false
		}
		return s[2:], true
	case c == '-' || (c >= '0' && c <= '9'):
		i := 1
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
			i++
		}
		if s[:i] == "-" {
			return "", false
		}
		return s[i:], true
	case c == '*' || isAlpha(c):
		i := 1
		for i < len(s) && isTokenChar(s[i]) {
			i++
		}
		return s[i:], true
	}
	return "", false
}

// takeKey reads a parameter key: lowercase letter or '*', then lowercase
// letters, digits, '_', '-', '.', '*'.
func takeKey(s string) (key, rest string) {
	if s == "" || !(s[0] == '*' || (s[0] >= 'a' && s[0] <= 'z')) {
		return "", s
	}
	i := 1
	for i < len(s) {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '*') {
			break
		}
		i++
	}
	return s[:i], s[i:]
}

// takeInteger reads a Structured Field integer: an optional minus sign and 1
// to 15 digits. A decimal point makes it a decimal, which r and t must not be.
func takeInteger(s string) (n int64, rest string, ok bool) {
	neg := false
	if s != "" && s[0] == '-' {
		neg, s = true, s[1:]
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		n = n*10 + int64(s[i]-'0')
		i++
		if i > 15 {
			return 0, "", false
		}
	}
	if i == 0 || (i < len(s) && s[i] == '.') {
		return 0, "", false
	}
	if neg {
		n = -n
	}
	return n, s[i:], true
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isTokenChar(c byte) bool {
	if isAlpha(c) || c >= '0' && c <= '9' {
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~:/", c) >= 0
}

// ParseRateLimitReset interprets a RateLimit-Reset or X-RateLimit-Reset
// header value (earlier drafts of the IETF RateLimit fields, and the
// X-RateLimit family of GitHub, Twitter and others) relative to now, and
// reports how long to wait before the quota resets.
//
// The value is a non-negative decimal integer: a number of seconds, or the
// Unix time of the reset (as GitHub sends it), told apart by magnitude as
// clients of those APIs do: a value of a year of seconds (31536000) or more
// is a Unix time, since no quota resets a year from now and every clock
// reads later than 1971. A Unix time is measured against now with full
// precision. Surrounding whitespace is ignored; a value too large for a
// time.Duration saturates at the largest one. A number of seconds is a
// hint whatever it is, 0 included (a retry loop then waits at least its
// policy's first delay, see retry.After).
//
// ok is false, and the value must be ignored, for an empty value, anything
// else ("soon", "1.5", "-3", a date), and a Unix time at or before now, as
// ParseRetryAfter ignores a date in the past: the quota may have reset, or
// the server's clock (or the client's) may be wrong, and reading such a
// value as "retry now" would let a broken clock cause a retry storm. The
// caller's own schedule then applies.
func ParseRateLimitReset(value string, now time.Time) (d time.Duration, ok bool) {
	v := strings.TrimSpace(value)
	if !isDigits(v) {
		return 0, false
	}
	d = secondsToDuration(v)
	if d >= unixTimeFrom && d < maxDuration {
		d = time.Unix(int64(d/time.Second), 0).Sub(now)
		if d <= 0 {
			return 0, false
		}
	}
	return d, true
}

// unixTimeFrom is the smallest RateLimit-Reset value read as a Unix time.
const unixTimeFrom = 365 * 24 * time.Hour

// Names of the headers a wait hint can come from, as Event.HintHeader
// reports them.
const (
	HeaderRetryAfter      = "Retry-After"
	HeaderRateLimit       = "RateLimit"
	HeaderRateLimitReset  = "RateLimit-Reset"
	HeaderXRateLimitReset = "X-RateLimit-Reset"
)

// serverHint returns the wait a response asks for and the header it came
// from: its Retry-After if valid, else a RateLimit reset if a quota is
// exhausted, else a RateLimit-Reset or X-RateLimit-Reset unless the
// matching RateLimit-Remaining or X-RateLimit-Remaining says the quota is
// not used up (these are sent with every response by many servers, and a
// 503 for another reason must not wait for a quota's reset); header is ""
// when the response asks for no wait.
func serverHint(h http.Header, now time.Time) (d time.Duration, header string) {
	if v, present := h["Retry-After"]; present && len(v) > 0 {
		if d, ok := ParseRetryAfter(v[0], now); ok {
			return d, HeaderRetryAfter
		}
	}
	if v, present := h["Ratelimit"]; present && len(v) > 0 {
		joined := v[0]
		if len(v) > 1 {
			joined = strings.Join(v, ", ")
		}
		if d, ok := ParseRateLimit(joined); ok {
			return d, HeaderRateLimit
		}
	}
	for _, name := range [...]string{HeaderRateLimitReset, HeaderXRateLimitReset} {
		v := h.Get(name)
		if v == "" {
			continue
		}
		if left := h.Get(strings.TrimSuffix(name, "Reset") + "Remaining"); left != "" && strings.TrimSpace(left) != "0" {
			continue
		}
		if d, ok := ParseRateLimitReset(v, now); ok {
			return d, name
		}
	}
	return 0, ""
}
