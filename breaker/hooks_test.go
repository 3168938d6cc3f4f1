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
