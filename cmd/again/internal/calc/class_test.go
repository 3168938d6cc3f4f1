package calc

import (
	"testing"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
)

// TestClassPolicy checks the schedule a class's failures follow: its own
// policy with its zero fields spelled out, and no more retries than its
// own cap or the call's.
func TestClassPolicy(t *testing.T) {
	tests := []struct {
		name    string
		class   backoff.Policy
		call    backoff.Policy
		retries int // the class's retries within the call
		initial time.Duration
		max     time.Duration
	}{
		{"the call's cap first", backoff.Policy{Initial: time.Second, Retries: 6}, backoff.Policy{Retries: 4}, 4, time.Second, 10 * time.Second},
		{"the class's cap first", backoff.Policy{Initial: time.Second, Max: time.Minute, Retries: 2}, backoff.Policy{Retries: 8}, 2, time.Second, time.Minute},
		{"zero fields are the defaults", backoff.Policy{}, backoff.Policy{}, 3, 500 * time.Millisecond, 10 * time.Second},
		{"a call without retries", backoff.Policy{Retries: 5}, backoff.Policy{Retries: backoff.NoRetries}, 0, 500 * time.Millisecond, 10 * time.Second},
		{"a class without retries", backoff.Policy{Retries: backoff.NoRetries}, backoff.Policy{Retries: 5}, 0, 500 * time.Millisecond, 10 * time.Second},
	}
	for _, tt := range tests {
		p := ClassPolicy(retry.Class{Policy: tt.class}, tt.call)
		if got := p.MaxAttempts() - 1; got != tt.retries || p.Initial != tt.initial || p.Max != tt.max {
			t.Errorf("%s: ClassPolicy = %d retries, initial %v, max %v; want %d, %v, %v", tt.name, got, p.Initial, p.Max, tt.retries, tt.initial, tt.max)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("%s: ClassPolicy is invalid: %v", tt.name, err)
		}
	}
}

// TestComputeClasses checks that each class's report is the analysis of
// its ClassPolicy, with the cost's zero meaning 1, and that a report
// without classes has none.
func TestComputeClasses(t *testing.T) {
	in, err := Parse(Values{FieldRetries: "4", FieldJitter: "none"})
	if err != nil {
		t.Fatal(err)
	}
	in.Classes = retry.AWSClasses()
	in.Classes = append(in.Classes, retry.Class{Name: "own", Policy: backoff.Policy{Initial: time.Second, Jitter: backoff.NoJitter, Retries: 1}})
	rep, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Classes) != 3 {
		t.Fatalf("Compute: %d classes, want 3", len(rep.Classes))
	}
	for i, c := range rep.Classes {
		want := ClassPolicy(in.Classes[i], in.Policy)
		if len(c.Retries) != want.MaxAttempts()-1 || c.Name != in.Classes[i].Name {
			t.Errorf("class %d (%s): %d rows, want %d", i, c.Name, len(c.Retries), want.MaxAttempts()-1)
		}
	}
	if c := rep.Classes[0]; c.Cost != 5 || c.CallCapped != (c.Policy.Retries > 4) {
		t.Errorf("throttling: cost %v, call_capped %v with its own %d retries; want 5, and capped only above the call's 4", c.Cost, c.CallCapped, c.Policy.Retries)
	}
	if c := rep.Classes[2]; c.Cost != 1 || c.CallCapped || c.Total.Max != Millis(time.Second) {
		t.Errorf("own class: cost %v, call_capped %v, total max %v; want 1, false, 1 s", c.Cost, c.CallCapped, c.Total.Max)
	}
	in.Classes = nil
	if rep, _ := Compute(in); rep.Classes != nil {
		t.Errorf("Compute without classes: %d classes", len(rep.Classes))
	}
}
