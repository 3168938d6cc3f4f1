package admission

import (
	"testing"
	"time"
)

func TestCodel(t *testing.T) {
	const ms = time.Millisecond
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type obs struct {
		at, delay  time.Duration
		drop, over bool // want: dropped, overloaded after it
	}
	tests := []struct {
		name string
		obs  []obs
	}{
		{"a short queue is never overloaded", []obs{
			{0, 1 * ms, false, false}, {50 * ms, 4 * ms, false, false},
			{100 * ms, 3 * ms, false, false}, {150 * ms, 50 * ms, false, false},
		}},
		{"a burst whose minimum stays under target is not overload", []obs{
			{0, 40 * ms, false, false}, {10 * ms, 30 * ms, false, false}, {20 * ms, 2 * ms, false, false},
			{101 * ms, 40 * ms, false, false}, {102 * ms, 40 * ms, false, false},
		}},
		{"a standing queue is overloaded at the next interval, and sloughs over 2x target", []obs{
			{0, 6 * ms, false, false}, {50 * ms, 20 * ms, false, false}, // minimum 6ms > 5ms
			{100 * ms, 30 * ms, false, true}, // the interval's first: judged, never dropped
			{101 * ms, 11 * ms, true, true},  // > 10ms
			{102 * ms, 10 * ms, false, true}, // not > 10ms
			{103 * ms, 1 * ms, false, true},  // the new interval's minimum is 1ms
			{200 * ms, 30 * ms, false, false},
			{201 * ms, 30 * ms, false, false},
		}},
		{"an interval with no sample ends the overload", []obs{
			{0, 6 * ms, false, false},
			{100 * ms, 8 * ms, false, true},
			{300 * ms, 30 * ms, false, false},
			{301 * ms, 30 * ms, false, false},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := codel{target: 5 * ms, interval: 100 * ms}
			for i, o := range tt.obs {
				now := t0.Add(o.at)
				first := c.observe(now, o.delay)
				if got := !first && c.sloughs(now, o.delay); got != o.drop {
					t.Errorf("observation %d at t+%v: dropped a request that waited %v = %v, want %v", i, o.at, o.delay, got, o.drop)
				}
				if got := c.isOverloaded(now); got != o.over {
					t.Errorf("observation %d: isOverloaded(t+%v) = %v, want %v", i, o.at, got, o.over)
				}
			}
		})
	}
}

func TestCodelIdleEndsOverloadAndLoad(t *testing.T) {
	const ms = time.Millisecond
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := codel{target: 5 * ms, interval: 100 * ms}
	if got := c.load(t0); got != 0 {
		t.Errorf("load before any observation = %v, want 0", got)
	}
	c.observe(t0, 8*ms)
	c.observe(t0.Add(100*ms), 20*ms)
	if !c.isOverloaded(t0.Add(150 * ms)) {
		t.Fatalf("isOverloaded(t+150ms) = false after a 100ms interval with minimum 8ms, want true")
	}
	if got := c.load(t0.Add(150 * ms)); got != 1 {
		t.Errorf("load(t+150ms) with minimum 20ms = %v, want 1 (capped)", got)
	}
	if !c.sloughs(t0.Add(150*ms), 11*ms) || c.sloughs(t0.Add(150*ms), 10*ms) {
		t.Errorf("sloughs(11ms), sloughs(10ms) = %v, %v while overloaded, want true, false",
			c.sloughs(t0.Add(150*ms), 11*ms), c.sloughs(t0.Add(150*ms), 10*ms))
	}
	// The interval ended at t+200ms; nothing left the queue until t+300ms.
	if c.isOverloaded(t0.Add(300 * ms)) {
		t.Errorf("isOverloaded(t+300ms) = true after an interval without requests, want false")
	}
	if got := c.load(t0.Add(300 * ms)); got != 0 {
		t.Errorf("load(t+300ms) after an idle interval = %v, want 0", got)
	}
}
