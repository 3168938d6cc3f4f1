package retry_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
)

// overloaded is an error that says the server is overloaded, as a 429 or
// RESOURCE_EXHAUSTED does (see retry.IsOverload).
type overloaded struct{}

func (overloaded) Error() string  { return "overloaded" }
func (overloaded) Overload() bool { return true }

var (
	errOverload = overloaded{}
	errReset    = errors.New("connection reset")
	// slow and fast are the two classes of the tests: overloads wait 1 s,
	// then 2 s; other failures 10 ms, then 20 ms.
	slow = retry.Class{Name: "overload", Match: retry.IsOverload, Cost: 3,
		Policy: backoff.Policy{Initial: time.Second, Max: time.Minute, Retries: 2, Jitter: backoff.NoJitter}}
	fast = retry.Class{Name: "transient",
		Policy: backoff.Policy{Initial: 10 * time.Millisecond, Max: time.Minute, Retries: 5, Jitter: backoff.NoJitter}}
)

// TestClasses checks that each class of failure waits on its own schedule,
// counts its own failures against its own cap, and that the call's policy
// still caps every attempt and waits for the failures no class matches.
func TestClasses(t *testing.T) {
	wide := backoff.Policy{Initial: 100 * time.Millisecond, Multiplier: 2, Retries: 10, Jitter: backoff.NoJitter}
	tests := []struct {
		name     string
		p        backoff.Policy
		classes  []retry.Class
		errs     []error
		at       []time.Duration // when the attempts started
		classOf  []string        // Event.Class of each retry
		reason   error           // nil: success after errs
		attempts int
	}{
		{"each class its schedule", wide, []retry.Class{slow, fast}, []error{errReset, errOverload, errReset, errOverload},
			ms(0, 10, 1010, 1030, 3030), []string{"transient", "overload", "transient", "overload"}, nil, 5},
		{"a class's own cap", wide, []retry.Class{slow, fast}, []error{errOverload, errReset, errOverload, errOverload},
			ms(0, 1000, 1010, 3010), []string{"overload", "transient", "overload"}, retry.ErrExhausted, 4},
		{"the call's cap still applies", backoff.Policy{Retries: 2}, []retry.Class{slow, fast}, []error{errReset, errReset, errReset},
			ms(0, 10, 30), []string{"transient", "transient"}, retry.ErrExhausted, 3},
		{"unmatched failures wait the call's policy", wide, []retry.Class{slow}, []error{errReset, errOverload, errReset},
			ms(0, 100, 1100, 1500), []string{"", "overload", ""}, nil, 4},
		{"no classes", wide, nil, []error{errReset, errOverload},
			ms(0, 100, 300), []string{"", ""}, nil, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var classes []string
				s := newScript(tt.errs...)
				_, err := retry.Do(t.Context(), tt.p, s.op, retry.WithClasses(tt.classes...),
					retry.WithOnRetry(func(e retry.Event) { classes = append(classes, e.Class) }))
				if tt.reason == nil {
					if err != nil {
						t.Fatalf("Do: %v, want success", err)
					}
				} else {
					checkError(t, err, tt.reason, tt.attempts, nil)
				}
				if !equalDurations(s.at, tt.at) {
					t.Errorf("attempts at %v, want %v", s.at, tt.at)
				}
				if !slices.Equal(classes, tt.classOf) {
					t.Errorf("Event.Class %q, want %q", classes, tt.classOf)
				}
			})
		})
	}
}

