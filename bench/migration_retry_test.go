package bench

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"testing"
	"time"

	avast "github.com/avast/retry-go/v4"
	avast5 "github.com/avast/retry-go/v5"
	cenkalti "github.com/cenkalti/backoff/v5"
	cenkalti7 "github.com/cenkalti/backoff/v7"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
)

const (
	fromCenkalti = "From cenkalti/backoff (v5, v7)"
	fromAvast    = "From avast/retry-go (v4, v5)"
)

var errMig = errors.New("migration: attempt failed")

// counter is an operation that fails until its call number fail+1, or
// always when fail is negative, and counts its calls and their times.
type counter struct {
	fail  int
	calls int
	at    []time.Time
}

func (c *counter) op() (int, error) {
	c.calls++
	c.at = append(c.at, time.Now())
	if c.fail < 0 || c.calls <= c.fail {
		return 0, errMig
	}
	return c.calls, nil
}

func (c *counter) ctxOp(context.Context) (int, error) { return c.op() }
func (c *counter) errOp() error                       { _, err := c.op(); return err }
func (c *counter) ctxErrOp(context.Context) error     { _, err := c.op(); return err }

// waits returns the waits between the calls.
func (c *counter) waits() []time.Duration {
	var w []time.Duration
	for i := 1; i < len(c.at); i++ {
		w = append(w, c.at[i].Sub(c.at[i-1]))
	}
	return w
}

func wantCalls(t *testing.T, lib string, got, want int) {
	t.Helper()
	if got != want {
		t.Errorf("%s: %d attempts, want %d", lib, got, want)
	}
}

// retriesForAttempts is the Retries of docs/migrating.md for a peer's
// limit of n attempts, n >= 1: n−1, but NoRetries for one attempt, since
// Retries 0 means the default.
func retriesForAttempts(n int) int {
	if n == 1 {
		return backoff.NoRetries
	}
	return n - 1
}

// attemptLimiter runs an always failing operation c under a peer's limit
// of n attempts; name is a format for n.
type attemptLimiter struct {
	name string
	run  func(n int, c *counter)
}

// wantAttemptLimits checks, for each n, that each peer limited to n
// attempts and again with retriesForAttempts(n) make n attempts; and the
// trap that the rows of one attempt name: n−1 for n = 1 is Retries 0, the
// default of 3 retries, not a single attempt.
func wantAttemptLimits(t *testing.T, ns []int, peers ...attemptLimiter) {
	t.Helper()
	for _, n := range ns {
		bubble(t, func(t *testing.T) {
			for _, p := range peers {
				c := &counter{fail: -1}
				p.run(n, c)
				wantCalls(t, fmt.Sprintf(p.name, n), c.calls, n)
			}
			a := &counter{fail: -1}
			retry.Run(context.Background(), backoff.Policy{Retries: retriesForAttempts(n)}, a.ctxErrOp)
			wantCalls(t, fmt.Sprintf("again Retries: %d", retriesForAttempts(n)), a.calls, n)
		})
	}
	bubble(t, func(t *testing.T) {
		a := &counter{fail: -1}
		retry.Run(context.Background(), backoff.Policy{Retries: 0}, a.ctxErrOp)
		wantCalls(t, "again Retries: 0 (n−1 for n = 1)", a.calls, 4)
	})
}

// fixed is an again policy that waits d before each retry, exactly.
func fixed(d time.Duration, retries int) backoff.Policy {
	return backoff.Policy{Initial: d, Multiplier: 1, Max: d, Jitter: backoff.NoJitter, Retries: retries}
}

