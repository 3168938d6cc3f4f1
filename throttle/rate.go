package throttle

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/again-go/again/retry"
)

// The constants of AWS's adaptive retry mode (CUBIC, RFC 8312), which Rate
// follows.
const (
	cubicBeta   = 0.7 // the rate kept after a throttle
	cubicC      = 0.4 // the scale of the cubic growth
	smooth      = 0.8 // the weight of the newest measured send rate
	minFillRate = 0.5 // requests per second, the floor of the learned rate
)

// RateConfig configures a Rate. The zero RateConfig waits for tokens on
// the real clock.
type RateConfig struct {
	// FailFast, when true, makes Admit refuse at once, with a *RateError
	// whose RetryAfter is the time until a token, instead of waiting for
	// it. Either way Admit never waits past the context's deadline: a
	// wait that would end after it is refused at once.
	FailFast bool
	// Clock, if not nil, replaces time.Now for the decisions of Admit and
	// Done (the waits themselves use the runtime's timers); AcquireAt and
	// DoneAt take the time as an argument instead.
	Clock Clock
}

// Validate reports a field out of range; every RateConfig is valid today,
// and the method exists so that callers can check any configuration of
// the module the same way.
func (c RateConfig) Validate() error { return nil }

// Rate is the send rate that AWS's SDKs learn in their adaptive retry
// mode: a token bucket that stays off until the dependency first
// throttles (an overload signal, such as HTTP 429), whose fill rate then
// follows CUBIC (RFC 8312): cut to 0.7 of the measured send rate at each
// throttle, and grown back along 0.4·(t − W)³ + Wmax after it, never below
// 0.5 requests per second nor above twice the measured send rate (an
// exponentially smoothed rate, weight 0.8, over buckets of 0.5 s).
//
// It reproduces the SDK's published vectors (aws-sdk-go-v2's
// adaptive_ratelimit_test.go) to 1e-12, with two differences: the bucket
// holds at least one token, so that a learned rate below 1/s still admits
// a request every 1/rate seconds (the SDK's bucket of capacity rate < 1
// never holds the token a request needs), and it has nothing to do with
// the retry budget, which retry.Do refunds on every success whatever the
// admission (aws-sdk-go-v2#3550: the adaptive mode's never is).
//
// Admit (or AcquireAt, the time given) takes a token, waiting for it
// unless RateConfig.FailFast; Done (or DoneAt) reports how the request
// ended. At a high rate Admit and Done take most tokens and count most
// successes with one atomic add each, and the next update under the lock
// settles them: DoneAt and AcquireAt are the SDK's update at every call,
// Done and Admit the same to within 64 responses (see Done); an admitted
// request costs about 11 ns (BENCHMARKS.md). A Rate is a retry.Admitter. Make one with NewRate; the zero Rate
// is not usable. It is safe for concurrent use.
type Rate struct {
	failFast bool
	clock    Clock
	// Without a Clock, the time is NewRate's time.Now plus the monotonic
	// time since (one clock read instead of time.Now's two, and no jump
	// when the wall clock is set).
	start     time.Time
	startNano int64
	rejected  atomic.Int64
	on        atomic.Bool // enabled, read without the lock

	// Credits, as the Throttler's: doneCredit counts successes without
	// the lock or the clock, tokenCredit takes tokens so. The next
	// operation under the lock settles them (see settleDone and refill).
	doneCredit  credit
	tokenCredit credit
	// The lock on its own cache line: Admit and Done on other cores then
	// write only the credits' line between two updates.
	_ [64]byte

	mu             sync.Mutex
	enabled        bool    // the token bucket is on: there was a throttle
	fillRate       float64 // tokens per second
	calculatedRate float64
	measured       float64 // the smoothed send rate
	lastTxBucket   float64 // seconds, a multiple of 0.5
	requestCount   int64   // responses in the current bucket
	lastMaxRate    float64 // Wmax: the rate at the last throttle
	lastThrottle   int64   // unix nanoseconds
	timeWindow     float64 // K of CUBIC: seconds to grow back to Wmax
	tokens, size   float64 // the bucket's content and capacity
	lastRefill     int64   // unix nanoseconds; 0: never
	doneFrom       int64   // unix nanoseconds: when doneCredit was granted
}

var _ retry.Admitter = (*Rate)(nil)

// NewRate returns a Rate that starts at the time on cfg's Clock (or
// time.Now), or the error of cfg.Validate.
func NewRate(cfg RateConfig) (*Rate, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &Rate{failFast: cfg.FailFast, clock: cfg.Clock}
	if r.clock == nil {
		r.start = time.Now()
		r.startNano = r.start.UnixNano()
	}
	now := r.nowNano()
	r.lastTxBucket = math.Floor(seconds(now))
	r.lastThrottle = now
	return r, nil
}

