package hedge_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/hedge"
	"github.com/again-go/again/retry"
)

// countingBudget is a TokenBucket that counts the hedges it granted.
type countingBudget struct {
	retry.TokenBucket
	mu      sync.Mutex
	granted int
}

func (b *countingBudget) Take() bool {
	ok := b.TokenBucket.Take()
	if ok {
		b.mu.Lock()
		b.granted++
		b.mu.Unlock()
	}
	return ok
}

// FuzzAttempts checks hedges × retries × budget × breaker × cancellation:
// whatever the copies answer and when, every copy has returned when the
// call does; every value that succeeded is either returned or discarded,
// exactly once; no attempt sends more than MaxHedges hedges, nor more than
// the budget granted, nor any while the breaker is open; the call fails
// with one *retry.Error; and it ends at the caller's deadline at the latest.
func FuzzAttempts(f *testing.F) {
	f.Add(uint8(1), uint8(0), uint8(3), uint16(10), uint16(0), []byte{200, 5, 0x40, 1})
	f.Add(uint8(3), uint8(2), uint8(4), uint16(5), uint16(30), []byte{1, 1, 2, 2, 3, 0x83})
	f.Add(uint8(2), uint8(1), uint8(0), uint16(1), uint16(7), []byte{0xff, 0x10, 0x20, 0x30})
	f.Add(uint8(0), uint8(3), uint8(255), uint16(3), uint16(0), []byte{})
	f.Fuzz(func(t *testing.T, maxHedges, retries, tokens uint8, afterMs, deadlineMs uint16, script []byte) {
		synctest.Test(t, func(t *testing.T) {
			budget := &countingBudget{TokenBucket: retry.TokenBucket{MaxTokens: float64(tokens%8 + 1)}}
			open := tokens&0x80 != 0 // the breaker
			h := &hedge.Hedger{
				After:     time.Duration(afterMs%50+1) * time.Millisecond,
				MaxHedges: int(maxHedges%5) - 1, // -1: none
				Budget:    budget,
				Allow:     func(string) bool { return !open },
			}
			ctx := t.Context()
			var deadline time.Time
			if deadlineMs > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Duration(deadlineMs%200)*time.Millisecond)
				defer cancel()
				deadline, _ = ctx.Deadline()
			}
			// Copy i answers after script[i]'s low 6 bits in ms, with
			// success, a retryable failure, a permanent one or a pushback
			// by its top 2 bits; copies past the script answer at once.
			var (
				mu        sync.Mutex
				next      int
				running   int
				succeeded = map[int]bool{} // values of successful copies, not yet accounted for
			)
			op := func(ctx context.Context, n int) (int, error) {
				mu.Lock()
				i := next
				next++
				running++
				mu.Unlock()
				defer func() { mu.Lock(); running--; mu.Unlock() }()
				var b byte
				if i < len(script) {
					b = script[i]
				}
				select {
				case <-time.After(time.Duration(b&0x3f) * time.Millisecond):
				case <-ctx.Done():
					return 0, ctx.Err()
				}
				switch b >> 6 {
				case 1:
					return 0, errFlaky
				case 2:
					return 0, retry.Permanent(errFatal)
				case 3:
					return 0, retry.After(time.Millisecond, errFlaky)
				}
				mu.Lock()
				succeeded[i] = true
				mu.Unlock()
				return i, nil
			}
			discard := func(v int) {
				mu.Lock()
				defer mu.Unlock()
				if !succeeded[v] {
					t.Errorf("value %d discarded twice, or never succeeded", v)
				}
				delete(succeeded, v)
			}

			l, err := retry.NewLoop(ctx, backoff.Policy{Initial: time.Millisecond, Retries: int(retries % 4)})
			if err != nil {
				if !errors.Is(err, retry.ErrCanceled) {
					t.Fatal(err)
				}
				return
			}
			hedges := 0
			for {
				r := hedge.Attempt(ctx, h, hedge.Call[int]{Attempt: l.Attempts() + 1, Op: op, Discard: discard})
				mu.Lock()
				if running != 0 {
					t.Errorf("%d copies still running after Attempt returned", running)
				}
				mu.Unlock()
				allowed := max(h.MaxHedges, 0)
				if h.MaxHedges == 0 {
					allowed = 1
				}
				if r.Hedges > allowed {
					t.Errorf("%d hedges in one attempt; MaxHedges is %d", r.Hedges, h.MaxHedges)
				}
				if open && r.Hedges > 0 {
					t.Errorf("%d hedges sent with the breaker open", r.Hedges)
				}
				hedges += r.Hedges
				if r.Err == nil {
					mu.Lock()
					if !succeeded[r.Value] {
						t.Errorf("value %d returned, but it did not succeed or was discarded", r.Value)
					}
					delete(succeeded, r.Value)
					mu.Unlock()
					l.Succeeded()
					break
				}
				if err := l.Failed(ctx, r.Err); err != nil {
					var re *retry.Error
					if !errors.As(err, &re) {
						t.Errorf("the call failed with %v, not a *retry.Error", err)
					}
					break
				}
			}
			if len(succeeded) != 0 {
				t.Errorf("successful values %v neither returned nor discarded", succeeded)
			}
			if hedges != budget.granted {
				t.Errorf("%d hedges sent, %d granted by the budget", hedges, budget.granted)
			}
			if !deadline.IsZero() && time.Now().After(deadline) {
				t.Errorf("the call ended %v after its deadline", time.Since(deadline))
			}
		})
	})
}