var _ = row(fromCenkalti, "the defaults: no limit on tries, stop after 15 min (`DefaultMaxElapsedTime`); 500 ms, ×1.5, ±50 % jitter", func(t *testing.T) {
	if cenkalti.DefaultMaxElapsedTime != 15*time.Minute || cenkalti7.DefaultMaxElapsedTime != 15*time.Minute {
		t.Errorf("DefaultMaxElapsedTime = %v, %v; want 15m", cenkalti.DefaultMaxElapsedTime, cenkalti7.DefaultMaxElapsedTime)
	}
	for _, b := range []struct {
		name                string
		initial, max        time.Duration
		multiplier, jitterF float64
	}{
		{"v5", cenkalti.DefaultInitialInterval, cenkalti.DefaultMaxInterval, cenkalti.DefaultMultiplier, cenkalti.DefaultRandomizationFactor},
		{"v7", cenkalti7.DefaultInitialInterval, cenkalti7.DefaultMaxInterval, cenkalti7.DefaultMultiplier, cenkalti7.DefaultRandomizationFactor},
	} {
		if b.initial != 500*time.Millisecond || b.multiplier != 1.5 || b.jitterF != 0.5 || b.max != time.Minute {
			t.Errorf("cenkalti %s defaults %v ×%v ±%v max %v, want 500ms ×1.5 ±0.5 max 1m", b.name, b.initial, b.multiplier, b.jitterF, b.max)
		}
	}
	// No limit on tries: 15 failures in a row are still retried, well
	// within 15 min of fake time.
	bubble(t, func(t *testing.T) {
		c := &counter{fail: 15}
		if _, err := cenkalti7.Retry(context.Background(), c.op); err != nil {
			t.Errorf("cenkalti v7: %v after %d attempts, want success", err, c.calls)
		}
	})
	d := backoff.Default()
	if d.Initial != 500*time.Millisecond || d.Multiplier != 2 || d.Max != 10*time.Second || d.Retries != 3 || d.Jitter != backoff.FullJitter {
		t.Errorf("backoff.Default() = %+v, want 500ms ×2 max 10s, 3 retries, full jitter", d)
	}
	bubble(t, func(t *testing.T) {
		c := &counter{fail: -1}
		retry.Do(context.Background(), backoff.Policy{}, c.ctxOp)
		wantCalls(t, "again", c.calls, 4)
	})
})

var _ = row(fromCenkalti, "`backoff.Retry(ctx, op, opts...)`", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		c5, c7, a := &counter{fail: 2}, &counter{fail: 2}, &counter{fail: 2}
		v5, err5 := cenkalti.Retry(context.Background(), c5.op)
		v7, err7 := cenkalti7.Retry(context.Background(), c7.op)
		va, erra := retry.Do(context.Background(), backoff.Policy{}, a.ctxOp)
		if v5 != 3 || v7 != 3 || va != 3 || err5 != nil || err7 != nil || erra != nil {
			t.Errorf("fail twice: cenkalti v5 %d, %v; v7 %d, %v; again %d, %v; want 3, nil", v5, err5, v7, err7, va, erra)
		}
	})
})

var _ = row(fromCenkalti, "`backoff.NewExponentialBackOff()`", func(t *testing.T) {
	// The same growth from the same first interval, once jitter is off.
	b := cenkalti7.NewExponentialBackOff()
	b.RandomizationFactor, b.Multiplier = 0, 2
	p := backoff.Default()
	p.Jitter = backoff.NoJitter
	n := 0
	for w := range p.Waits(nil) {
		n++
		if got := b.NextBackOff(); got != w {
			t.Errorf("wait %d: cenkalti %v, again %v", n, got, w)
		}
	}
	if n != 3 {
		t.Errorf("backoff.Default() has %d waits, want 3", n)
	}
})

var _ = row(fromCenkalti, "`InitialInterval`, `Multiplier`, `MaxInterval` (default 60 s)", func(t *testing.T) {
	// MaxInterval caps the interval before jitter: the waits of a grown
	// schedule reach 1.5 × MaxInterval. Max caps the wait itself.
	b := cenkalti7.NewExponentialBackOff()
	b.MaxInterval = time.Second
	p := backoff.Policy{Initial: 500 * time.Millisecond, Multiplier: 1.5, Max: time.Second, Jitter: backoff.ProportionalJitter, JitterFactor: 0.5, Retries: 200}
	var cenkaltiMax, againMax time.Duration
	for w := range p.Waits(nil) {
		cenkaltiMax = max(cenkaltiMax, b.NextBackOff())
		againMax = max(againMax, w)
	}
	if cenkaltiMax <= time.Second || cenkaltiMax > 1500*time.Millisecond {
		t.Errorf("cenkalti with MaxInterval 1s: longest of 200 waits %v, want in (1s, 1.5s]", cenkaltiMax)
	}
	if againMax > time.Second {
		t.Errorf("again with Max 1s: longest wait %v, want at most 1s", againMax)
	}
})

