package hedge_test

import (
	"context"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/hedge"
)

func answer(context.Context, int) (int, error) { return 1, nil }

// Where no hedge can be sent (hedging off, or a key still warming up), an
// attempt costs nothing: it runs on the calling goroutine.
func TestAllocsNotHedged(t *testing.T) {
	ctx := context.Background()
	for name, h := range map[string]*hedge.Hedger{
		"off":     {After: -1},
		"warm-up": {Warmup: 200},
	} {
		t.Run(name, func(t *testing.T) {
			got := testing.AllocsPerRun(100, func() {
				if r := hedge.Attempt(ctx, h, hedge.Call[int]{Key: "k", Op: answer}); r.Err != nil {
					t.Fatal(r.Err)
				}
			})
			if got != 0 {
				t.Errorf("allocations = %v, want 0", got)
			}
		})
	}
}

func BenchmarkAttempt(b *testing.B) {
	ctx := context.Background()
	b.Run("not hedged", func(b *testing.B) {
		b.ReportAllocs()
		h := &hedge.Hedger{After: -1}
		for b.Loop() {
			hedge.Attempt(ctx, h, hedge.Call[int]{Op: answer})
		}
	})
	b.Run("first answers before the delay", func(b *testing.B) {
		b.ReportAllocs()
		h := &hedge.Hedger{After: time.Hour}
		for b.Loop() {
			hedge.Attempt(ctx, h, hedge.Call[int]{Op: answer})
		}
	})
	b.Run("Do, first answers", func(b *testing.B) {
		b.ReportAllocs()
		h := &hedge.Hedger{After: time.Hour}
		op := func(context.Context) (int, error) { return 1, nil }
		for b.Loop() {
			_, _ = hedge.Do(ctx, backoff.Policy{}, h, "k", op)
		}
	})
}
