package admission

import (
	"context"
	"strconv"
	"time"
)

// Names of the headers a request carries its class, its attempt number and
// its remaining time in. retryhttp.Transport sets all three on each
// attempt; any client may. The values are case-insensitive for
// HeaderCriticality.
const (
	// HeaderCriticality holds the request's criticality, one of the SRE
	// book's names: CRITICAL_PLUS, CRITICAL, SHEDDABLE_PLUS, SHEDDABLE.
	// Absent: Config.Default (CRITICAL unless set). Any other value: the
	// class Unknown, which is served only from spare capacity.
	HeaderCriticality = "Again-Criticality"
	// HeaderAttempt holds the attempt number, 1 for the first attempt, as
	// Envoy's x-envoy-attempt-count does. Absent or invalid: 1. A retry
	// (2 or more) is shed before the first attempts of its class.
	HeaderAttempt = "Again-Attempt"
	// HeaderTimeout holds the time the client will still wait for the
	// answer, in whole milliseconds (a decimal integer, as Envoy's
	// x-envoy-expected-rq-timeout-ms and gRPC's grpc-retry-pushback-ms
	// count): the request's deadline is its arrival plus that. Relative,
	// so that the clocks of client and server need not agree. Absent or
	// invalid: no deadline. Config.IgnoreTimeout ignores it.
	HeaderTimeout = "Again-Timeout-Ms"
)

// Criticality is a request's class, the SRE book's ("Handling Overload"):
// under overload the lower classes are shed first. The zero Criticality
// is Unspecified: a class to be filled in (Config.Default for a request
// that names none). The values are ordered: a greater one is more critical.
type Criticality int8

const (
	// Unspecified: the request names no class.
	Unspecified Criticality = iota
	// Unknown: the request names a class the server does not know. It is
	// served only when a permit is free and nobody waits, never queued.
	Unknown
	// Sheddable: traffic whose partial unavailability is expected (a
	// prefetch, a batch job).
	Sheddable
	// SheddablePlus: traffic whose partial unavailability is acceptable,
	// retried later (the SRE book's default for batch jobs).
	SheddablePlus
	// Critical: the default; traffic whose loss users see.
	Critical
	// CriticalPlus: the most critical traffic, shed last.
	CriticalPlus
)

var criticalityNames = [...]string{"UNSPECIFIED", "UNKNOWN", "SHEDDABLE", "SHEDDABLE_PLUS", "CRITICAL", "CRITICAL_PLUS"}

// String returns the SRE book's name, such as "CRITICAL_PLUS", the value
// HeaderCriticality carries; "UNSPECIFIED" and "UNKNOWN" for those two.
func (c Criticality) String() string {
	if c >= 0 && int(c) < len(criticalityNames) {
		return criticalityNames[c]
	}
	return "criticality(" + strconv.Itoa(int(c)) + ")"
}

// ParseCriticality reads a HeaderCriticality value: one of the four
// names, in any case, with no spaces. An empty value is Unspecified; any
// other value is Unknown.
func ParseCriticality(v string) Criticality {
	if v == "" {
		return Unspecified
	}
	for c := Sheddable; c <= CriticalPlus; c++ {
		if equalFold(v, criticalityNames[c]) {
			return c
		}
	}
	return Unknown
}

// equalFold is strings.EqualFold for an upper-case ASCII name, without
// the Unicode tables.
func equalFold(v, upper string) bool {
	if len(v) != len(upper) {
		return false
	}
	for i := 0; i < len(v); i++ {
		b := v[i]
		if 'a' <= b && b <= 'z' {
			b -= 'a' - 'A'
		}
		if b != upper[i] {
			return false
		}
	}
	return true
}

// ParseAttempt reads a HeaderAttempt value: a decimal integer of at least
// 1. It returns 1 (a first attempt) for anything else.
func ParseAttempt(v string) int {
	n, ok := parseUint(v, 1<<30)
	if !ok || n < 1 {
		return 1
	}
	return int(n)
}

// maxTimeoutMs bounds HeaderTimeout at a day: a longer wait is no deadline
// worth keeping, and the bound keeps the conversion from overflowing.
const maxTimeoutMs = 24 * 60 * 60 * 1000

// ParseTimeout reads a HeaderTimeout value: whole milliseconds, a
// decimal integer from 0 to a day (86400000), without sign or spaces. It
// reports false for anything else.
func ParseTimeout(v string) (time.Duration, bool) {
	n, ok := parseUint(v, maxTimeoutMs)
	if !ok {
		return 0, false
	}
	return time.Duration(n) * time.Millisecond, true
}

// parseUint reads the decimal digits of v, at most maxV, without
// allocating (strconv.Atoi allocates its error). maxV below 1<<59 keeps
// n*10+9 from overflowing.
func parseUint(v string, maxV int64) (int64, bool) {
	if v == "" {
		return 0, false
	}
	var n int64
	for i := 0; i < len(v); i++ {
		d := v[i] - '0'
		if d > 9 {
			return 0, false
		}
		n = n*10 + int64(d)
		if n > maxV {
			return 0, false
		}
	}
	return n, true
}

type criticalityKey struct{}

// WithCriticality returns a copy of ctx that carries c: a request made
// with it names c in HeaderCriticality (retryhttp.Transport does), and a
// server propagates the class of what it serves so.
func WithCriticality(ctx context.Context, c Criticality) context.Context {
	return context.WithValue(ctx, criticalityKey{}, c)
}

// CriticalityFrom returns the class ctx carries (WithCriticality), or
// Unspecified.
func CriticalityFrom(ctx context.Context) Criticality {
	c, _ := ctx.Value(criticalityKey{}).(Criticality)
	return c
}
