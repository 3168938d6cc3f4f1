package retry_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
)

// upper returns the longest delay p can draw before retry n.
func upper(p backoff.Policy, n int) time.Duration {
	ceiling := time.Duration(math.MaxInt64)
	if p.Max > 0 {
		ceiling = p.Max
	}
	var d float64
	switch p.Jitter {
	case backoff.DecorrelatedJitter:
		d = float64(p.Delay(1)) * math.Pow(p.EffectiveMultiplier(), float64(n))
	case backoff.ProportionalJitter:
		d = float64(p.Delay(n)) * (1 + p.EffectiveJitterFactor())
	default:
		d = float64(p.Delay(n))
	}
	if !(d < float64(ceiling)) { // also NaN: 0 × +Inf
		return ceiling
	}
	return time.Duration(math.Ceil(d))
}

// FuzzLoop checks the loop's invariants for any policy, deadline, number of
// failures, kinds of failure and random stream: never more than
// MaxAttempts attempts, each wait within the policy's bounds, or the
// error's hint floored at the policy's first delay (a rejection's hint
// exactly), never a wait ending at or past the deadline, the Budget
// told of every failure but rejections, and a reason consistent with what
// happened.
func FuzzLoop(f *testing.F) {
	f.Add(uint8(3), int64(100), 2.0, int64(0), uint8(0), int64(0), uint8(10), uint64(1), uint8(0))
	f.Add(uint8(5), int64(400), 3.0, int64(1000), uint8(4), int64(1500), uint8(2), uint64(7), uint8(0b11100100))
	f.Add(uint8(200), int64(1), 1.5, int64(50), uint8(3), int64(10_000), uint8(255), uint64(3), uint8(0b01010101))
	f.Add(uint8(0), int64(0), 0.0, int64(0), uint8(0), int64(0), uint8(3), uint64(5), uint8(0b10))
	f.Fuzz(func(t *testing.T, retries uint8, initialMs int64, mult float64, maxMs int64, jitter uint8, deadlineMs int64, failures uint8, seed uint64, kinds uint8) {
		p := backoff.Policy{
			Initial:    time.Duration(initialMs%100_000) * time.Millisecond,
			Multiplier: mult,
			Max:        time.Duration(maxMs%100_000) * time.Millisecond,
			Retries:    int(int8(retries)), // negative: no retries
			Jitter:     backoff.Jitter(jitter % 5),
		}
		if p.Validate() != nil {
			return
		}
		// Failure i is plain, rejected, hinted, or rejected with a hint,
		// by two bits of kinds.
		kind := func(i int) uint8 { return kinds >> (2 * (i % 4)) & 3 }
		hint := time.Duration(seed%5000) * time.Millisecond
		synctest.Test(t, func(t *testing.T) {
			ctx := t.Context()
			var deadline time.Time
			if deadlineMs > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Duration(deadlineMs%1_000_000)*time.Millisecond+1)
				defer cancel()
				deadline, _ = ctx.Deadline()
			}
			budget := &countingBudget{allow: true}
			start := time.Now()
			var at []time.Time
			var delays []time.Duration // as the hook saw them: the fake clock saturates after huge waits
			_, err := retry.Do(ctx, p, func(context.Context) (int, error) {
				at = append(at, time.Now())
				if len(at) > int(failures) {
					return 1, nil
				}
				switch kind(len(at) - 1) {
				case 1:
					return 0, &rejection{}
				case 2:
					return 0, hintError{hint}
				case 3:
					return 0, &rejection{hint: hint}
				}
				return 0, errFlaky
			}, retry.WithRand(rand.New(rand.NewPCG(seed, 0))), retry.WithBudget(budget),
				retry.WithOnRetry(func(e retry.Event) { delays = append(delays, e.Delay) }))
			maxAttempts := p.MaxAttempts()
			if len(at) > maxAttempts {
				t.Fatalf("%d attempts, want at most MaxAttempts = %d", len(at), maxAttempts)
			}
			if at[0] != start {
				t.Errorf("first attempt after %v, want at once", at[0].Sub(start))
			}
			for i := 1; i < len(at); i++ {
				w := at[i].Sub(at[i-1])
				if k := kind(i - 1); k >= 2 {
					want := hint // a rejection's, as it is
					if k == 2 {
						want = max(hint, p.Delay(1)) // a server's, floored at the first delay
					}
					if delays[i-1] != want || w > want {
						t.Errorf("wait before retry %d = %v (Event.Delay %v), want %v for the hint %v", i, w, delays[i-1], want, hint)
					}
				} else if hi := upper(p, i); w < 0 || w > hi {
					t.Errorf("wait before retry %d = %v, want within [0, %v]", i, w, hi)
				}
			}
			last := at[len(at)-1]
			if !deadline.IsZero() && !last.Before(deadline) {
				t.Errorf("last attempt at %v, deadline %v: waited into the deadline", last.Sub(start), deadline.Sub(start))
			}
			if time.Now() != last {
				t.Errorf("returned %v after the last attempt, want at once", time.Since(last))
			}
			failed, counted := min(len(at), int(failures)), 0
			for i := range failed {
				if kind(i)&1 == 0 {
					counted++
				}
			}
			if budget.failures != counted || budget.successes != len(at)-failed {
				t.Errorf("budget told %d failures, %d successes; want %d, %d (rejections are not counted)",
					budget.failures, budget.successes, counted, len(at)-failed)
			}
			switch {
			case len(at) > int(failures):
				if err != nil {
					t.Errorf("success on attempt %d, but err = %v", len(at), err)
				}
			case len(at) == maxAttempts:
				if !errors.Is(err, retry.ErrExhausted) {
					t.Errorf("after %d failed attempts err = %v, want ErrExhausted", len(at), err)
				}
			default:
				if !errors.Is(err, retry.ErrDeadline) {
					t.Errorf("stopped after %d of %d attempts with %v, want ErrDeadline", len(at), maxAttempts, err)
				}
			}
		})
	})
}
