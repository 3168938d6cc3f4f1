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

// When the first copy answers before the delay, being ready to hedge costs
// one allocation: the first copy's context. The copy's goroutine, the
// channel the copies answer on and the timer are reused from earlier
// attempts; the context is not, since code an Op calls may keep it after
// the Op returned (net/http does, for a connection it goes on dialing),
// and must not then find another attempt's values in it. What an Op does
// with its context is its own cost, stated on Attempt: waiting on
// ctx.Done() makes the channel. Under the race detector sync.Pool drops
// what it is given now and then, on purpose, so the counts are only
// checked without it.
func TestAllocsFirstAnswers(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops pooled objects at random")
	}
	canceled, cancel := context.WithCancel(context.Background())
	defer cancel()
	tests := []struct {
		name string
		ctx  context.Context
		op   func(context.Context, int) (int, error)
		want float64
	}{
		{"an Op that ignores ctx", context.Background(), answer, 1},
		{"a parent that can be canceled", canceled, answer, 1},
		{"an Op that asks for ctx.Done()", context.Background(), func(ctx context.Context, _ int) (int, error) {
			_ = ctx.Done()
			return 1, nil
		}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &hedge.Hedger{After: time.Hour, MaxHedges: 2}
			got := testing.AllocsPerRun(100, func() {
				if r := hedge.Attempt(tt.ctx, h, hedge.Call[int]{Key: "k", Op: tt.op}); r.Err != nil {
					t.Fatal(r.Err)
				}
			})
			if got > tt.want {
				t.Errorf("allocations = %v, want at most %v", got, tt.want)
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
