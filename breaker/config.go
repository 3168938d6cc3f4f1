package breaker

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/again-go/again/backoff"
)

// Clock tells the breaker the time. The breaker reads it only while deciding
// (it never sleeps, starts timers or goroutines), so a virtual clock, as in
// tests and the simulator, drives it completely.
type Clock interface {
	Now() time.Time
}

// Change describes a state change, passed to Config.OnStateChange. It is a
// plain value, safe to copy and to keep; the zero Change describes no change.
type Change struct {
	From, To State
	// At is when the change happened, on the breaker's clock.
	At time.Time
	// Trips is how many times the breaker has opened since it was last
	// closed (the step of Config.Open's schedule that the open period
	// used); 0 when To is Closed.
	Trips int
	// Wait is the open period chosen when To is Open; 0 otherwise.
	Wait time.Duration
}

// Stale describes a report that a breaker dropped, passed to
// Config.OnStale: the outcome of a call (Ticket.Done or Record) that
// arrived after the breaker had moved on from the round that admitted the
// call. A report is stale when the breaker changed state (or was reset or
// isolated) between the call's admission and its report, or, for a
// half-open probe, when the probe had already been counted as a failure
// after Config.ProbeTimeout. It is a plain value, safe to copy and to
// keep.
type Stale struct {
	// Outcome is what the call reported, as the breaker judged it.
	Outcome Outcome
	// Admitted is the state that admitted the call: Closed, or HalfOpen
	// for a probe.
	Admitted State
	// Now is the breaker's state when the report arrived.
	Now State
}

// Config sets a breaker's rules. Every field follows the module's rule for
// zero and negative values, stated on backoff.Policy (here "none" reads
// "off"). The zero Config is the recommended breaker.
//
// The defaults are Hystrix's, proven at scale: over a rolling window of 10 s
// in 10 buckets of 1 s, trip when at least half of at least 20 calls failed.
// A failure ratio over a window, rather than gobreaker's default of 5
// consecutive failures, does not trip on a trickle of failures at low
// volume, and does trip on 30 % or 50 % failures at high volume, where a run
// of consecutive failures rarely happens.
type Config struct {
	// Window is how far back outcomes count toward FailureRatio.
	// Zero means 10 s. It must not be negative.
	Window time.Duration
	// Buckets is how many slices the window is cut into; each slice's
	// outcomes are forgotten together as it leaves the window, so more
	// buckets age outcomes out more smoothly. Zero means 10. It must be at
	// least 1, at most 1000, and at most Window in nanoseconds.
	Buckets int
	// FailureRatio trips the breaker when failures / calls in the window
	// reaches it, once the window holds MinCalls calls (Neutral outcomes
	// are not calls). Zero means 0.5; negative turns the rule off (then
	// ConsecutiveFailures must be on). Otherwise it must be in (0, 1].
	FailureRatio float64
	// MinCalls is how many calls the window must hold before FailureRatio
	// applies, so that 1 failure out of 1 call does not trip the breaker.
	// Zero means 20; negative means no minimum.
	MinCalls int
	// ConsecutiveFailures, when positive, also trips the breaker after
	// that many failures in a row (any success resets the run), the rule
	// that suits a dependency called a few times a minute. Zero or negative:
	// off (the default).
	ConsecutiveFailures int
	// SlowCall, when positive, counts a call that takes at least this long
	// as a Failure even if it succeeded: a dependency that answers in 20 s
	// is down for a caller that waits 1 s. Zero or negative: off (the
	// default). It costs two clock reads per call.
	SlowCall time.Duration

	// Open is the schedule of open periods: the first trip keeps the
	// breaker open for Open.Sample(1), each trip that follows a failed
	// probe for the next step (Sample(2), Sample(3), ...) until a probe
	// succeeds. Jitter keeps a fleet of breakers that tripped together
	// from probing together; growth probes a dependency that stays down
	// less and less. Open.Retries is not used: the schedule continues,
	// capped at Open.Max, for as long as probes fail.
	//
	// Its zero fields take DefaultOpen's values (5 s, ×2, capped at 1 min,
	// equal jitter), not package backoff's: Open{Initial: 2 * time.Second}
	// opens for 2 s, then 4 s, ... up to 1 min, with equal jitter. So the
	// zero Jitter, FullJitter, means EqualJitter here: full jitter can draw
	// an open period close to zero, which is no pause at all. An Initial
	// above 1 min needs a Max: Validate rejects it otherwise.
	//
	// A fixed open period T, gobreaker's Timeout, is Open{Initial: T,
	// Multiplier: 1, Max: T, Jitter: backoff.NoJitter}.
	Open backoff.Policy
	// Rand draws the open periods' jitter. Nil means math/rand/v2's
	// global source. The breaker calls it under its lock, so it need not be
	// safe for concurrent use.
	Rand backoff.Rand

	// Probes is how many calls half-open admits at once; calls beyond that
	// are rejected, not queued. A probe still in flight when another's
	// failure reopened the breaker keeps its slot in the next half-open
	// round until it reports or outlives ProbeTimeout (its outcome no
	// longer counts), so that a slow dependency never has more than Probes
	// probes at once. Zero means 1. It must not be negative.
	Probes int
	// ProbeSuccesses is how many probes must succeed (without a failure
	// between) to close the breaker. Zero means Probes. It must not be
	// negative.
	ProbeSuccesses int
	// ProbeTimeout bounds how long a probe may run: a probe that has not
	// reported after that long (its caller hung or vanished without
	// calling Done) counts as a failed probe, so the breaker is never stuck
	// in half-open. Zero means 10 s; negative means no limit (but with
	// Shared, the fleet's probe claim still expires after 10 s).
	ProbeTimeout time.Duration

	// Classify decides how a call's non-nil error counts (a nil error is
	// always a Success; CallJudged judges from the value as well). Nil
	// means the package function Classify: context.Canceled and NotFault
	// errors are Neutral, the rest Failure. It must be safe for concurrent
	// use.
	Classify func(error) Outcome
	// OnStateChange, if set, is called after each state change, never
	// while a lock is held, so it may call the breaker's methods. Calls are
	// made one at a time, in the order of the changes, on the goroutine of
	// a caller that caused a change (which returns once the hook returns).
	OnStateChange func(Change)
	// OnReject, if set, is called with the error of each call the breaker
	// rejects, on the rejected caller's goroutine, before Allow returns it
	// and never while a lock is held: for counting rejections. It must be
	// safe for concurrent use and should be quick; the error is the one
	// the caller gets, not to be modified.
	OnReject func(*OpenError)
	// OnStale, if set, is called with each report the breaker drops as
	// stale (see Stale and Ticket), on the reporting goroutine, after
	// Done or Record has done its work and never while a lock is held:
	// so that a result lost to a state change is at least counted. It
	// must be safe for concurrent use and should be quick.
	OnStale func(Stale)
	// Clock is the breaker's time. Nil means the real clock (monotonic).
	Clock Clock

	// Shared, if set, shares the breaker's state with other processes; see
	// Shared. Nil: the state is this process's own.
	Shared Shared
	// SharedRefresh is how often, at most, calls read the shared state
	// while this process sees the breaker closed or open, to learn about
	// other processes' trips and probes. Zero means 1 s; negative means
	// only on this process's own transitions.
	SharedRefresh time.Duration
}

