package shed

import (
	"net/http"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/shed/admission"
)

// Config configures a Shedder. Every zero field has a documented default,
// so the zero Config is ready: a fixed limit of 100 requests in flight, a
// queue of 128, CoDel at 5 ms / 100 ms, deadlines from HeaderTimeout
// trusted with Finagle's cap. A Config is a plain value; New copies it.
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
	// Classify, if not nil, returns an HTTP request's class, overriding
	// HeaderCriticality; returning Unspecified leaves the header's (or
	// Default). It runs on the request's goroutine before admission: keep
	// it cheap.
	Classify func(r *http.Request) Criticality
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
	// Quota, if not nil, is a per-client quota checked before admission:
	// ok false refuses the request with HTTP 429 and a Retry-After of
	// wait (rounded to whole seconds, at least 1; zero means RetryAfter).
	Quota func(r *http.Request) (wait time.Duration, ok bool)
	// OnShed, if not nil, is called for each request shed (or refused by
	// Quota), by Wrap's handler or by Admit (gRPC's interceptors), on the
	// request's goroutine, after the decision and outside any lock: a
	// place for metrics.
	OnShed func(c Criticality, r Reason)
	// OnQueued, if not nil, is called for each request that waited in the
	// queue, when it leaves it: how long it waited, and Admitted or why it
	// was shed (OnShed is called too then). It runs on the request's
	// goroutine, outside any lock: a place for a queue-delay histogram.
	OnQueued func(c Criticality, waited time.Duration, r Reason)
	// Rand draws the jitter of Retry-After; nil means math/rand/v2's
	// global source. Tests fix it.
	Rand backoff.Rand
}

// Validate reports the first field outside its accepted range, as a
// *FieldError matching ErrInvalid.
func (c Config) Validate() error { return c.core().Validate() }

// core returns the fields of c that a Core reads.
func (c Config) core() admission.Config {
	return admission.Config{
		Limit: c.Limit, Adaptive: c.Adaptive, MaxQueue: c.MaxQueue, MaxWait: c.MaxWait,
		Target: c.Target, Interval: c.Interval, Default: c.Default, IgnoreTimeout: c.IgnoreTimeout,
		DropFraction: c.DropFraction, DropWindow: c.DropWindow, RetryAfter: c.RetryAfter, Rand: c.Rand,
	}
}
