package throttle

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
)

// Defaults of a Config whose fields are zero: the SRE book's.
const (
	DefaultK       = 2
	DefaultWindow  = 2 * time.Minute
	DefaultBuckets = 12
)

// Clock tells a Throttler or a Rate the time. They read it only while
// deciding (they never start timers or goroutines, except a Rate that
// waits for a token), so a virtual clock, as in tests and the simulator,
// drives them completely.
type Clock interface {
	Now() time.Time
}

// Config sets a Throttler's rules. The zero Config is the SRE book's
// throttler: K 2 over a window of 2 minutes in 12 buckets, no cap on p,
// no floor of requests.
type Config struct {
	// K is how many requests the throttler lets through per request the
	// dependency accepts: it rejects locally with probability
	// max(0, (requests − K·accepts) / (requests + 1)). 2 lets through one
	// request the dependency will refuse per request it accepts; lower
	// values throttle harder, and K = 1 only as much as is accepted.
	// Zero means 2; otherwise it must be a finite number ≥ 1 (below 1 a
	// healthy dependency that accepts everything would still be
	// throttled).
	K float64
	// Window is how far back requests and accepts count. Zero means 2
	// minutes; it must not be negative.
	Window time.Duration
	// Buckets is how many slices the window is cut into; each slice's
	// counts are forgotten together as it leaves the window. Zero means
	// 12 (10 s each by default); it must be at most 1000 and at most
	// Window in nanoseconds.
	Buckets int
	// MaxP caps the probability of rejection, so that some requests
	// always reach the dependency and notice that it recovered. Zero
	// means no cap (1); otherwise it must be in (0, 1].
	MaxP float64
	// MinRequests is how many requests the window must hold before the
	// throttler rejects any, so that a few overload signals at low volume
	// do not throttle. Zero or negative means no floor.
	MinRequests int64
	// Clock, if not nil, replaces time.Now for Admit and Snapshot (Done
	// reads no clock); AdmitAt, DoneAt and SnapshotAt take the time as an
	// argument instead.
	Clock Clock
	// Rand is the source of the draws that decide rejections; nil means
	// math/rand/v2's global generator. A Throttler draws under its lock,
	// so a Rand that is not safe for concurrent use is fine.
	Rand backoff.Rand
}

// Validate reports the first field out of range: a *FieldError, which
// matches ErrInvalid.
func (c Config) Validate() error {
	switch {
	case c.K != 0 && !(c.K >= 1 && !math.IsInf(c.K, 1)):
		return &FieldError{"Config.K", fmt.Sprint(c.K), "a finite number ≥ 1 (0 means 2)"}
	case c.Window < 0:
		return &FieldError{"Config.Window", c.Window.String(), "≥ 0 (0 means 2m)"}
	case c.Buckets < 0 || c.Buckets > 1000:
		return &FieldError{"Config.Buckets", fmt.Sprint(c.Buckets), "in [0, 1000] (0 means 12)"}
	case c.MaxP != 0 && !(c.MaxP > 0 && c.MaxP <= 1):
		return &FieldError{"Config.MaxP", fmt.Sprint(c.MaxP), "in (0, 1] (0 means no cap)"}
	}
	if s := c.settings(); int64(s.width) < 1 {
		return &FieldError{"Config.Buckets", fmt.Sprint(c.Buckets), "at most Window in nanoseconds"}
	}
	return nil
}

// settings are a Config with its defaults applied.
type settings struct {
	k       float64
	buckets int
	width   time.Duration
	maxP    float64
	min     int64
}

func (c Config) settings() settings {
	s := settings{k: c.K, buckets: c.Buckets, maxP: c.MaxP, min: c.MinRequests}
	if s.k == 0 {
		s.k = DefaultK
	}
	if s.buckets == 0 {
		s.buckets = DefaultBuckets
	}
	w := c.Window
	if w == 0 {
		w = DefaultWindow
	}
	s.width = w / time.Duration(s.buckets)
	if s.maxP == 0 {
		s.maxP = 1
	}
	return s
}