var _ = row(fromCenkalti, "`RandomizationFactor: f` (default 0.5: ±50 %)", func(t *testing.T) {
	const f = 0.5
	b := &cenkalti7.ExponentialBackOff{InitialInterval: time.Second, RandomizationFactor: f, Multiplier: 1, MaxInterval: time.Second}
	p := backoff.Policy{Initial: time.Second, Multiplier: 1, Max: 2 * time.Second, Jitter: backoff.ProportionalJitter, JitterFactor: f, Retries: 500}
	lo, hi := time.Duration(float64(time.Second)*(1-f)), time.Duration(float64(time.Second)*(1+f))
	var cmin, cmax, amin, amax = time.Hour, time.Duration(0), time.Hour, time.Duration(0)
	for w := range p.Waits(nil) {
		c := b.NextBackOff()
		cmin, cmax, amin, amax = min(cmin, c), max(cmax, c), min(amin, w), max(amax, w)
	}
	for _, r := range []struct {
		lib      string
		min, max time.Duration
	}{{"cenkalti", cmin, cmax}, {"again", amin, amax}} {
		// 500 draws of ±50 % cover most of [0.5 s, 1.5 s].
		if r.min < lo || r.max > hi || r.min > lo+100*time.Millisecond || r.max < hi-100*time.Millisecond {
			t.Errorf("%s: waits in [%v, %v], want spread over [%v, %v]", r.lib, r.min, r.max, lo, hi)
		}
	}
})

var _ = row(fromCenkalti, "`WithMaxTries(n)` (attempts)", func(t *testing.T) {
	wantAttemptLimits(t, []int{1, 2, 4},
		attemptLimiter{"cenkalti v5 WithMaxTries(%d)", func(n int, c *counter) { cenkalti.Retry(context.Background(), c.op, cenkalti.WithMaxTries(uint(n))) }},
		attemptLimiter{"cenkalti v7 WithMaxTries(%d)", func(n int, c *counter) { cenkalti7.Retry(context.Background(), c.op, cenkalti7.WithMaxTries(uint(n))) }})
})

var _ = row(fromCenkalti, "`WithMaxElapsedTime(d)`", func(t *testing.T) {
	// 400 ms of 20 ms waits: about 20 attempts in cenkalti's, and 4 for a
	// deadline without UntilDeadline. again keeps backoff.DeadlineReserve
	// (100 ms) for its last attempt before the deadline, which cenkalti's
	// elapsed time lets an attempt overrun: 5 attempts fewer.
	const limit, wait = 400 * time.Millisecond, 20 * time.Millisecond
	bubble(t, func(t *testing.T) {
		c5, c7 := &counter{fail: -1}, &counter{fail: -1}
		cenkalti.Retry(context.Background(), c5.op, cenkalti.WithBackOff(&cenkalti.ConstantBackOff{Interval: wait}), cenkalti.WithMaxElapsedTime(limit))
		cenkalti7.Retry(context.Background(), c7.op, cenkalti7.WithBackOff(&cenkalti7.ConstantBackOff{Interval: wait}), cenkalti7.WithMaxElapsedTime(limit))

		a := &counter{fail: -1}
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		_, err := retry.Do(ctx, fixed(wait, backoff.UntilDeadline), a.ctxOp)
		cancel()
		for _, c := range []struct {
			lib string
			n   int
		}{{"cenkalti v5", c5.calls}, {"cenkalti v7", c7.calls}} {
			reserved := int(backoff.DeadlineReserve / wait)
			if c.n < 20 || c.n > 21 || a.calls < c.n-reserved-1 || a.calls > c.n-reserved+1 {
				t.Errorf("%s: %d attempts in %v, again with UntilDeadline %d; want 20 or 21, and again within one of %d fewer", c.lib, c.n, limit, a.calls, reserved)
			}
		}
		if !errors.Is(err, retry.ErrDeadline) {
			t.Errorf("again with UntilDeadline: %v, want retry.ErrDeadline", err)
		}

		short := &counter{fail: -1}
		ctx, cancel = context.WithTimeout(context.Background(), limit)
		retry.Do(ctx, fixed(wait, 0), short.ctxOp)
		cancel()
		wantCalls(t, "again with a deadline and Retries 0", short.calls, 4)
	})
})