// Defaults of Config, applied by New to zero fields.
const (
	DefaultWindow        = 10 * time.Second
	DefaultBuckets       = 10
	DefaultFailureRatio  = 0.5
	DefaultMinCalls      = 20
	DefaultProbeTimeout  = 10 * time.Second
	DefaultSharedRefresh = time.Second
	maxBuckets           = 1000
)

// DefaultOpen returns the default schedule of open periods: 5 s before the
// first probe, doubling after each failed probe, capped at 1 min, with equal
// jitter (each period drawn from [d/2, d]) so that breakers that tripped
// together probe at different moments. Each call returns a new value.
func DefaultOpen() backoff.Policy {
	return backoff.Policy{
		Initial:    5 * time.Second,
		Multiplier: 2,
		Max:        time.Minute,
		Jitter:     backoff.EqualJitter,
	}
}

// ErrInvalid is matched with errors.Is by every error that Validate returns
// (as backoff.ErrInvalid is by a Policy's, with the same pattern in every
// package of the module: ErrInvalid and a *FieldError).
var ErrInvalid = errors.New("breaker: invalid config")

// FieldError reports a Config field whose value is outside its accepted
// range. It matches ErrInvalid with errors.Is. Validate returns a new one
// each time, so it is safe to keep and to read from any goroutine. The zero
// FieldError names no field and is never returned.
type FieldError struct {
	Field    string // the Config field, e.g. "FailureRatio"
	Value    string // the rejected value, formatted
	Accepted string // what is accepted

	err error // for a field of Open: the policy's *backoff.FieldError
}

// Error returns "breaker: FIELD must be ACCEPTED, got VALUE", such as
// "breaker: Open.Multiplier must be a finite number >= 1 (or 0 for the
// default 2), got 0.5".
func (e *FieldError) Error() string {
	return fmt.Sprintf("breaker: %s must be %s, got %s", e.Field, e.Accepted, e.Value)
}

// Is reports whether target is ErrInvalid.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

// Unwrap returns, for a field of Open (Field "Open.Multiplier", ...), the
// policy's *backoff.FieldError, which matches backoff.ErrInvalid, and nil
// otherwise.
func (e *FieldError) Unwrap() error { return e.err }