// TestClassCost checks that a class's retry takes its Cost from a
// TokenBucket: 100 tokens, an overload costs 3 and a reset 30, so the
// second reset leaves 40, under half, and is refused, where sixteen
// overloads would still be allowed.
func TestClassCost(t *testing.T) {
	p := backoff.Policy{Initial: -1, Retries: 20}
	costly := fast
	costly.Cost = 30
	tests := []struct {
		name     string
		errs     []error
		reason   error
		attempts int
		tokens   float64
	}{
		{"cheap overloads", failing(16, errOverload), nil, 17, 52},
		{"costly resets", failing(5, errReset), retry.ErrBudget, 2, 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			slowNoWait := slow
			slowNoWait.Policy = backoff.Policy{Initial: -1, Retries: 20}
			b := &retry.TokenBucket{MaxTokens: 100}
			s := newScript(tt.errs...)
			_, err := retry.Do(t.Context(), p, s.op, retry.WithClasses(slowNoWait, costly), retry.WithBudget(b))
			if tt.reason == nil && err != nil {
				t.Fatalf("Do: %v, want success", err)
			}
			if tt.reason != nil {
				checkError(t, err, tt.reason, tt.attempts, nil)
			}
			if got := b.Tokens(); got != tt.tokens+float64(boolInt(tt.reason == nil))*0.1 {
				t.Errorf("Tokens() = %v after %d attempts, want %v", got, len(s.at), tt.tokens)
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestClassesInvalid checks that invalid classes are reported as an
// invalid policy is: by NewLoop at once, by Do after a failed first
// attempt.
func TestClassesInvalid(t *testing.T) {
	many := make([]retry.Class, 9)
	tests := []struct {
		name    string
		classes []retry.Class
		is      error
	}{
		{"nine classes", many, retry.ErrInvalid},
		{"negative cost", []retry.Class{{Cost: -1}}, retry.ErrInvalid},
		{"invalid policy", []retry.Class{{Policy: backoff.Policy{Multiplier: 0.5}}}, backoff.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := retry.NewLoop(t.Context(), policy, retry.WithClasses(tt.classes...)); !errors.Is(err, tt.is) {
				t.Errorf("NewLoop = %v, want %v", err, tt.is)
			}
			calls := 0
			err := retry.Run(t.Context(), policy, func(context.Context) error { calls++; return errReset }, retry.WithClasses(tt.classes...))
			if !errors.Is(err, tt.is) || calls != 1 {
				t.Errorf("Run = %v after %d attempts, want %v after 1", err, calls, tt.is)
			}
		})
	}
}

// TestAWSClasses checks the preset against the numbers of the AWS SDKs'
// 2026 retry behaviour: throttling 1 s and cost 5, transient 50 ms and
// cost 14, 3 attempts.
func TestAWSClasses(t *testing.T) {
	cs := retry.AWSClasses()
	if len(cs) != 2 || retry.AWSMaxAttempts != 3 {
		t.Fatalf("AWSClasses() has %d classes, AWSMaxAttempts %d; want 2 and 3", len(cs), retry.AWSMaxAttempts)
	}
	for i, want := range []struct {
		initial time.Duration
		cost    float64
		matches error
	}{{time.Second, 5, errOverload}, {50 * time.Millisecond, 14, errReset}} {
		c := cs[i]
		if c.Policy.Delay(1) != want.initial || c.Cost != want.cost {
			t.Errorf("class %q: first delay %v, cost %v; want %v, %v", c.Name, c.Policy.Delay(1), c.Cost, want.initial, want.cost)
		}
		if c.Match != nil && !c.Match(want.matches) {
			t.Errorf("class %q does not match %v", c.Name, want.matches)
		}
	}
	if cs[0].Match(errReset) {
		t.Errorf("class %q matches %v, which is no throttling", cs[0].Name, errReset)
	}
}

// TestClassesAllocs checks that classes cost no allocation per call once
// their Option is made.
func TestClassesAllocs(t *testing.T) {
	ctx := context.Background()
	fastNoWait := fast
	fastNoWait.Policy.Initial = -1
	opt := retry.WithClasses(fastNoWait)
	n := 0
	op := func(context.Context) (int, error) {
		if n++; n%3 != 0 {
			return 0, errFlaky
		}
		return n, nil
	}
	if a := testing.AllocsPerRun(100, func() { _, _ = retry.Do(ctx, backoff.Policy{Initial: -1, Retries: 3}, op, opt) }); a != 0 {
		t.Errorf("%v allocations per call failing twice with classes, want 0", a)
	}
}

// TestClassRestartAfterHint checks WithRestartAfterHint with classes: a
// server's hint restarts the schedule of the class whose failure carried
// it (its next wait is its first delay), and only that one: the other
// classes' schedules, the call's own for unmatched failures, and every
// class's count against its cap go on as they were. The waits are those
// of Do's Events, and the attempts start after them on synctest's clock.
func TestClassRestartAfterHint(t *testing.T) {
	nojit := func(initial time.Duration) backoff.Policy {
		return backoff.Policy{Initial: initial, Multiplier: 2, Max: time.Hour, Retries: 10, Jitter: backoff.NoJitter}
	}
	over := retry.Class{Name: "overload", Match: retry.IsOverload, Policy: nojit(time.Second)}
	trans := retry.Class{Name: "transient", Policy: nojit(10 * time.Millisecond)}
	call := nojit(100 * time.Millisecond)
	call.Retries = 20
	overHint := retry.After(5*time.Second, errOverload)
	resetHint := retry.After(3*time.Second, errReset)
	type wait struct {
		class string
		d     time.Duration
	}
	restart := []retry.Option{retry.WithRestartAfterHint()}
	tests := []struct {
		name    string
		opts    []retry.Option
		classes []retry.Class
		errs    []error
		waits   []wait
		reason  error // nil: success after errs
	}{
		{"by default a class's schedule goes on", nil, []retry.Class{over, trans},
			[]error{errOverload, errOverload, overHint, errOverload, errReset},
			[]wait{{"overload", time.Second}, {"overload", 2 * time.Second}, {"overload", 5 * time.Second}, {"overload", 8 * time.Second}, {"transient", 10 * time.Millisecond}}, nil},
		{"the hinted class starts over, the other goes on", restart, []retry.Class{over, trans},
			[]error{errReset, errReset, errOverload, overHint, errOverload, errReset},
			[]wait{{"transient", 10 * time.Millisecond}, {"transient", 20 * time.Millisecond}, {"overload", time.Second}, {"overload", 5 * time.Second}, {"overload", time.Second}, {"transient", 40 * time.Millisecond}}, nil},
		{"each hint restarts its own class", restart, []retry.Class{over, trans},
			[]error{errOverload, errReset, resetHint, errOverload, errReset, overHint, errOverload, errReset},
			[]wait{{"overload", time.Second}, {"transient", 10 * time.Millisecond}, {"transient", 3 * time.Second}, {"overload", 2 * time.Second}, {"transient", 10 * time.Millisecond},
				{"overload", 5 * time.Second}, {"overload", time.Second}, {"transient", 20 * time.Millisecond}}, nil},
		{"an unmatched hint restarts the call's schedule, not the class's", restart, []retry.Class{over},
			[]error{errReset, errOverload, errReset, resetHint, errReset, errOverload},
			[]wait{{"", 100 * time.Millisecond}, {"overload", time.Second}, {"", 400 * time.Millisecond}, {"", 3 * time.Second}, {"", 100 * time.Millisecond}, {"overload", 2 * time.Second}}, nil},
		{"a restarted class still counts against its cap", restart, []retry.Class{slow, trans},
			[]error{errOverload, overHint, errOverload},
			[]wait{{"overload", time.Second}, {"overload", 5 * time.Second}}, retry.ErrExhausted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var waits []wait
				s := newScript(tt.errs...)
				opts := append([]retry.Option{retry.WithClasses(tt.classes...),
					retry.WithOnRetry(func(e retry.Event) { waits = append(waits, wait{e.Class, e.Delay}) })}, tt.opts...)
				_, err := retry.Do(t.Context(), call, s.op, opts...)
				if tt.reason == nil && err != nil {
					t.Fatalf("Do: %v, want success", err)
				}
				if tt.reason != nil {
					checkError(t, err, tt.reason, len(tt.errs), nil)
				}
				if !slices.Equal(waits, tt.waits) {
					t.Errorf("waits (class, delay) %v, want %v", waits, tt.waits)
				}
				at := []time.Duration{0}
				for _, w := range tt.waits {
					at = append(at, at[len(at)-1]+w.d)
				}
				if !equalDurations(s.at, at) {
					t.Errorf("attempts at %v, want %v", s.at, at)
				}
			})
		})
	}
}