var _ = row(fromCenkalti, "`backoff.Permanent(err)`", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var n5, n7, na int
		_, err5 := cenkalti.Retry(context.Background(), func() (int, error) { n5++; return 0, cenkalti.Permanent(errMig) })
		_, err7 := cenkalti7.Retry(context.Background(), func() (int, error) { n7++; return 0, cenkalti7.Permanent(errMig) })
		erra := retry.Run(context.Background(), backoff.Policy{}, func(context.Context) error { na++; return retry.Permanent(errMig) })
		if n5 != 1 || n7 != 1 || na != 1 {
			t.Errorf("attempts: cenkalti v5 %d, v7 %d, again %d; want 1", n5, n7, na)
		}
		if !errors.Is(err5, errMig) || !errors.Is(err7, errMig) || !errors.Is(erra, errMig) || !errors.Is(erra, retry.ErrPermanent) {
			t.Errorf("errors %v, %v, %v: want each to match the operation's error", err5, err7, erra)
		}
	})
})

var _ = row(fromCenkalti, "`backoff.RetryAfter(seconds)` (v5), `backoff.RetryAfter(d, err)` (v7)", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var at5, at7, ata []time.Time
		cenkalti.Retry(context.Background(), func() (int, error) {
			if at5 = append(at5, time.Now()); len(at5) == 1 {
				return 0, cenkalti.RetryAfter(2)
			}
			return 1, nil
		})
		cenkalti7.Retry(context.Background(), func() (int, error) {
			if at7 = append(at7, time.Now()); len(at7) == 1 {
				return 0, cenkalti7.RetryAfter(2*time.Second, errMig)
			}
			return 1, nil
		})
		retry.Run(context.Background(), backoff.Policy{Initial: time.Millisecond}, func(context.Context) error {
			if ata = append(ata, time.Now()); len(ata) == 1 {
				return retry.After(2*time.Second, errMig)
			}
			return nil
		})
		for _, r := range []struct {
			lib string
			at  []time.Time
		}{{"cenkalti v5", at5}, {"cenkalti v7", at7}, {"again", ata}} {
			if len(r.at) != 2 || r.at[1].Sub(r.at[0]) != 2*time.Second {
				t.Errorf("%s: attempts at %v, want two, 2s apart", r.lib, r.at)
			}
		}
	})
})

var _ = row(fromCenkalti, "`WithNotify(f)`", func(t *testing.T) {
	type note struct {
		err error
		d   time.Duration
	}
	bubble(t, func(t *testing.T) {
		var got5, got7, gota []note
		f5 := func(err error, d time.Duration) { got5 = append(got5, note{err, d}) }
		f7 := func(err error, d time.Duration) { got7 = append(got7, note{err, d}) }
		fa := func(err error, d time.Duration) { gota = append(gota, note{err, d}) }
		cenkalti.Retry(context.Background(), (&counter{fail: -1}).op, cenkalti.WithBackOff(&cenkalti.ConstantBackOff{Interval: time.Second}), cenkalti.WithMaxTries(3), cenkalti.WithNotify(f5))
		cenkalti7.Retry(context.Background(), (&counter{fail: -1}).op, cenkalti7.WithBackOff(&cenkalti7.ConstantBackOff{Interval: time.Second}), cenkalti7.WithMaxTries(3), cenkalti7.WithNotify(f7))
		// The adapter of the row: WithNotify's f, unchanged.
		retry.Do(context.Background(), fixed(time.Second, 2), (&counter{fail: -1}).ctxOp, retry.WithOnRetry(func(e retry.Event) { fa(e.Err, e.Delay) }))
		want := []note{{errMig, time.Second}, {errMig, time.Second}} // before each retry, not after the last attempt
		for _, r := range []struct {
			lib string
			got []note
		}{{"cenkalti v5", got5}, {"cenkalti v7", got7}, {"again", gota}} {
			if len(r.got) != len(want) || r.got[0] != want[0] || r.got[1] != want[1] {
				t.Errorf("%s: notified %v, want %v", r.lib, r.got, want)
			}
		}
	})
})

