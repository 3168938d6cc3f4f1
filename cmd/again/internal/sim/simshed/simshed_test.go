package simshed

import (
	"errors"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/cmd/again/internal/sim"
	"github.com/again-go/again/limiter"
)

func TestCheck(t *testing.T) {
	for _, tt := range []struct {
		c  Config
		ok bool
	}{
		{Config{}, true}, {Config{Limit: MaxLimit}, true}, {Config{Adaptive: limiter.Gradient2{Min: 1}}, true},
		{Config{Limit: -1}, false}, {Config{Limit: MaxLimit + 1}, false},
	} {
		if err := tt.c.Check(); (err == nil) != tt.ok || (err != nil && !errors.Is(err, sim.ErrInvalid)) {
			t.Errorf("%+v.Check() = %v, want ok %v (or an ErrInvalid)", tt.c, err, tt.ok)
		}
	}
	if (Config{}).On() || !(Config{Limit: 1}).On() || !(Config{Adaptive: limiter.AIMD{}}).On() {
		t.Errorf("On: the zero Config sheds, or a limit does not")
	}
}

// The clients wait a server's Retry-After as package retry does: never
// less than the policy's first delay; and the server sends it in whole
// seconds, rounded, at least 1.
func TestHints(t *testing.T) {
	p := backoff.Policy{Initial: 1500 * time.Millisecond}
	for _, tt := range []struct{ hint, want time.Duration }{{0, 1500 * time.Millisecond}, {time.Second, 1500 * time.Millisecond}, {2 * time.Second, 2 * time.Second}} {
		if got := HintFloor(tt.hint, p); got != tt.want {
			t.Errorf("HintFloor(%v, initial 1.5s) = %v, want %v", tt.hint, got, tt.want)
		}
	}
	var clock sim.VirtualClock
	for _, tt := range []struct {
		draw float64
		want time.Duration
	}{{0, time.Second}, {0.4, time.Second}, {0.6, 2 * time.Second}, {0.99, 2 * time.Second}} {
		core := New(Config{Limit: 1}, &clock, fixed(tt.draw), nil, nil)
		if got := Hint(core, &clock); got != tt.want {
			t.Errorf("Hint at rest with draw %v = %v, want %v", tt.draw, got, tt.want)
		}
	}
}

type fixed float64

func (f fixed) Float64() float64 { return float64(f) }