// Throttler is the client-side throttling of Google's SRE book
// ("Handling Overload"): each request is rejected locally, without being
// sent, with probability
//
//	p = max(0, (requests − K·accepts) / (requests + 1))
//
// over a rolling window, where requests counts every request asked for,
// the ones the Throttler itself rejected included, and accepts those the
// dependency accepted (anything but an overload signal). Counting the
// rejected requests is the point: the load that reaches the dependency
// then stays near K times what it accepts, whatever the demand (counting
// only the requests sent, as failsafe-go's AdaptiveThrottler and Finagle
// do, lets it grow with the square root of the demand). One exception,
// for a cold start: a rejection made while the window holds no accept at
// all is not counted (see the package documentation).
//
// A request that is sent counts once its outcome is known: Done reports
// it, as an accept or an overload. Requests still in flight count for
// nothing, so that a dependency that has never signalled overload is never
// throttled, however many requests are sent to it at once (counted when
// admitted, a new Throttler's first concurrent requests would be requests
// without accepts). A rejection counts when it is made.
//
// Admit (or AdmitAt, the time given) asks for one request and Done (or
// DoneAt) reports how it ended: the retry.Admitter that
// retry.WithAdmitter, retryhttp.Transport and retrygrpc take. Done reads
// no clock: it counts the outcome at the last time the Throttler read,
// its last decision (the outcome came after it), which a busy Throttler
// reads at least every 64 admissions and an idle one at each (see
// Admit); DoneAt counts it at the time given.
//
// The zero Throttler is ready to use, with the zero Config's rules. A
// Throttler is safe for concurrent use; an admitted request and its accept
// cost two atomic adds, no lock and no allocation, while the dependency
// accepts everything.
type Throttler struct {
	cfg   Config
	s     settings
	once  sync.Once
	clock Clock
	rand  backoff.Rand

	// accepted is how many accepts Done reported that are not yet in a
	// bucket: they came after the last decision and go in its bucket.
	accepted atomic.Int64
	rejected atomic.Int64 // rejections since the Throttler was made
	// uncounted is how many of them were not counted as requests: made
	// while the window held no accept (cold start).
	uncounted atomic.Int64
	// credit is how many requests may still be admitted without the
	// lock, the clock or a draw: granted while p is 0, as many as the
	// recent rate of requests brings in a quarter of a bucket, so that
	// the accepts they bring are dated within about that (at most
	// maxCredit). An overload takes it back.
	credit credit

	mu       sync.Mutex
	b        []counts // the window, bucket e%len(b) for [e×width, (e+1)×width)
	epoch    int64    // the newest bucket's number: the last time read
	started  bool
	requests int64 // sums over b
	accepts  int64
	// lastAdmit is when the last admission under the lock was decided,
	// and spent the credit spent since by requests admitted without the
	// lock (taken back by an overload): the rate that sizes the credit.
	lastAdmit time.Duration
	spent     int64
	admitted  bool // lastAdmit is set
}

type counts struct{ requests, accepts int64 }

var _ retry.Admitter = (*Throttler)(nil)

// New returns a Throttler with the rules of cfg, or the error of
// cfg.Validate.
func New(cfg Config) (*Throttler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &Throttler{cfg: cfg}
	t.init()
	return t, nil
}

func (t *Throttler) init() {
	t.once.Do(func() {
		t.s = t.cfg.settings()
		t.clock = t.cfg.Clock
		t.rand = t.cfg.Rand
		if t.rand == nil {
			t.rand = globalRand{}
		}
		t.b = make([]counts, t.s.buckets)
	})
}

// globalRand draws from math/rand/v2's top-level generator.
type globalRand struct{}

func (globalRand) Float64() float64 { return rand.Float64() }

// epoch0 is the origin of the times a Throttler counts in: durations
// since it, read from the monotonic clock when no Clock is given. Its wall
// time is the Unix epoch, so that a bucket's edges are whole multiples of
// its width in Unix time: the same in every process, which a simulation
// on a virtual clock (AdmitAt, DoneAt) needs to give the same result on
// every run. Add keeps the monotonic reading of time.Now, so durations
// since epoch0 of real times still come from the monotonic clock.
var epoch0 = func() time.Time {
	now := time.Now()
	return now.Add(-time.Duration(now.UnixNano()))
}()

func (t *Throttler) now() time.Duration {
	if t.clock != nil {
		return t.clock.Now().Sub(epoch0)
	}
	return time.Since(epoch0)
}