// Validate reports the first field outside its accepted range, as a
// *FieldError. Like backoff.Policy's, it rejects an Open.Initial above the
// default cap (1 min) when Open.Max is zero, which would never open that
// long. For an invalid Open policy (with DefaultOpen's values in
// its zero fields), one whose Field names the policy's field
// ("Open.Multiplier") and that wraps its *backoff.FieldError, so that it
// matches both ErrInvalid and backoff.ErrInvalid.
func (c Config) Validate() error {
	window := c.Window
	if window == 0 {
		window = DefaultWindow
	}
	switch {
	case c.Window < 0:
		return &FieldError{Field: "Window", Value: c.Window.String(), Accepted: "a duration > 0 (or 0 for 10s)"}
	case c.Buckets < 0 || c.Buckets > maxBuckets || int64(c.Buckets) > int64(window):
		return &FieldError{Field: "Buckets", Value: fmt.Sprint(c.Buckets), Accepted: "a whole number in [1, 1000], at most Window in nanoseconds (or 0 for 10)"}
	case math.IsNaN(c.FailureRatio) || c.FailureRatio > 1:
		return &FieldError{Field: "FailureRatio", Value: fmt.Sprint(c.FailureRatio), Accepted: "a number in (0, 1] (0 for 0.5, negative for off)"}
	case c.FailureRatio < 0 && c.ConsecutiveFailures <= 0:
		return &FieldError{Field: "FailureRatio", Value: fmt.Sprint(c.FailureRatio), Accepted: "on (>= 0) when ConsecutiveFailures is off, or the breaker could never trip"}
	case c.Probes < 0:
		return &FieldError{Field: "Probes", Value: fmt.Sprint(c.Probes), Accepted: "a whole number >= 1 (or 0 for 1)"}
	case c.ProbeSuccesses < 0:
		return &FieldError{Field: "ProbeSuccesses", Value: fmt.Sprint(c.ProbeSuccesses), Accepted: "a whole number >= 1 (or 0 for Probes)"}
	}
	// The rule of backoff.Policy.Validate, with Open's default cap: an
	// Initial above the cap it would silently be cut to is a mistake (a
	// fixed period of 90 s written as Open{Initial: 90 * time.Second}).
	if dmax := DefaultOpen().Max; c.Open.Max == 0 && c.Open.Initial > dmax {
		return &FieldError{Field: "Open.Initial", Value: c.Open.Initial.String(),
			Accepted: "at most the default Open.Max of " + dmax.String() + " when Open.Max is 0 (set Open.Max, or Open.Max: backoff.NoCap)"}
	}
	if err := openPolicy(c.Open).Validate(); err != nil {
		ce := &FieldError{Field: "Open", Accepted: "a valid backoff.Policy", Value: err.Error(), err: err}
		var fe *backoff.FieldError
		if errors.As(err, &fe) {
			ce.Field, ce.Value, ce.Accepted = "Open."+fe.Field, fe.Value, fe.Accepted
		}
		return ce
	}
	return nil
}

// openPolicy is the schedule of open periods that Open describes: its zero
// fields take DefaultOpen's values.
func openPolicy(p backoff.Policy) backoff.Policy {
	d := DefaultOpen()
	if p.Initial == 0 {
		p.Initial = d.Initial
	}
	if p.Multiplier == 0 {
		p.Multiplier = d.Multiplier
	}
	if p.Max == 0 {
		p.Max = d.Max
	}
	if p.Jitter == backoff.FullJitter {
		p.Jitter = d.Jitter
	}
	return p
}

// settings are a Config with its defaults applied.
type settings struct {
	window, width  time.Duration
	buckets        int
	ratio          float64 // < 0: off
	minCalls       int64
	consecutive    int64 // <= 0: off
	slow           time.Duration
	open           backoff.Policy
	rand           backoff.Rand
	probes         int
	probeSuccesses int
	probeTimeout   time.Duration // < 0: no limit
	classify       func(error) Outcome
	onChange       func(Change)
	onReject       func(*OpenError)
	onStale        func(Stale)
	refresh        time.Duration // < 0: transitions only
}

func (c Config) settings() settings {
	s := settings{
		window:       c.Window,
		buckets:      c.Buckets,
		ratio:        c.FailureRatio,
		minCalls:     int64(c.MinCalls),
		consecutive:  int64(c.ConsecutiveFailures),
		slow:         c.SlowCall,
		open:         c.Open,
		rand:         c.Rand,
		probes:       c.Probes,
		probeTimeout: c.ProbeTimeout,
		classify:     c.Classify,
		onChange:     c.OnStateChange,
		onReject:     c.OnReject,
		onStale:      c.OnStale,
		refresh:      c.SharedRefresh,
	}
	if s.window == 0 {
		s.window = DefaultWindow
	}
	if s.buckets == 0 {
		s.buckets = DefaultBuckets
	}
	s.width = s.window / time.Duration(s.buckets)
	if s.ratio == 0 {
		s.ratio = DefaultFailureRatio
	}
	switch {
	case s.minCalls == 0:
		s.minCalls = DefaultMinCalls
	case s.minCalls < 0:
		s.minCalls = 1
	}
	s.open = openPolicy(s.open)
	if s.probes == 0 {
		s.probes = 1
	}
	s.probeSuccesses = c.ProbeSuccesses
	if s.probeSuccesses == 0 {
		s.probeSuccesses = s.probes
	}
	if s.probeTimeout == 0 {
		s.probeTimeout = DefaultProbeTimeout
	}
	if s.classify == nil {
		s.classify = Classify
	}
	if s.refresh == 0 {
		s.refresh = DefaultSharedRefresh
	}
	return s
}
