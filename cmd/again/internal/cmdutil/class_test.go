package cmdutil

import (
	"context"
	"errors"
	"maps"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
)

func TestParseClass(t *testing.T) {
	tests := []struct {
		spec    string
		initial time.Duration
		max     time.Duration
		retries int
		cost    float64
		err     string // a part of the usage error; "" for none
	}{
		{spec: "initial=1s,max=30s", initial: time.Second, max: 30 * time.Second, retries: 3, cost: 1},
		{spec: " initial = 50ms , retries=2", initial: 50 * time.Millisecond, max: 10 * time.Second, retries: 2, cost: 1},
		{spec: "initial=1s,max=0", initial: time.Second, max: backoff.NoCap, retries: 3, cost: 1},
		{spec: "initial=1s,max=30s,retries=3,cost=5", initial: time.Second, max: 30 * time.Second, retries: 3, cost: 5},
		{spec: "cost = 0.5", initial: 500 * time.Millisecond, max: 10 * time.Second, retries: 3, cost: 0.5},
		{spec: "cost=0.001", initial: 500 * time.Millisecond, max: 10 * time.Second, retries: 3, cost: 0.001},
		{spec: "cost=0", err: `--on-overload cost "0": want a number from 0.001 up (the budget counts thousandths of a token)`},
		{spec: "cost=0.0009", err: `cost "0.0009": want a number from 0.001 up`},
		{spec: "cost=-5", err: `cost "-5": want`},
		{spec: "cost=NaN", err: `cost "NaN": want`},
		{spec: "cost=Inf", err: `cost "Inf": want`},
		{spec: "cost=five", err: `cost "five": want`},
		{spec: "cost=", err: `cost "": want`},
		{spec: "cost=1,cost=2", err: "cost twice"},
		{spec: "speed=1", err: "keys initial, multiplier, max, retries, jitter, cost"},
		{spec: "1s", err: `--on-overload "1s": want key=value pairs`},
		{spec: "initial=1s,initial=2s", err: "initial twice"},
		{spec: "multiplier=0.5", err: `--on-overload multiplier "0.5": want a finite number >= 1`},
		// The policy flags' rules: a unit, and no first delay above the cap.
		{spec: "initial=500", err: `--on-overload initial "500": want a duration with a unit, such as 500s or 500ms`},
		{spec: "max=30", err: `--on-overload max "30": want a duration with a unit`},
		{spec: "initial=5s,max=1s", err: "initial 5s is above max 1s"},
	}
	for _, tt := range tests {
		c, err := ParseClass("on-overload", tt.spec)
		if tt.err != "" {
			var ee *ExitError
			if !errors.As(err, &ee) || ee.Code != ExitUsage || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseClass(%q) = %v, want a usage error containing %q", tt.spec, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseClass(%q): %v", tt.spec, err)
			continue
		}
		if c.Policy.Delay(1) != tt.initial || c.Policy.MaxAttempts() != tt.retries+1 || c.Cost != tt.cost {
			t.Errorf("ParseClass(%q) = first delay %v, %d attempts, cost %v; want %v, %d, %v", tt.spec, c.Policy.Delay(1), c.Policy.MaxAttempts(), c.Cost, tt.initial, tt.retries+1, tt.cost)
		}
		if tt.max != backoff.NoCap && c.Policy.Delay(20) != tt.max {
			t.Errorf("ParseClass(%q): Delay(20) = %v, want the cap %v", tt.spec, c.Policy.Delay(20), tt.max)
		}
	}
}

// FuzzParseClass checks that any spec is either a usage error or a class
// with a valid policy and a cost the budget charges (at least a thousandth
// of a token, finite; 1 unless the spec gives one), which retry accepts.
func FuzzParseClass(f *testing.F) {
	for _, s := range []string{"initial=1s,max=30s", "retries=2", "jitter=proportional:0.5", "x", "initial=", ",,", "max=1e400",
		"cost=5", "initial=1s,cost=0.5", "cost=0", "cost=1e400", "cost=-0", "cost=0x1p-10", "cost=NaN,retries=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		c, err := ParseClass("on-overload", spec)
		if err != nil {
			var ee *ExitError
			if !errors.As(err, &ee) || ee.Code != ExitUsage {
				t.Fatalf("ParseClass(%q) = %v, want a usage error", spec, err)
			}
			return
		}
		if err := c.Policy.Validate(); err != nil {
			t.Fatalf("ParseClass(%q) = %+v: policy %v", spec, c, err)
		}
		if !(c.Cost >= MinCost) || math.IsInf(c.Cost, 1) || (!strings.Contains(spec, "cost") && c.Cost != 1) {
			t.Fatalf("ParseClass(%q): cost %v, want a finite number >= %v (1 if not given)", spec, c.Cost, MinCost)
		}
		// retry takes the class as it is: no invalid configuration.
		if _, err := retry.Do(context.Background(), backoff.Policy{Retries: -1}, func(context.Context) (int, error) { return 1, nil }, retry.WithClasses(c)); err != nil {
			t.Fatalf("ParseClass(%q) = %+v, which retry.Do refuses: %v", spec, c, err)
		}
	})
}

// TestClassParseTimed: a call that retries until its --deadline retries
// each class until it too, unless the class's spec gives its retries.
func TestClassParseTimed(t *testing.T) {
	for _, tc := range []struct {
		name        string
		callRetries int
		args        []string
		want        map[string]int // class name: its Policy.Retries
	}{
		{"until the deadline, no retries in the specs", backoff.UntilDeadline,
			[]string{"--on-overload", "initial=5s", "--on-transient", "max=1s"},
			map[string]int{"overload": backoff.UntilDeadline, "transient": backoff.UntilDeadline}},
		{"until the deadline, a spec's own retries kept", backoff.UntilDeadline,
			[]string{"--on-overload", "initial=5s,retries=2", "--on-transient", "max=1s"},
			map[string]int{"overload": 2, "transient": backoff.UntilDeadline}},
		{"a call with --retries: the spec's default, as Parse", 5,
			[]string{"--on-overload", "initial=5s"},
			map[string]int{"overload": 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			f := AddClassFlags(fs, "overloads", "others")
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			cs, err := f.ParseTimed(backoff.Policy{Retries: tc.callRetries})
			if err != nil {
				t.Fatalf("ParseTimed(%v) = %v", tc.args, err)
			}
			got := map[string]int{}
			for _, c := range cs {
				got[c.Name] = c.Policy.Retries
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("ParseTimed(%v) retries by class = %v, want %v", tc.args, got, tc.want)
			}
		})
	}
}
