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
	// Clock, if not nil, replaces time.Now for Admit and Done; AdmitAt
	// takes the time as an argument instead.
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
// Admit (or AdmitAt, the time given) asks for one request and Done
// reports how it ended: the retry.Admitter that retry.WithAdmitter,
// retryhttp.Transport and retrygrpc take. Accepts reported by Done are
// counted in the bucket of the next request.
//
// The zero Throttler is ready to use, with the zero Config's rules. A
// Throttler is safe for concurrent use; an admitted request costs one
// short lock and one atomic add, no allocation.
type Throttler struct {
	cfg   Config
	s     settings
	once  sync.Once
	clock Clock
	rand  backoff.Rand

	accepted atomic.Int64 // accepts reported by Done, not yet in a bucket
	rejected atomic.Int64 // rejections since the Throttler was made
	// uncounted is how many of them were not counted as requests: made
	// while the window held no accept (cold start).
	uncounted atomic.Int64
	// credit is how many requests may still be admitted without the
	// lock, the clock or a draw: as many as cannot make p positive even
	// if none of them is accepted.
	credit credit

	mu       sync.Mutex
	b        []counts // the window, bucket e%len(b) for [e×width, (e+1)×width)
	epoch    int64    // the newest bucket's number
	started  bool
	requests int64 // sums over b
	accepts  int64
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
// since it, read from the monotonic clock when no Clock is given.
var epoch0 = time.Now()

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
	t.roll(now)
	p := max(t.p(), floor)
	cur := &t.b[slot(t.epoch, len(t.b))]
	cur.requests++
	t.requests++
	if p > 0 && t.rand.Float64() < p {
		req, acc := t.requests-1, t.accepts
		if acc == 0 {
			// Cold start: with no accept in the window, p is near 1 on
			// the overloads sent alone, and a rejection counted now would
			// only outweigh the accepts to come once the dependency
			// recovers (see the package documentation).
			cur.requests--
			t.requests--
			t.uncounted.Add(1)
		}
		t.mu.Unlock()
		t.rejected.Add(1)
		return &RejectedError{P: p, Requests: req, Accepts: acc}
	}
	// Requests that leave p at 0 even if the dependency refuses every one
	// of them: requests + c − K·accepts ≤ 0, or fewer than MinRequests.
	c := math.Floor(t.s.k*float64(t.accepts)) - float64(t.requests)
	c = max(c, float64(t.s.min-t.requests-1))
	if floor > 0 {
		c = 0 // the next request must see the floor too
	}
	t.credit.grant(c)
	t.mu.Unlock()
	return nil
}

// Done reports how an admitted request ended: overloaded for an overload
// signal (see retry.IsOverload), otherwise it counts as accepted.
func (t *Throttler) Done(overloaded bool) {
	if !overloaded {
		t.accepted.Add(1)
	}
}

// roll forgets the buckets that left the window by now and moves the
// accepts reported since into the newest bucket. t.mu is held.
func (t *Throttler) roll(now time.Duration) {
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
	// The requests admitted on credit since the last decision, and the
	// accepts reported since, count in the newest bucket (as does
	// everything when the clock went back). A request that found no
	// credit left took it below zero and came here.
	if used := t.credit.settle(); used > 0 {
		t.b[slot(t.epoch, len(t.b))].requests += used
		t.requests += used
	}
	if a := t.accepted.Load(); a != 0 {
		t.accepted.Add(-a)
		t.b[slot(t.epoch, len(t.b))].accepts += a
		t.accepts += a
	}
}

// p is the probability of rejection of the next request. t.mu is held.
func (t *Throttler) p() float64 {
	if t.requests < t.s.min {
		return 0
	}
	p := (float64(t.requests) - t.s.k*float64(t.accepts)) / float64(t.requests+1)
	return min(max(p, 0), t.s.maxP)
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
	// asked for, and those the dependency accepted.
	Requests, Accepts int64
	// Rejected is how many requests the Throttler rejected since it was
	// made, a counter that only grows.
	Rejected int64
	// Uncounted is how many of Rejected were not counted in Requests,
	// having been made while the window held no accept at all (see the
	// package documentation: cold start), a counter that only grows.
	// Requests + Uncounted is every request asked for while the window
	// holds them all.
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

func (t *Throttler) snapshot(now time.Duration) Stats {
	t.mu.Lock()
	t.roll(now)
	s := Stats{P: t.p(), Requests: t.requests, Accepts: t.accepts}
	t.mu.Unlock()
	s.Rejected = t.rejected.Load()
	s.Uncounted = t.uncounted.Load()
	return s
}