// TestLoopClass checks Loop.Class, what retryhttp and retrygrpc report as
// their Event's Class: the latest failure's class, kept after a success,
// and "" before any failure, without classes, for an unmatched failure
// and for one that ends the call before it is classed.
func TestLoopClass(t *testing.T) {
	p := backoff.Policy{Initial: -1, Retries: 10}
	type step struct {
		err  error // nil: Succeeded
		want string
	}
	tests := []struct {
		name    string
		classes []retry.Class
		steps   []step
	}{
		{"each failure its class", []retry.Class{slow, fast},
			[]step{{errOverload, "overload"}, {errReset, "transient"}, {nil, "transient"}}},
		{"unmatched", []retry.Class{slow}, []step{{errOverload, "overload"}, {errReset, ""}}},
		{"no classes", nil, []step{{errOverload, ""}, {nil, ""}}},
		{"a permanent error has none", []retry.Class{slow, fast}, []step{{errReset, "transient"}, {retry.Permanent(errReset), ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := retry.NewLoop(t.Context(), p, retry.WithClasses(tt.classes...))
			if err != nil {
				t.Fatal(err)
			}
			if got := l.Class(); got != "" {
				t.Errorf("Class() before any attempt = %q, want \"\"", got)
			}
			for i, s := range tt.steps {
				if s.err == nil {
					l.Succeeded()
				} else {
					_, _ = l.Next(t.Context(), s.err)
				}
				if got := l.Class(); got != s.want {
					t.Errorf("Class() after step %d (%v) = %q, want %q", i+1, s.err, got, s.want)
				}
			}
		})
	}
}
