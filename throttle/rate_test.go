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