var _ = row(fromCenkalti, "`*backoff.RetryError` (v6 and later): `LastErr`, `Cause`", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		_, err7 := cenkalti7.Retry(context.Background(), (&counter{fail: -1}).op, cenkalti7.WithMaxTries(2))
		re7 := cenkalti7.AsRetryError(err7)
		if re7 == nil || re7.LastErr != errMig || re7.Cause != cenkalti7.ErrExhausted {
			t.Errorf("cenkalti v7: %v, want a *RetryError with LastErr errMig and Cause ErrExhausted", err7)
		}
		_, erra := retry.Do(context.Background(), backoff.Policy{Retries: 1}, (&counter{fail: -1}).ctxOp)
		var re *retry.Error
		if !errors.As(erra, &re) || re.Last != errMig || re.Reason != retry.ErrExhausted {
			t.Errorf("again: %v, want a *retry.Error with Last errMig and Reason ErrExhausted", erra)
		}
	})
})

var _ = row(fromCenkalti, "`NextBackOff()`", func(t *testing.T) {
	b := &cenkalti7.ExponentialBackOff{InitialInterval: 100 * time.Millisecond, Multiplier: 2, MaxInterval: time.Second}
	p := backoff.Policy{Initial: 100 * time.Millisecond, Multiplier: 2, Max: time.Second, Jitter: backoff.NoJitter, Retries: 6}
	next, stop := iter.Pull(p.Waits(nil))
	defer stop()
	for i := 1; ; i++ {
		w, ok := next()
		if !ok {
			if i != 7 {
				t.Errorf("again: %d waits, want 6", i-1)
			}
			break
		}
		if c := b.NextBackOff(); c != w {
			t.Errorf("wait %d: cenkalti %v, again %v", i, c, w)
		}
	}
})

var _ = row(fromAvast, "the defaults: 10 attempts; 100 ms doubling, plus up to 100 ms of random delay, no cap", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		c4, c5 := &counter{fail: -1}, &counter{fail: -1}
		avast.Do(c4.errOp)
		avast5.New().Do(c5.errOp)
		for _, c := range []struct {
			lib string
			c   *counter
		}{{"retry-go v4", c4}, {"retry-go v5", c5}} {
			wantCalls(t, c.lib, c.c.calls, 10)
			for i, w := range c.c.waits() {
				base := 100 * time.Millisecond << i // no cap: 51.2 s before the 10th attempt
				if w < base || w >= base+100*time.Millisecond {
					t.Errorf("%s: wait %d %v, want in [%v, %v)", c.lib, i+1, w, base, base+100*time.Millisecond)
				}
			}
		}
		a := &counter{fail: -1}
		retry.Run(context.Background(), backoff.Default(), a.ctxErrOp)
		wantCalls(t, "again", a.calls, 4)
	})
})

var _ = row(fromAvast, "`retry.Do(f, opts...)` (v4), `retry.New(opts...).Do(f)` (v5)", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		c4, c5, a := &counter{fail: 2}, &counter{fail: 2}, &counter{fail: 2}
		err4 := avast.Do(c4.errOp)
		err5 := avast5.New().Do(c5.errOp)
		erra := retry.Run(context.Background(), backoff.Policy{}, a.ctxErrOp)
		if err4 != nil || err5 != nil || erra != nil || c4.calls != 3 || c5.calls != 3 || a.calls != 3 {
			t.Errorf("fail twice: v4 %v in %d, v5 %v in %d, again %v in %d; want success in 3", err4, c4.calls, err5, c5.calls, erra, a.calls)
		}
	})
})

var _ = row(fromAvast, "`retry.DoWithData(f, opts...)` (v4), `retry.NewWithData[T](opts...).Do(f)` (v5)", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		v4, _ := avast.DoWithData((&counter{fail: 2}).op)
		v5, _ := avast5.NewWithData[int]().Do((&counter{fail: 2}).op)
		va, _ := retry.Do(context.Background(), backoff.Policy{}, (&counter{fail: 2}).ctxOp)
		if v4 != 3 || v5 != 3 || va != 3 {
			t.Errorf("values: v4 %d, v5 %d, again %d; want 3", v4, v5, va)
		}
	})
})