// Admit asks for one request now (on the Clock, or time.Now): nil if it
// may be sent, then reported with Done, or a *RejectedError (matching
// ErrRejected) if it is rejected locally. ctx is not read: the decision
// never waits.
//
// While p is 0, Admit may admit without reading the clock: up to as many
// requests as came in the last quarter of a bucket (at most 64) after a
// decision that read it, until an overload is reported.
func (t *Throttler) Admit(ctx context.Context) error {
	if t.credit.spend() {
		return nil
	}
	t.init()
	return t.admit(t.now(), 0)
}

// AdmitAt is Admit at the time now.
func (t *Throttler) AdmitAt(now time.Time) error {
	if t.credit.spend() {
		return nil
	}
	t.init()
	return t.admit(now.Sub(epoch0), 0)
}

// AdmitFloor is AdmitAt with a floor under the probability of rejection:
// the request is rejected with probability max(p, floor), and counted as
// AdmitAt counts it. It is the seam through which counts kept elsewhere
// (a fleet's, in Redis: package fleet) make the Throttler reject more,
// never less, than its own counts would. A floor ≤ 0 is AdmitAt.
func (t *Throttler) AdmitFloor(now time.Time, floor float64) error {
	if floor <= 0 {
		return t.AdmitAt(now)
	}
	t.init()
	return t.admit(now.Sub(epoch0), min(floor, 1))
}

func (t *Throttler) admit(now time.Duration, floor float64) error {
	t.mu.Lock()
	spent := t.spent + t.credit.settle()
	t.spent = 0
	t.roll(now)
	p := max(t.p(), floor)
	if p > 0 && t.rand.Float64() < p {
		req, acc := t.requests, t.accepts
		if acc != 0 {
			t.b[slot(t.epoch, len(t.b))].requests++
			t.requests++
		} else {
			// Cold start: with no accept in the window, p is near 1 on
			// the overloads sent alone, and a rejection counted now would
			// only outweigh the accepts to come once the dependency
			// recovers (see the package documentation).
			t.uncounted.Add(1)
		}
		t.mu.Unlock()
		t.rejected.Add(1)
		return &RejectedError{P: p, Requests: req, Accepts: acc}
	}
	// The request counts once its outcome is known. While p is 0 only an
	// overload or time can make it positive: an overload takes the
	// credit back, and the credit lasts about a quarter of a bucket at
	// the rate requests came since the last decision.
	var c float64
	if p == 0 && floor <= 0 {
		c = maxCredit
		if d := now - t.lastAdmit; t.admitted && d > 0 {
			c = float64(spent+1) * float64(t.s.width/4) / float64(d)
		} else if !t.admitted {
			c = 0
		}
	}
	t.lastAdmit, t.admitted = now, true
	t.credit.grant(c)
	t.mu.Unlock()
	return nil
}

// Done reports how an admitted request ended: overloaded for an overload
// signal (see retry.IsOverload), otherwise it counts as accepted. It reads
// no clock: the outcome counts at the Throttler's last decision, which it
// followed. An accept costs one atomic add; an overload takes the lock,
// and the next request is decided under it.
func (t *Throttler) Done(overloaded bool) {
	if !overloaded {
		t.accepted.Add(1)
		return
	}
	t.init()
	t.mu.Lock()
	t.overload()
	t.b[slot(t.epoch, len(t.b))].requests++
	t.requests++
	t.mu.Unlock()
}

// DoneAt is Done with the time the outcome came: counted then, if that is
// still in the window, rather than at the last decision.
func (t *Throttler) DoneAt(now time.Time, overloaded bool) {
	t.init()
	t.mu.Lock()
	t.roll(now.Sub(epoch0))
	if overloaded {
		t.overload()
	}
	e := floorDiv(int64(now.Sub(epoch0)), int64(t.s.width))
	if e <= t.epoch-int64(len(t.b)) {
		t.mu.Unlock()
		return // older than the window
	}
	b := &t.b[slot(min(e, t.epoch), len(t.b))]
	b.requests++
	t.requests++
	if !overloaded {
		b.accepts++
		t.accepts++
	}
	t.mu.Unlock()
}

// overload takes the credit back, so that the next request is decided
// with the overload counted. t.mu is held.
func (t *Throttler) overload() {
	t.spent += t.credit.settle()
	t.credit.grant(0)
}

