package throttle

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
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

// countingClock is a fakeClock that counts its reads: a Rate reads it
// only under the lock, so the count is how many calls took the lock.
type countingClock struct {
	fakeClock
	reads int
}

func (c *countingClock) Now() time.Time {
	c.reads++
	return c.fakeClock.Now()
}

// drive sends the responses of a run to two Rates made at start: fast
// through Done on its clock, ref through DoneAt, the SDK's update at
// every call, and returns how many times fast took the lock. Every
// throttle, and the end of the run, is a checkpoint: fast's measured and
// fill rates must then be within tol of ref's (relative, or 0.5/s).
func drive(t *testing.T, start time.Time, gaps func(i int, at time.Duration) (gap time.Duration, overloaded, end bool), tol float64) (locks, calls int) {
	t.Helper()
	clock := &countingClock{fakeClock: fakeClock{t: start}}
	fast, _ := NewRate(RateConfig{Clock: clock})
	ref, _ := NewRate(RateConfig{Clock: &fakeClock{t: start}})
	at := time.Duration(0)
	check := func(i int, what string) {
		f, g := fast.Stats(), ref.Stats()
		for _, v := range [][2]float64{{f.Measured, g.Measured}, {f.FillRate, g.FillRate}} {
			if math.Abs(v[0]-v[1]) > max(tol*v[1], 0.5) {
				t.Fatalf("%s, response %d at %v: Done's %v, the SDK's update %v", what, i, at, f, g)
			}
		}
		if f.Enabled != g.Enabled {
			t.Fatalf("%s, response %d: Enabled %v, the SDK's %v", what, i, f.Enabled, g.Enabled)
		}
	}
	reads := clock.reads
	for i := 0; ; i++ {
		gap, overloaded, end := gaps(i, at)
		at += gap
		now := start.Add(at)
		clock.Set(now)
		ref.DoneAt(now, overloaded)
		if end {
			fast.DoneAt(now, overloaded)
			check(i, "at the end")
			return locks, calls
		}
		fast.Done(overloaded)
		calls++
		locks += clock.reads - reads
		reads = clock.reads
		if overloaded {
			check(i, "after a throttle")
		}
	}
}

// TestRateCreditTracksSDK checks Done's shortcut against the SDK's update
// at every call: at a steady high rate, at a changing one, and when the
// rate falls from high to a trickle (the case that would leave the
// measured rate stale if the credit were counted in one bucket), the
// measured and fill rates after each throttle agree within 2 %, while
// most successes skip the lock.
func TestRateCreditTracksSDK(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	for name, c := range map[string]struct {
		gaps     func(rng *rand.Rand, i int, at time.Duration) (time.Duration, bool, bool)
		maxLocks float64 // the share of Done calls that may take the lock
	}{
		"steady 5000/s, throttles at 3 s and 6 s": {
			gaps: func(rng *rand.Rand, i int, at time.Duration) (time.Duration, bool, bool) {
				gap := time.Duration(rng.ExpFloat64() * float64(200*time.Microsecond))
				return gap, (at+gap)/(3*time.Second) != at/(3*time.Second), at > 8*time.Second
			},
			maxLocks: 0.03,
		},
		"200/s to 20000/s and back, throttle every 2 s": {
			gaps: func(rng *rand.Rand, i int, at time.Duration) (time.Duration, bool, bool) {
				rate := 200 + 19800*math.Abs(math.Sin(at.Seconds()/3))
				gap := time.Duration(rng.ExpFloat64() / rate * float64(time.Second))
				return gap, (at+gap)/(2*time.Second) != at/(2*time.Second), at > 12*time.Second
			},
			maxLocks: 0.03,
		},
		"10000/s for 3 s, then 4/s, a throttle at 9 s": {
			gaps: func(rng *rand.Rand, i int, at time.Duration) (time.Duration, bool, bool) {
				rate := 10000.0
				if at > 3*time.Second {
					rate = 4
				}
				gap := time.Duration(rng.ExpFloat64() / rate * float64(time.Second))
				return gap, (at+gap)/(9*time.Second) != at/(9*time.Second), at > 10*time.Second
			},
			maxLocks: 0.03,
		},
	} {
		t.Run(name, func(t *testing.T) {
			rng := seeded(7)
			locks, calls := drive(t, start, func(i int, at time.Duration) (time.Duration, bool, bool) {
				return c.gaps(rng, i, at)
			}, 0.02)
			if share := float64(locks) / float64(calls); share > c.maxLocks {
				t.Errorf("%d of %d Done calls took the lock (%.3f), want at most %.2f", locks, calls, share, c.maxLocks)
			}
			t.Logf("%d of %d Done calls took the lock", locks, calls)
		})
	}
}

// TestRateNoCreditWhenSlow checks that below 4 responses a second every
// success takes the lock: the SDK's update, exactly, where the credit
// would save nothing worth its lateness.
func TestRateNoCreditWhenSlow(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	locks, calls := drive(t, start, func(i int, at time.Duration) (time.Duration, bool, bool) {
		return 300 * time.Millisecond, i%10 == 9, i == 200
	}, 0)
	if locks != calls {
		t.Errorf("%d of %d Done calls at 3.3/s took the lock, want all", locks, calls)
	}
}