var _ = row(fromAvast, "`Attempts(n)`", func(t *testing.T) {
	wantAttemptLimits(t, []int{1, 2, 5},
		attemptLimiter{"retry-go v4 Attempts(%d)", func(n int, c *counter) { avast.Do(c.errOp, avast.Attempts(uint(n)), avast.Delay(0)) }},
		attemptLimiter{"retry-go v5 Attempts(%d)", func(n int, c *counter) { avast5.New(avast5.Attempts(uint(n)), avast5.Delay(0)).Do(c.errOp) }})
})

var _ = row(fromAvast, "`Attempts(0)`, `UntilSucceeded()` (until success or `Context(ctx)` ends)", func(t *testing.T) {
	// Until success: 30 failures, far more than any default, then success.
	bubble(t, func(t *testing.T) {
		c4, c4u, c5, a := &counter{fail: 30}, &counter{fail: 30}, &counter{fail: 30}, &counter{fail: 30}
		err4 := avast.Do(c4.errOp, avast.Attempts(0), avast.Delay(time.Second), avast.DelayType(avast.FixedDelay))
		err4u := avast.Do(c4u.errOp, avast.UntilSucceeded(), avast.Delay(time.Second), avast.DelayType(avast.FixedDelay))
		err5 := avast5.New(avast5.Attempts(0), avast5.Delay(time.Second), avast5.DelayType(avast5.FixedDelay)).Do(c5.errOp)
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		erra := retry.Run(ctx, fixed(time.Second, backoff.UntilDeadline), a.ctxErrOp)
		cancel()
		for _, c := range []struct {
			lib string
			c   *counter
			err error
		}{{"retry-go v4 Attempts(0)", c4, err4}, {"retry-go v4 UntilSucceeded()", c4u, err4u}, {"retry-go v5 Attempts(0)", c5, err5}, {"again UntilDeadline, 1h deadline", a, erra}} {
			if c.err != nil || c.c.calls != 31 {
				t.Errorf("%s, 30 failures then success: %d attempts, %v; want 31, nil", c.lib, c.c.calls, c.err)
			}
		}
	})
	// Until the context ends: all retry every second until then; again
	// also shortens the wait that would end past the deadline, so that one
	// more attempt starts 100 ms (backoff.DeadlineReserve) before it.
	bubble(t, func(t *testing.T) {
		const limit = 10*time.Second + time.Second/2
		c4, c5, a := &counter{fail: -1}, &counter{fail: -1}, &counter{fail: -1}
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		avast.Do(c4.errOp, avast.Attempts(0), avast.Delay(time.Second), avast.DelayType(avast.FixedDelay), avast.Context(ctx))
		ctx5, cancel5 := context.WithTimeout(context.Background(), limit)
		defer cancel5()
		avast5.New(avast5.Attempts(0), avast5.Delay(time.Second), avast5.DelayType(avast5.FixedDelay), avast5.Context(ctx5)).Do(c5.errOp)
		ctxa, cancela := context.WithTimeout(context.Background(), limit)
		defer cancela()
		erra := retry.Run(ctxa, fixed(time.Second, backoff.UntilDeadline), a.ctxErrOp)
		wantCalls(t, "retry-go v4 Attempts(0), 10.5s context", c4.calls, 11)
		wantCalls(t, "retry-go v5 Attempts(0), 10.5s context", c5.calls, 11)
		wantCalls(t, "again UntilDeadline, 10.5s deadline", a.calls, 12)
		if !errors.Is(erra, retry.ErrDeadline) {
			t.Errorf("again UntilDeadline at the deadline: %v, want retry.ErrDeadline", erra)
		}
	})
	// No deadline: refused before the first attempt, not a loop without end.
	a := &counter{fail: -1}
	if err := retry.Run(context.Background(), fixed(time.Second, backoff.UntilDeadline), a.ctxErrOp); !errors.Is(err, retry.ErrNoDeadline) || a.calls != 0 {
		t.Errorf("again UntilDeadline without a deadline: %d attempts, %v; want 0, retry.ErrNoDeadline", a.calls, err)
	}
})