func (r *Rate) now() time.Time {
	if r.clock != nil {
		return r.clock.Now()
	}
	return time.Unix(0, r.nowNano())
}

// nowNano is now in unix nanoseconds.
func (r *Rate) nowNano() int64 {
	if r.clock != nil {
		return r.clock.Now().UnixNano()
	}
	return r.startNano + int64(time.Since(r.start))
}

func seconds(unixNano int64) float64 { return float64(unixNano) / float64(time.Second) }

// Admit takes a token for one request. Until the first throttle every
// request is admitted at once. Then, if no token is available, it waits
// for one, unless RateConfig.FailFast is set or the wait would end after
// ctx's deadline: it then returns a *RateError (matching ErrRejected)
// whose RetryAfter is the time until a token. If ctx ends while it waits,
// it returns ctx.Err(). While the bucket holds tokens, the last refill
// sets up to 64 of them aside, and Admit takes those without the lock or
// the clock.
func (r *Rate) Admit(ctx context.Context) error {
	if !r.on.Load() {
		return nil // no throttle yet: the bucket is off
	}
	if r.tokenCredit.spend() {
		return nil // a token the last refill set aside
	}
	var timer *time.Timer
	for {
		now := r.now()
		wait, ok := r.AcquireAt(now)
		if ok {
			return nil
		}
		if dl, has := ctx.Deadline(); r.failFast || (has && !now.Add(wait).Before(dl)) {
			r.rejected.Add(1)
			return &RateError{Wait: wait, Rate: r.Stats().FillRate}
		}
		if timer == nil {
			timer = time.NewTimer(wait)
			defer timer.Stop()
		} else {
			timer.Reset(wait)
		}
		select {
		case <-timer.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// AcquireAt takes a token at the time now, if one is available, and
// reports whether it did; if not, wait is the time until one will be, at
// the current fill rate. It never waits, and does not count a rejection:
// it is the decision of Admit, for code that keeps its own clock (a
// simulator).
func (r *Rate) AcquireAt(now time.Time) (wait time.Duration, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.enabled {
		return 0, true
	}
	r.refill(now.UnixNano())
	defer r.grantTokens()
	if r.tokens >= 1 {
		r.tokens--
		return 0, true
	}
	// Rounded up, and 1 ns at least: a bucket a rounding short of a token
	// must not ask for a wait of 0, on which Admit would spin.
	wait = time.Duration(math.Ceil((1 - r.tokens) / r.fillRate * float64(time.Second)))
	return max(wait, 1), false
}

// Done reports how an admitted request ended: overloaded for a throttle
// (see retry.IsOverload), which cuts the rate; anything else grows it.
//
// At a high rate most successes cost one atomic add: the last update
// under the lock sets aside as many as the send rate would bring in
// half the rest of its 0.5 s bucket (64 at most, none below 4 a second),
// and the next update counts them, spread evenly over the time since, as
// the SDK would have counted them one by one. The measured rate and the
// fill rate are then up to 64 successes late; a throttle never is. DoneAt
// is the SDK's update at every call.
func (r *Rate) Done(overloaded bool) {
	if !overloaded && r.doneCredit.spend() {
		return
	}
	r.done(r.nowNano(), overloaded)
}

// DoneAt is Done at the time now, without its shortcut: the SDK's update,
// under the lock, at every call.
func (r *Rate) DoneAt(now time.Time, overloaded bool) { r.done(now.UnixNano(), overloaded) }

// done is the SDK's update at t, in unix nanoseconds, under the lock,
// after the successes counted on credit.
func (r *Rate) done(t int64, overloaded bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settleDone(t)
	r.measure(t)
	if overloaded {
		use := r.measured
		if r.enabled {
			use = math.Min(r.measured, r.fillRate)
		}
		r.lastMaxRate = use
		r.window()
		r.lastThrottle = t
		r.calculatedRate = use * cubicBeta
		r.enabled = true
		r.on.Store(true)
	} else {
		// The SDK computes the window here too, from the same Wmax: it
		// changes only at a throttle, so the one computed then serves.
		r.calculatedRate = r.cubicSuccess(t)
	}
	next := math.Min(r.calculatedRate, 2*r.measured)
	r.refill(t)
	r.fillRate = math.Max(next, minFillRate)
	// The SDK sizes the bucket to next; one token at least, so that a
	// rate below 1/s still admits (see Rate).
	r.size = math.Max(next, 1)
	r.tokens = math.Min(r.tokens, r.size)
	r.grantTokens()
	r.grantDone(t)
}

// settleDone takes doneCredit back and counts the successes Done counted
// on it as if they had come at even intervals between the grant and t:
// the SDK's count, to where in that time each one fell. r.mu is held.
func (r *Rate) settleDone(t int64) {
	used := r.doneCredit.settle()
	if used <= 0 {
		return
	}
	if !(bucketOf(t) > r.lastTxBucket) {
		r.requestCount += used // all in the bucket measure counts in
		return
	}
	from := min(r.doneFrom, t) // a Clock may go back
	step := (t - from) / (used + 1)
	for i := range used {
		r.measure(from + (i+1)*step)
	}
}

// grantDone sets doneCredit from t: the successes that the send rate
// brings in half the rest of t's bucket, so that at a steady rate the
// next update comes in the same bucket. The rate is the measured one, or
// the current bucket's so far once it holds 8 responses (a Rate's first
// bucket, or a rate that rose). r.mu is held.
func (r *Rate) grantDone(t int64) {
	rate := r.measured
	if since := seconds(t) - r.lastTxBucket; r.requestCount >= 8 && since > 0 {
		rate = max(rate, float64(r.requestCount)/since)
	}
	rest := bucketOf(t) + 0.5 - seconds(t)
	r.doneCredit.grant(rate * rest / 2)
	r.doneFrom = t
}

// grantTokens sets tokenCredit: once the bucket is on, the whole tokens
// in it (64 at most), which Admit may take without the lock until the
// next refill takes them from the bucket. r.mu is held, and r.refill has
// taken back the last credit.
func (r *Rate) grantTokens() {
	if !r.enabled {
		return
	}
	r.tokenCredit.grant(r.tokens)
}

// bucketOf is the 0.5 s bucket of the send rate that t falls in.
func bucketOf(t int64) float64 { return math.Floor(seconds(t)*2) / 2 }

// window computes CUBIC's K, the time to grow back to Wmax.
func (r *Rate) window() {
	r.timeWindow = math.Cbrt(r.lastMaxRate * (1 - cubicBeta) / cubicC)
}

// cubicSuccess is the rate t after the last throttle.
func (r *Rate) cubicSuccess(t int64) float64 {
	d := float64(t-r.lastThrottle)/float64(time.Second) - r.timeWindow
	return cubicC*d*d*d + r.lastMaxRate
}

// measure counts one response at t into the smoothed send rate.
func (r *Rate) measure(t int64) {
	bucket := bucketOf(t)
	r.requestCount++
	if bucket > r.lastTxBucket {
		current := float64(r.requestCount) / (bucket - r.lastTxBucket)
		r.measured = current*smooth + r.measured*(1-smooth)
		r.requestCount = 0
		r.lastTxBucket = bucket
	}
}

// refill adds the tokens earned since the last refill, then takes out
// those Admit took on tokenCredit since: as if they had all been taken at
// t, never earlier, so that the bucket never holds more than the SDK's
// would (it can hold fewer, by what the cap refused meanwhile), and never
// less than 0, since a grant never passes the tokens in the bucket.
// r.mu is held.
func (r *Rate) refill(t int64) {
	if r.lastRefill != 0 {
		r.tokens = math.Min(r.tokens+float64(t-r.lastRefill)/float64(time.Second)*r.fillRate, r.size)
	}
	r.lastRefill = t
	if used := r.tokenCredit.settle(); used > 0 {
		r.tokens -= float64(used)
	}
}

// RateStats is what a Rate learned, as Stats returns it: a plain value.
// The zero RateStats is a Rate that has not been throttled.
type RateStats struct {
	// Enabled is true once the dependency throttled: requests then wait
	// for tokens.
	Enabled bool
	// FillRate is the learned send rate, in requests per second (0.5 at
	// least once set).
	FillRate float64
	// Measured is the smoothed rate of responses, per second.
	Measured float64
	// Rejected is how many requests Admit refused since the Rate was made.
	Rejected int64
}

// Stats returns what the Rate learned so far.
func (r *Rate) Stats() RateStats {
	r.mu.Lock()
	s := RateStats{Enabled: r.enabled, FillRate: r.fillRate, Measured: r.measured}
	r.mu.Unlock()
	s.Rejected = r.rejected.Load()
	return s
}

// String describes the state, for logs: "rate: off" or "rate: 4.2/s".
func (s RateStats) String() string {
	if !s.Enabled {
		return "rate: off"
	}
	return fmt.Sprintf("rate: %.3g/s", s.FillRate)
}
