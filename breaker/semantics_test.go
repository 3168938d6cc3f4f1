package breaker

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
)

// constRand always returns u.
type constRand float64

func (r constRand) Float64() float64 { return float64(r) }

// A partial Open keeps DefaultOpen's values in its zero fields: equal
// jitter and a 1 min cap, not package backoff's full jitter and 10 s.
func TestPartialOpenTakesDefaultOpen(t *testing.T) {
	tests := []struct {
		name string
		u    float64 // the jitter's draw
		want []time.Duration
	}{
		// Equal jitter draws from [d/2, d]: a low draw gives d/2, never ~0.
		{"equal jitter", 0, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}},
		// The cap is 1 min: 2, 4, 8, 16, 32, then 60 s.
		{"a 1 min cap", 0.9999999999, []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			b := newTest(t, Config{MinCalls: -1, Open: backoff.Policy{Initial: 2 * time.Second}, Rand: constRand(tt.u)}, c)
			call(b, errBoom)
			for i, want := range tt.want {
				if got := b.Snapshot().NextProbe.Sub(c.Now()).Round(time.Millisecond); got != want {
					t.Fatalf("open period %d = %v, want %v", i+1, got, want)
				}
				c.Advance(want)
				call(b, errBoom) // the probe fails: open for longer
			}
		})
	}
}

// An invalid Open policy's error matches both ErrInvalid and
// backoff.ErrInvalid, and names the policy's field.
func TestValidateOpenMatchesBoth(t *testing.T) {
	err := Config{Open: backoff.Policy{Multiplier: 0.5}}.Validate()
	var ce *FieldError
	var fe *backoff.FieldError
	if !errors.Is(err, ErrInvalid) || !errors.Is(err, backoff.ErrInvalid) ||
		!errors.As(err, &ce) || ce.Field != "Open.Multiplier" || !errors.As(err, &fe) || fe.Field != "Multiplier" {
		t.Fatalf("Validate() = %v, want a *FieldError for Open.Multiplier matching ErrInvalid and backoff.ErrInvalid", err)
	}
	// Initial above backoff's 10 s cap is fine: Open's cap is 1 min.
	if err := (Config{Open: backoff.Policy{Initial: 30 * time.Second}}).Validate(); err != nil {
		t.Errorf("Validate() with Open.Initial 30s = %v, want nil", err)
	}
}

// State and Snapshot report the state the next call would meet, from the
// clock, before any call arrives.
func TestStateFromTheClock(t *testing.T) {
	c := newClock()
	b := newTest(t, Config{MinCalls: -1, Open: noJitter, ProbeTimeout: 3 * time.Second}, c)
	call(b, errBoom) // open for 1 s
	wantState(t, b, Open)
	c.Advance(time.Second)
	wantState(t, b, HalfOpen)
	if s := b.Snapshot(); s.State != HalfOpen || !s.NextProbe.IsZero() {
		t.Fatalf("Snapshot() after the open period = %+v, want half-open without NextProbe", s)
	}
	tk, err := b.Allow(t.Context()) // the probe, which hangs
	if err != nil {
		t.Fatal(err)
	}
	wantState(t, b, HalfOpen)
	c.Advance(3 * time.Second)
	wantState(t, b, Open) // the probe overstayed ProbeTimeout: the next call reopens
	if s := b.Snapshot(); s.State != Open || !s.NextProbe.IsZero() {
		t.Fatalf("Snapshot() after the probe's timeout = %+v, want open, NextProbe not drawn yet", s)
	}
	tk.Done(nil)
}

// countingClock counts its reads.
type countingClock struct {
	*fakeClock
	reads atomic.Int64
}

func (c *countingClock) Now() time.Time { c.reads.Add(1); return c.fakeClock.Now() }

// Reading the state from the clock costs the closed state nothing: neither
// its success path nor State reads the clock.
func TestClosedStateReadsNoClock(t *testing.T) {
	c := &countingClock{fakeClock: newClock()}
	b, err := New(Config{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	before := c.reads.Load()
	for range 10 { // fewer than the 16 successes that place pending ones in the window
		call(b, nil)
	}
	wantState(t, b, Closed)
	if n := c.reads.Load() - before; n != 0 {
		t.Errorf("10 successes and State read the clock %d times, want 0", n)
	}
}

// The fixed open period that Config.Open's doc gives for gobreaker's
// Timeout opens for exactly T at every trip, the first and each after a
// failed probe, above the default cap of 1 min too.
func TestFixedOpenPeriod(t *testing.T) {
	const period = 90 * time.Second
	c := newClock()
	b := newTest(t, Config{MinCalls: -1, Open: backoff.Policy{Initial: period, Multiplier: 1, Max: period, Jitter: backoff.NoJitter}}, c)
	call(b, errBoom) // trips
	for trip := 1; trip <= 4; trip++ {
		c.Advance(period - time.Millisecond)
		wantState(t, b, Open)
		c.Advance(time.Millisecond)
		wantState(t, b, HalfOpen)
		if !call(b, errBoom) { // the probe fails: open again, for period
			t.Fatalf("trip %d: the probe was rejected", trip)
		}
	}
}