var _ = row(fromAvast, "`Delay(d)`, `MaxDelay(m)`, `DelayType(BackOffDelay)`", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		c4, c5, a := &counter{fail: -1}, &counter{fail: -1}, &counter{fail: -1}
		const d, m = 100 * time.Millisecond, 500 * time.Millisecond
		avast.Do(c4.errOp, avast.Attempts(6), avast.Delay(d), avast.MaxDelay(m), avast.DelayType(avast.BackOffDelay))
		avast5.New(avast5.Attempts(6), avast5.Delay(d), avast5.MaxDelay(m), avast5.DelayType(avast5.BackOffDelay)).Do(c5.errOp)
		retry.Run(context.Background(), backoff.Policy{Initial: d, Max: m, Multiplier: 2, Jitter: backoff.NoJitter, Retries: 5}, a.ctxErrOp)
		want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 500 * time.Millisecond, 500 * time.Millisecond}
		for _, c := range []struct {
			lib string
			c   *counter
		}{{"retry-go v4", c4}, {"retry-go v5", c5}, {"again", a}} {
			if got := c.c.waits(); !slices.Equal(got, want) {
				t.Errorf("%s: waits %v, want %v", c.lib, got, want)
			}
		}
	})
})

var _ = row(fromAvast, "`Unrecoverable(err)`", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var n4, n5, na int
		err4 := avast.Do(func() error { n4++; return avast.Unrecoverable(errMig) })
		err5 := avast5.New().Do(func() error { n5++; return avast5.Unrecoverable(errMig) })
		erra := retry.Run(context.Background(), backoff.Policy{}, func(context.Context) error { na++; return retry.Permanent(errMig) })
		if n4 != 1 || n5 != 1 || na != 1 || !errors.Is(err4, errMig) || !errors.Is(err5, errMig) || !errors.Is(erra, errMig) {
			t.Errorf("v4 %v in %d, v5 %v in %d, again %v in %d; want errMig after 1 attempt", err4, n4, err5, n5, erra, na)
		}
	})
})

var _ = row(fromAvast, "`RetryIf(f)`", func(t *testing.T) {
	errFatal := errors.New("fatal")
	retryable := func(err error) bool { return !errors.Is(err, errFatal) }
	bubble(t, func(t *testing.T) {
		var n4, n5, na int
		avast.Do(func() error { n4++; return errFatal }, avast.RetryIf(retryable))
		avast5.New(avast5.RetryIf(retryable)).Do(func() error { n5++; return errFatal })
		retry.Run(context.Background(), backoff.Policy{}, func(context.Context) error { na++; return errFatal }, retry.WithClassifier(retryable))
		if n4 != 1 || n5 != 1 || na != 1 {
			t.Errorf("attempts of an error the rule rejects: v4 %d, v5 %d, again %d; want 1", n4, n5, na)
		}
	})
})

var _ = row(fromAvast, "`OnRetry(func(n uint, err error))` (n from 0, after every failed attempt, the last included)", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var got4, got5 []uint
		var gota []int
		avast.Do((&counter{fail: -1}).errOp, avast.Attempts(3), avast.OnRetry(func(n uint, _ error) { got4 = append(got4, n) }))
		avast5.New(avast5.Attempts(3), avast5.OnRetry(func(n uint, _ error) { got5 = append(got5, n) })).Do((&counter{fail: -1}).errOp)
		retry.Run(context.Background(), backoff.Policy{Retries: 2}, (&counter{fail: -1}).ctxErrOp, retry.WithOnRetry(func(e retry.Event) { gota = append(gota, e.Attempt) }))
		for _, g := range [][]uint{got4, got5} {
			if len(g) != 3 || g[0] != 0 || g[2] != 2 {
				t.Errorf("retry-go OnRetry over 3 failed attempts: %v, want [0 1 2]", g)
			}
		}
		if len(gota) != 2 || gota[0] != 1 || gota[1] != 2 {
			t.Errorf("again OnRetry over 3 failed attempts: %v, want [1 2]", gota)
		}
	})
})

