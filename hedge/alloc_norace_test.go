//go:build !race

// The race detector's sync.Pool drops some of what it is given, on
// purpose, so pooled objects are allocated again now and then: these
// counts hold only without it. scripts/test runs them in a step of their
// own (go test -run Alloc, without -race).

package hedge_test

import (
	"context"
	"testing"
	"time"

	"github.com/again-go/again/hedge"
)

// When the first copy answers before the delay, being ready to hedge costs
// one allocation: the first copy's context. The copy's goroutine, the
// channel the copies answer on and the timer are reused from earlier
// attempts; the context is not, since code an Op calls may keep it after
// the Op returned (net/http does, for a connection it goes on dialing),
// and must not then find another attempt's values in it. What an Op does
// with its context is its own cost, stated on Attempt: waiting on
// ctx.Done() makes the channel.
func TestAllocsFirstAnswers(t *testing.T) {
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