// roll moves the accepts that Done reported since the last decision into
// its bucket, where they belong, then forgets the buckets that left the
// window by now. t.mu is held.
func (t *Throttler) roll(now time.Duration) {
	if a := t.accepted.Swap(0); a != 0 {
		// A Throttler that never decided (Done before any Admit) dates
		// them at now.
		if !t.started {
			t.started, t.epoch = true, floorDiv(int64(now), int64(t.s.width))
		}
		b := &t.b[slot(t.epoch, len(t.b))]
		b.requests += a
		b.accepts += a
		t.requests += a
		t.accepts += a
	}
	e := floorDiv(int64(now), int64(t.s.width))
	n := int64(len(t.b))
	switch {
	case !t.started:
		t.started, t.epoch = true, e
	case e > t.epoch:
		if e-t.epoch >= n {
			clear(t.b)
			t.requests, t.accepts = 0, 0
		} else {
			for j := t.epoch + 1; j <= e; j++ {
				b := &t.b[slot(j, len(t.b))]
				t.requests -= b.requests
				t.accepts -= b.accepts
				*b = counts{}
			}
		}
		t.epoch = e
	}
	// A clock that went back counts in the newest bucket.
}

// p is the probability of rejection of the next request. t.mu is held.
func (t *Throttler) p() float64 { return t.s.p(t.requests, t.accepts) }

// p is the probability of rejection over requests and accepts.
func (s settings) p(requests, accepts int64) float64 {
	if requests < s.min {
		return 0
	}
	p := (float64(requests) - s.k*float64(accepts)) / float64(requests+1)
	return min(max(p, 0), s.maxP)
}

// slot is the index of bucket number e in a ring of n: e may be negative
// (a Clock before the package's epoch).
func slot(e int64, n int) int {
	i := e % int64(n)
	if i < 0 {
		i += int64(n)
	}
	return int(i)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// Stats is what a Throttler counted, as Snapshot returns it: a plain
// value, safe to copy and keep. The zero Stats is an idle Throttler.
type Stats struct {
	// P is the probability with which the next request is rejected.
	P float64
	// Requests and Accepts are the counts in the window: every request
	// asked for whose outcome is known (an accept, an overload or a
	// rejection), and those the dependency accepted. Requests in flight
	// are in neither.
	Requests, Accepts int64
	// Rejected is how many requests the Throttler rejected since it was
	// made, a counter that only grows.
	Rejected int64
	// Uncounted is how many of Rejected were not counted in Requests,
	// having been made while the window held no accept at all (see the
	// package documentation: cold start), a counter that only grows.
	// Requests + Uncounted is every request asked for and answered while
	// the window holds them all.
	Uncounted int64
}

// P returns the probability with which the next request is rejected now:
// Snapshot().P.
func (t *Throttler) P() float64 { return t.Snapshot().P }

// Snapshot returns the counts now (on the Clock, or time.Now).
func (t *Throttler) Snapshot() Stats {
	t.init()
	return t.snapshot(t.now())
}

// SnapshotAt is Snapshot at the time now.
func (t *Throttler) SnapshotAt(now time.Time) Stats {
	t.init()
	return t.snapshot(now.Sub(epoch0))
}

// snapshot reads the counts as the window holds them at now, without
// moving them: the accepts reported since the last decision are in its
// bucket, and the buckets that left the window by now are left out, but
// nothing changes until the next decision or outcome.
func (t *Throttler) snapshot(now time.Duration) Stats {
	t.mu.Lock()
	req, acc := t.requests, t.accepts
	pending := t.accepted.Load()
	e := floorDiv(int64(now), int64(t.s.width))
	switch n := int64(len(t.b)); {
	case !t.started || e-t.epoch >= n:
		req, acc = 0, 0
		if !t.started {
			req, acc = pending, pending
		}
	default:
		req, acc = req+pending, acc+pending
		for j := t.epoch + 1; j <= e; j++ {
			b := t.b[slot(j, len(t.b))]
			req -= b.requests
			acc -= b.accepts
		}
	}
	t.mu.Unlock()
	return Stats{P: t.s.p(req, acc), Requests: req, Accepts: acc,
		Rejected: t.rejected.Load(), Uncounted: t.uncounted.Load()}
}