// TestRateTokenCredit checks Admit's shortcut once the bucket is on.
// Below the fill rate most admissions skip the lock. Above it, tokens
// taken without the lock come out of the bucket at the next refill, so
// that a Rate driven by Admit and Done never admits more than one driven
// by AcquireAt and DoneAt, the SDK's bucket at every call, nor fewer by
// more than twice the credit's bound.
func TestRateTokenCredit(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	clock := &countingClock{fakeClock: fakeClock{t: start}}
	fast, _ := NewRate(RateConfig{Clock: clock, FailFast: true})
	ref, _ := NewRate(RateConfig{Clock: &fakeClock{t: start}, FailFast: true})
	// 2000 responses a second for 2 s, then a throttle: a fill rate of
	// about 1400/s, a bucket of as many tokens.
	at := time.Duration(0)
	for ; at < 2*time.Second; at += 500 * time.Microsecond {
		fast.DoneAt(start.Add(at), false)
		ref.DoneAt(start.Add(at), false)
	}
	fast.DoneAt(start.Add(at), true)
	ref.DoneAt(start.Add(at), true)
	for _, phase := range []struct {
		name     string
		gap      time.Duration
		maxLocks float64 // the share of Admit and Done calls that may lock
	}{
		{"1000/s, below the fill rate", time.Millisecond, 0.05},
		{"5000/s, above it", 200 * time.Microsecond, 1},
	} {
		var admitted, admittedRef, calls int
		reads := clock.reads
		for end := at + 2*time.Second; at < end; at += phase.gap {
			now := start.Add(at)
			clock.Set(now)
			if fast.Admit(t.Context()) == nil {
				admitted++
				fast.Done(false)
			}
			if _, ok := ref.AcquireAt(now); ok {
				admittedRef++
				ref.DoneAt(now, false)
			}
			calls++
			if fast.tokens < 0 {
				t.Fatalf("%s, at %v: %v tokens in the bucket", phase.name, at, fast.tokens)
			}
		}
		if admitted > admittedRef || admitted < admittedRef-2*maxCredit {
			t.Errorf("%s: Admit admitted %d of %d, AcquireAt %d: want no more, and no fewer than %d less",
				phase.name, admitted, calls, admittedRef, 2*maxCredit)
		}
		locks := clock.reads - reads
		if share := float64(locks) / float64(calls+admitted); share > phase.maxLocks {
			t.Errorf("%s: %d of %d Admit and Done calls took the lock (%.3f), want at most %.2f",
				phase.name, locks, calls+admitted, share, phase.maxLocks)
		}
		t.Logf("%s: admitted %d (SDK %d) of %d; %d calls took the lock", phase.name, admitted, admittedRef, calls, locks)
	}
}

// TestRateThrottleRevokesCredit checks that a throttle, which always
// takes the lock, takes back the credits it finds: after it, Admit waits
// for the tokens of the cut rate, not for the ones set aside before.
func TestRateThrottleRevokesCredit(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	clock := &fakeClock{t: start}
	r, _ := NewRate(RateConfig{Clock: clock, FailFast: true})
	at := time.Duration(0)
	for ; at < 2*time.Second; at += time.Millisecond {
		r.DoneAt(start.Add(at), false)
	}
	r.DoneAt(start.Add(at), true) // on, about 700/s
	if err := r.Admit(t.Context()); err != nil || r.tokenCredit.left.Load() == 0 {
		t.Fatalf("Admit after the first throttle: %v, credit %d; want admitted with credit left", err, r.tokenCredit.left.Load())
	}
	r.DoneAt(start.Add(at), true)
	if c := r.tokenCredit.left.Load(); c != 0 && float64(c) > r.tokens {
		t.Errorf("after a second throttle: credit %d for %v tokens", c, r.tokens)
	}
	if c := r.doneCredit.left.Load(); c > maxCredit {
		t.Errorf("done credit %d, want at most %d", c, maxCredit)
	}
}

// TestRateCreditConcurrent checks that the credits lose and invent
// nothing when cores race for them: on a clock that stands still, so that
// no token is earned, the bucket ends short by exactly the requests
// admitted, and the responses in the bucket are exactly the successes
// reported, however the calls fell between credit and lock.
func TestRateCreditConcurrent(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	clock := &fakeClock{t: start}
	r, _ := NewRate(RateConfig{Clock: clock, FailFast: true})
	at := time.Duration(0)
	for ; at < 2*time.Second; at += 500 * time.Microsecond {
		r.DoneAt(start.Add(at), false)
	}
	r.DoneAt(start.Add(at), true) // on, about 1400/s
	now := start.Add(at + 1250*time.Millisecond)
	clock.Set(now)
	r.DoneAt(now, false) // a full bucket, mid-bucket on the clock
	r.mu.Lock()
	tokens0, count0 := r.tokens, r.requestCount
	r.mu.Unlock()

	const n, each = 4, 2000
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for range each {
				if err := r.Admit(t.Context()); err == nil {
					admitted.Add(1)
					r.Done(false)
				} else if !errors.Is(err, ErrRejected) {
					t.Errorf("Admit = %v, want nil or ErrRejected", err)
				}
			}
		})
	}
	wg.Wait()
	r.mu.Lock()
	r.refill(now.UnixNano())
	r.settleDone(now.UnixNano())
	tokens, count := r.tokens, r.requestCount
	r.mu.Unlock()
	a := admitted.Load()
	if a == 0 || a == n*each {
		t.Fatalf("admitted %d of %d: want the bucket to run dry part way", a, n*each)
	}
	if tokens != tokens0-float64(a) || tokens < 0 {
		t.Errorf("the bucket holds %v tokens after %d admissions from %v, want %v", tokens, a, tokens0, tokens0-float64(a))
	}
	if count != count0+a {
		t.Errorf("%d responses in the bucket after %d successes from %d, want %d", count, a, count0, count0+a)
	}
}
