package breaker

import (
	"fmt"
	"testing"
	"time"
)

// TestOnReject checks that every rejected call, and only those, reaches
// OnReject with the error the caller got, in each state that rejects.
func TestOnReject(t *testing.T) {
	c := newClock()
	var got []string
	b := newTest(t, Config{MinCalls: -1, Open: noJitter, ProbeTimeout: -1,
		OnReject: func(e *OpenError) { got = append(got, e.State.String()) }}, c)
	calls(b, 1, nil) // admitted: not a rejection
	calls(b, 1, errBoom)
	calls(b, 2, nil) // open: both rejected
	c.Advance(time.Second)
	tk, err := b.Allow(t.Context()) // the probe
	if err != nil {
		t.Fatal(err)
	}
	calls(b, 1, nil) // half-open with its probe out: rejected
	tk.Done(nil)
	b.Isolate()
	calls(b, 1, nil)
	if fmt.Sprint(got) != "[open open half-open isolated]" {
		t.Errorf("OnReject saw %v, want [open open half-open isolated]", got)
	}
}

// TestGroupConfigure checks that Configure adjusts each key's Config, so
// that a hook can tell which breaker changed.
func TestGroupConfigure(t *testing.T) {
	var changes []string
	g := &Group{Config: Config{MinCalls: -1}, Configure: func(key string, cfg *Config) {
		cfg.OnStateChange = func(ch Change) { changes = append(changes, key+":"+ch.To.String()) }
	}}
	for _, key := range []string{"a", "b", "a"} {
		br, err := g.Get(key)
		if err != nil {
			t.Fatal(err)
		}
		calls(br, 1, errBoom)
	}
	if fmt.Sprint(changes) != "[a:open b:open]" {
		t.Errorf("state changes seen = %v, want [a:open b:open]", changes)
	}
}

// TestOnStale checks that every report the breaker drops, and only those,
// reaches OnStale, with the state that admitted the call and the one the
// report found.
func TestOnStale(t *testing.T) {
	tests := []struct {
		name string
		// run admits a call, moves the breaker (or not), then reports.
		run  func(t *testing.T, b *Breaker, c *fakeClock)
		want string // the Stale values seen
	}{
		{"reported in its round", func(t *testing.T, b *Breaker, c *fakeClock) {
			tk := allow(t, b)
			tk.Done(nil)
			tk = allow(t, b)
			tk.Done(errBoom) // trips the breaker: counted, not stale
		}, "[]"},
		{"success after a trip", func(t *testing.T, b *Breaker, c *fakeClock) {
			tk := allow(t, b)
			trip(b)
			tk.Done(nil)
		}, "[{success closed open}]"},
		{"failure after a trip", func(t *testing.T, b *Breaker, c *fakeClock) {
			tk := allow(t, b)
			trip(b)
			tk.Record(Failure)
		}, "[{failure closed open}]"},
		{"after Isolate", func(t *testing.T, b *Breaker, c *fakeClock) {
			tk := allow(t, b)
			b.Isolate()
			tk.Done(nil)
		}, "[{success closed isolated}]"},
		{"probe after its timeout", func(t *testing.T, b *Breaker, c *fakeClock) {
			trip(b)
			c.Advance(time.Second)
			tk := allow(t, b) // the probe
			c.Advance(2 * time.Second)
			calls(b, 1, nil) // meets the overdue probe: a failure, and the breaker reopens
			tk.Done(nil)
		}, "[{success half-open open}]"},
		{"probe of its round", func(t *testing.T, b *Breaker, c *fakeClock) {
			trip(b)
			c.Advance(time.Second)
			allow(t, b).Done(nil) // closes the breaker: counted
		}, "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			var got []Stale
			b := newTest(t, Config{MinCalls: -1, Open: noJitter, ProbeTimeout: 2 * time.Second,
				OnStale: func(s Stale) { got = append(got, s) }}, c)
			tt.run(t, b, c)
			if s := fmt.Sprint(got); s != tt.want {
				t.Errorf("OnStale saw %v, want %v", s, tt.want)
			}
		})
	}
}

func allow(t *testing.T, b *Breaker) Ticket {
	t.Helper()
	tk, err := b.Allow(t.Context())
	if err != nil {
		t.Fatalf("Allow: %v, want a ticket", err)
	}
	return tk
}

// trip opens a breaker whose MinCalls is -1: a success, then a failure.
func trip(b *Breaker) {
	calls(b, 1, nil)
	calls(b, 1, errBoom)
}