var _ = row(fromAvast, "`Context(ctx)`", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		defer cancel()
		c4, c5, a := &counter{fail: -1}, &counter{fail: -1}, &counter{fail: -1}
		err4 := avast.Do(c4.errOp, avast.Context(ctx), avast.Delay(100*time.Millisecond), avast.DelayType(avast.FixedDelay))
		ctx5, cancel5 := context.WithTimeout(context.Background(), 150*time.Millisecond)
		defer cancel5()
		err5 := avast5.New(avast5.Context(ctx5), avast5.Delay(100*time.Millisecond), avast5.DelayType(avast5.FixedDelay)).Do(c5.errOp)
		ctxa, cancela := context.WithTimeout(context.Background(), 150*time.Millisecond)
		defer cancela()
		erra := retry.Run(ctxa, fixed(100*time.Millisecond, 9), a.ctxErrOp)
		// Each stops at the deadline: again before the wait it cannot finish.
		if !errors.Is(err4, context.DeadlineExceeded) || !errors.Is(err5, context.DeadlineExceeded) || !errors.Is(erra, context.DeadlineExceeded) {
			t.Errorf("errors %v, %v, %v: want each to match context.DeadlineExceeded", err4, err5, erra)
		}
		wantCalls(t, "retry-go v4", c4.calls, 2)
		wantCalls(t, "retry-go v5", c5.calls, 2)
		wantCalls(t, "again", a.calls, 2)
	})
})

var _ = row(fromAvast, "`WithFixedTokenBucketThrottle(cfg)` (v5.1)", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		// A bucket with room for one retry: the first call retries once,
		// the second gets no retry.
		throttle := avast5.NewFixedTokenBucketThrottle(avast5.FixedTokenBucketThrottleConfig{MaxCapacity: 5, ThrottleCost: 5})
		r := avast5.New(avast5.Attempts(3), avast5.Delay(0), avast5.WithThrottle(throttle))
		first, second := &counter{fail: -1}, &counter{fail: -1}
		r.Do(first.errOp)
		err5 := r.Do(second.errOp)
		if first.calls != 2 || second.calls != 1 || !errors.Is(err5, avast5.ErrThrottled) {
			t.Errorf("retry-go v5: %d then %d attempts, %v; want 2, 1 and ErrThrottled", first.calls, second.calls, err5)
		}
		bucket := &retry.TokenBucket{MaxTokens: 2, TokenRatio: 0.1}
		af, as := &counter{fail: -1}, &counter{fail: -1}
		retry.Run(context.Background(), backoff.Policy{Initial: -1, Retries: 2}, af.ctxErrOp, retry.WithBudget(bucket))
		erra := retry.Run(context.Background(), backoff.Policy{Initial: -1, Retries: 2}, as.ctxErrOp, retry.WithBudget(bucket))
		if af.calls >= 3 || as.calls != 1 || !errors.Is(erra, retry.ErrBudget) {
			t.Errorf("again: %d then %d attempts, %v; want fewer than 3, 1 and ErrBudget", af.calls, as.calls, erra)
		}
	})
})

var _ = row(fromAvast, "`retry.Error`, every attempt's error", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		err4 := avast.Do((&counter{fail: -1}).errOp, avast.Attempts(3), avast.Delay(0))
		err5 := avast5.New(avast5.Attempts(3), avast5.Delay(0)).Do((&counter{fail: -1}).errOp)
		var e4 avast.Error
		var e5 avast5.Error
		if !errors.As(err4, &e4) || len(e4.WrappedErrors()) != 3 || !errors.As(err5, &e5) || len(e5.WrappedErrors()) != 3 {
			t.Errorf("retry-go: %v, %v; want a retry.Error of 3 errors", err4, err5)
		}
		erra := retry.Run(context.Background(), backoff.Policy{Initial: -1, Retries: 2}, (&counter{fail: -1}).ctxErrOp)
		var re *retry.Error
		if !errors.As(erra, &re) || re.Last != errMig || re.Attempts != 3 || re.Reason != retry.ErrExhausted {
			t.Errorf("again: %v, want a *retry.Error with Last errMig, 3 attempts, ErrExhausted", erra)
		}
	})
})
