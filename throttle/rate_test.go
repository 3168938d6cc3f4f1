package throttle

import (
	"context"
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/retry"
)

const tolerance = 1e-12

func near(a, b float64) bool { return math.Abs(a-b) <= tolerance }

// TestCubicVectors reproduces the CUBIC vectors that aws-sdk-go-v2
// publishes (aws/retry/adaptive_ratelimit_test.go,
// TestAdaptiveRateLimit_cubic): Wmax 10, throttled at t = 5 s, then the
// rate at each second, successes only or mixed with throttles.
func TestCubicVectors(t *testing.T) {
	type step struct {
		throttled bool
		at        int64 // seconds
		want      float64
	}
	for name, steps := range map[string][]step{
		"success": {
			{false, 5, 7}, {false, 6, 9.64893600966}, {false, 7, 10.000030849917364},
			{false, 8, 10.453284520772092}, {false, 9, 13.408697022224185},
			{false, 10, 21.26626835427364}, {false, 11, 36.425998516920465},
		},
		"mixed": {
			{false, 5, 7}, {false, 6, 9.64893600966}, {true, 7, 6.754255206761999},
			{true, 8, 4.727978644733399}, {false, 9, 4.670125557970046},
			{false, 10, 4.770870456867401}, {false, 11, 6.011819748005445},
			{false, 12, 10.792973431384178},
		},
	} {
		t.Run(name, func(t *testing.T) {
			clock := &fakeClock{t: time.Unix(0, 0)}
			r, _ := NewRate(RateConfig{Clock: clock})
			r.lastMaxRate = 10
			r.lastThrottle = time.Unix(5, 0).UnixNano()
			var rate float64
			for _, s := range steps {
				at := time.Unix(s.at, 0).UnixNano()
				r.window()
				if s.throttled {
					rate *= cubicBeta
					r.lastThrottle, r.lastMaxRate = at, rate
				} else {
					rate = r.cubicSuccess(at)
				}
				if !near(rate, s.want) {
					t.Errorf("rate at %ds = %.17g, want %.17g", s.at, rate, s.want)
				}
			}
		})
	}
}

// TestRateUpdateVectors runs the SDK's TestAdaptiveRateLimit_Update
// through the public methods on a fake clock: the measured send rate and
// the fill rate after each response.
func TestRateUpdateVectors(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	r, err := NewRate(RateConfig{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range updateVectors {
		r.DoneAt(time.UnixMilli(s.ms), s.throttled)
		st := r.Stats()
		if !near(st.Measured, s.measured) || !near(st.FillRate, s.fill) {
			t.Errorf("after the response at %dms: measured %.17g, fill %.17g; want %.17g, %.17g",
				s.ms, st.Measured, st.FillRate, s.measured, s.fill)
		}
		if st.Enabled != (s.ms >= 2000) {
			t.Errorf("at %dms: Enabled = %v, want true from the first throttle on", s.ms, st.Enabled)
		}
	}
}

var updateVectors = []struct {
	throttled      bool
	ms             int64
	measured, fill float64
}{
	{false, 200, 0, 0.5}, {false, 400, 0, 0.5}, {false, 600, 4.8, 0.5},
	{false, 800, 4.8, 0.5}, {false, 1000, 4.16, 0.5}, {false, 1200, 4.16, 0.6912},
	{false, 1400, 4.16, 1.0976}, {false, 1600, 5.632, 1.6384}, {false, 1800, 5.632, 2.3328},
	{true, 2000, 4.3264, 3.02848}, {false, 2200, 4.3264, 3.4866391734702598},
	{false, 2400, 4.3264, 3.8218744160402554}, {false, 2600, 5.665280, 4.053385727709987},
	{false, 2800, 5.665280, 4.200373108479455}, {false, 3000, 4.333056, 4.282036558348658},
	{true, 3200, 4.333056, 2.99742559084406}, {false, 3400, 4.333056, 3.4522263943863463},
}

func TestRateOffUntilThrottled(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	r, _ := NewRate(RateConfig{Clock: clock, FailFast: true})
	for i := range 1000 {
		if err := r.Admit(t.Context()); err != nil {
			t.Fatalf("request %d refused before any throttle: %v", i, err)
		}
	}
}

// throttled returns a Rate on clock whose bucket is on, at the minimum fill
// rate, with no token.
func throttled(t *testing.T, clock *fakeClock, failFast bool) *Rate {
	t.Helper()
	r, _ := NewRate(RateConfig{Clock: clock, FailFast: failFast})
	r.DoneAt(clock.Now(), true)
	if st := r.Stats(); !st.Enabled || st.FillRate != minFillRate {
		t.Fatalf("after a throttle with nothing measured: %+v, want on at 0.5/s", st)
	}
	return r
}

func TestRateFailFast(t *testing.T) {
	clock := &fakeClock{t: time.Unix(100, 0)}
	r := throttled(t, clock, true)
	err := r.Admit(t.Context())
	var re *RateError
	if !errors.As(err, &re) || !errors.Is(err, ErrRejected) || !retry.IsRejected(err) {
		t.Fatalf("Admit = %v, want a *RateError", err)
	}
	// An empty bucket at 0.5/s: a token in 2 s.
	if d, ok := retry.RetryAfter(err); !ok || d != 2*time.Second {
		t.Errorf("RetryAfter = %v, %v; want 2s", d, ok)
	}
	clock.Set(clock.Now().Add(2 * time.Second))
	if err := r.Admit(t.Context()); err != nil {
		t.Errorf("Admit once the token is due = %v", err)
	}
	if got := r.Stats().Rejected; got != 1 {
		t.Errorf("Rejected = %d, want 1", got)
	}
}

func TestRateWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, _ := NewRate(RateConfig{})
		r.Done(true) // on, at 0.5/s, empty
		start := time.Now()
		if err := r.Admit(t.Context()); err != nil {
			t.Fatalf("Admit = %v, want it to wait for the token", err)
		}
		if got := time.Since(start); got != 2*time.Second {
			t.Errorf("Admit waited %v, want 2s", got)
		}
	})
}

func TestRateNeverPastDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, _ := NewRate(RateConfig{})
		r.Done(true)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		err := r.Admit(ctx)
		if !errors.Is(err, ErrRejected) || time.Since(start) != 0 {
			t.Errorf("Admit with a token due after the deadline = %v after %v, want a rejection at once", err, time.Since(start))
		}
		ctx2, cancel2 := context.WithCancel(t.Context())
		time.AfterFunc(500*time.Millisecond, cancel2)
		if err := r.Admit(ctx2); !errors.Is(err, context.Canceled) {
			t.Errorf("Admit canceled while waiting = %v, want context.Canceled", err)
		}
	})
}

// TestRateBelowOnePerSecond is where the Rate departs from the SDK: a
// learned rate below 1/s still admits, one request every 1/rate.
func TestRateBelowOnePerSecond(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	r := throttled(t, clock, true)
	n := 0
	for i := range 100 {
		clock.Set(time.Unix(0, 0).Add(time.Duration(i) * 100 * time.Millisecond))
		if _, ok := r.AcquireAt(clock.Now()); ok {
			n++
		}
	}
	// 10 s at 0.5/s.
	if n != 4 && n != 5 {
		t.Errorf("admitted %d in 10 s at 0.5/s, want 4 or 5", n)
	}
}

// TestRateQuietPathExact checks that DoneAt's quiet path (a success before
// the first throttle, counted without the lock) leaves a Rate in the state
// the SDK's update would: the same Done times through done (the update
// under the lock, every time) and through DoneAt must agree on everything
// that decides later, to the bit but for the bucket's content (1e-12
// relative: one refill for several), and the quiet path must carry most
// of the successes before the first throttle.
func TestRateQuietPathExact(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	// Made a minute before: CUBIC's rate (0.4·t³ before any throttle)
	// is then above twice the measured rate, as in any Rate that has run
	// for a while, and the quiet path can open.
	fast, _ := NewRate(RateConfig{Clock: &fakeClock{t: start.Add(-time.Minute)}})
	ref, _ := NewRate(RateConfig{Clock: &fakeClock{t: start.Add(-time.Minute)}})
	rng := seeded(7)
	at := time.Duration(0)
	var quiet, before int
	for i := range 20000 {
		// 200 responses/s on average for 5 s, then 50/s with pauses; a
		// throttle at 8 s and another at 12 s.
		gap := time.Duration(rng.ExpFloat64() * float64(5*time.Millisecond))
		if at > 5*time.Second {
			gap *= 4
		}
		if i%997 == 0 {
			gap += 700 * time.Millisecond
		}
		at += gap
		overloaded := false
		if at >= 8*time.Second && !ref.enabled || at >= 12*time.Second && ref.lastThrottle < start.Add(12*time.Second).UnixNano() {
			overloaded = true
		}
		now := start.Add(at)
		p0 := fast.pending.Load()
		fast.DoneAt(now, overloaded)
		ref.done(now.UnixNano(), overloaded)
		if !ref.enabled {
			before++
			if fast.pending.Load() == p0+1 {
				quiet++
			}
		}
		if ref.enabled {
			fast.AcquireAt(now)
			ref.AcquireAt(now)
		}
		f, g := fast.state(now), ref.state(now)
		if math.Abs(f.tokens-g.tokens) <= 1e-12*max(1, g.tokens) {
			f.tokens = g.tokens // one refill for several: rounding only
		}
		if f != g {
			t.Fatalf("response %d at %v: quiet path's state %+v, the SDK's update %+v", i, at, f, g)
		}
		if at > 16*time.Second {
			break
		}
	}
	if quiet < before/2 {
		t.Errorf("quiet path took %d of the %d successes before the first throttle, want most", quiet, before)
	}
	if !ref.enabled || ref.lastThrottle < start.Add(12*time.Second).UnixNano() {
		t.Errorf("the run ended before its second throttle")
	}
	t.Logf("quiet path: %d of %d successes before the first throttle", quiet, before)
}

// rateState is what decides a Rate's future, for comparisons.
type rateState struct {
	enabled                               bool
	fillRate, measured, size, tokens      float64
	lastTxBucket, lastMaxRate, timeWindow float64
	requestCount, lastThrottle            int64
}

// state is what decides r's future at now: the bucket's content is the
// one a refill at now would give.
func (r *Rate) state(now time.Time) rateState {
	r.mu.Lock()
	defer r.mu.Unlock()
	tokens := r.tokens
	if r.lastRefill != 0 {
		tokens = math.Min(tokens+float64(now.UnixNano()-r.lastRefill)/float64(time.Second)*r.fillRate, r.size)
	}
	return rateState{r.enabled, r.fillRate, r.measured, r.size, tokens,
		r.lastTxBucket, r.lastMaxRate, r.timeWindow, r.requestCount + r.pending.Load(), r.lastThrottle}
}
