package admission

import (
	"strconv"
	"time"

	"github.com/again-go/again/backoff"
)

// Defaults of Config's zero fields. The CoDel values are folly's and
// "Fail at Scale"'s; the deadline cap is Finagle's DeadlineFilter's.
const (
	DefaultLimit        = 100
	DefaultMaxQueue     = 128
	DefaultMaxWait      = time.Second
	DefaultTarget       = 5 * time.Millisecond
	DefaultInterval     = 100 * time.Millisecond
	DefaultDropFraction = 0.2
	DefaultDropWindow   = 10 * time.Second
	DefaultRetryAfter   = time.Second
)

// Config configures a Core: package shed's Config without its HTTP fields
// and callbacks. Every zero field has a documented default, so the zero
// Config is ready: a fixed limit of 100 requests in flight, a queue of
// 128, CoDel at 5 ms / 100 ms, deadlines from HeaderTimeout trusted with
// Finagle's cap. A Config is a plain value; NewCore copies it.
type Config struct {
	// Limit is a fixed concurrency limit: the requests served at once.
	// Zero means DefaultLimit (100). Ignored when Adaptive is set.
	Limit int
	// Adaptive, if not nil, replaces Limit: the limit is what it admits,
	// such as an adaptive limit learning from the handler's latency
	// (package limiter's Limiter, with MaxWait zero).
	Adaptive Limit
	// MaxQueue is how many requests may wait for a permit. Zero means
	// DefaultMaxQueue (128); a negative value means none wait (a plain
	// limit).
	MaxQueue int
	// MaxWait is the longest a request waits in the queue, whatever CoDel
	// judges: it bounds the wait when no request ends to make room. Zero
	// means DefaultMaxWait (1 s).
	MaxWait time.Duration
	// Target and Interval are CoDel's: the queue is overloaded when the
	// smallest delay over an Interval exceeds Target, and then a request
	// that waited more than 2 × Target plus the time between two permits
	// freed is dropped (of the lowest level waiting first), and the
	// newest waiting are served first. Zero means 5 ms and 100 ms
	// (folly's Codel). Target must be below Interval.
	Target, Interval time.Duration
	// Default is the class of a request that names none: zero means
	// Critical, the SRE book's default. Unknown is not accepted.
	Default Criticality
	// IgnoreTimeout turns off deadlines from HeaderTimeout (and from
	// gRPC's grpc-timeout in retrygrpc's interceptors): for a server that
	// does not trust its clients' headers.
	IgnoreTimeout bool
	// DropFraction and DropWindow cap the requests dropped for their
	// deadline: at most DropFraction of those that arrived over the last
	// DropWindow, so that clients whose deadlines are wrong cannot have
	// all their requests dropped. Zero means 0.2 and 10 s (Finagle's).
	DropFraction float64
	DropWindow   time.Duration
	// RetryAfter is the wait a shed client is told at no load; it grows
	// up to five times as CoDel's load (the queue's smallest delay over
	// twice Target) grows, and is then jittered up to twice, so that shed
	// clients do not return in step. Zero means DefaultRetryAfter (1 s).
	RetryAfter time.Duration
	// Rand draws the jitter of Retry-After; nil means math/rand/v2's
	// global source. Tests fix it.
	Rand backoff.Rand
}

// Validate reports the first field outside its accepted range, as a
// *FieldError matching ErrInvalid.
func (c Config) Validate() error {
	bad := func(field, value, accepted string) error {
		return &FieldError{Field: "Config." + field, Value: value, Accepted: accepted}
	}
	switch {
	case c.Limit < 0:
		return bad("Limit", strconv.Itoa(c.Limit), "at least 0 (0 means 100)")
	case c.MaxWait < 0:
		return bad("MaxWait", c.MaxWait.String(), "at least 0 (0 means 1s)")
	case c.Target < 0:
		return bad("Target", c.Target.String(), "at least 0 (0 means 5ms)")
	case c.Interval < 0:
		return bad("Interval", c.Interval.String(), "at least 0 (0 means 100ms)")
	case orDefault(c.Target, DefaultTarget) >= orDefault(c.Interval, DefaultInterval):
		return bad("Target", orDefault(c.Target, DefaultTarget).String(),
			"below Interval ("+orDefault(c.Interval, DefaultInterval).String()+")")
	case c.Default == Unknown || c.Default < Unspecified || c.Default > CriticalPlus:
		return bad("Default", c.Default.String(), "SHEDDABLE, SHEDDABLE_PLUS, CRITICAL or CRITICAL_PLUS (zero means CRITICAL)")
	case !(c.DropFraction >= 0 && c.DropFraction <= 1):
		return bad("DropFraction", strconv.FormatFloat(c.DropFraction, 'g', -1, 64), "from 0 to 1 (0 means 0.2)")
	case c.DropWindow < 0 || (c.DropWindow > 0 && c.DropWindow < capBuckets):
		return bad("DropWindow", c.DropWindow.String(), "0 (meaning 10s) or at least 10ns")
	case c.RetryAfter < 0:
		return bad("RetryAfter", c.RetryAfter.String(), "at least 0 (0 means 1s)")
	}
	return nil
}

func orDefault[T int | float64 | time.Duration | Criticality](v, d T) T {
	if v == 0 {
		return d
	}
	return v
}
