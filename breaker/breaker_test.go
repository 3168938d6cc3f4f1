package breaker

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
)

func TestZeroBreakerUsesDefaults(t *testing.T) {
	var b Breaker
	calls(&b, 19, errBoom)
	wantState(t, &b, Closed) // 19 calls < MinCalls 20
	call(&b, errBoom)
	wantState(t, &b, Open)
	oe := rejection(t, &b)
	// The default first open period is 5 s with equal jitter: [2.5s, 5s].
	if oe.Wait < 2500*time.Millisecond || oe.Wait > 5*time.Second {
		t.Errorf("Wait = %v, want within [2.5s, 5s]", oe.Wait)
	}
}

func TestFailureRatio(t *testing.T) {
	tests := []struct {
		ok, fail int
		ratio    float64
		want     State
	}{
		{ok: 10, fail: 9, want: Closed},                 // 19 calls: below MinCalls
		{ok: 10, fail: 10, want: Open},                  // 0.5 of 20
		{ok: 11, fail: 9, want: Closed},                 // 0.45
		{ok: 70, fail: 30, ratio: 0.3, want: Open},      // 30 % at volume
		{ok: 71, fail: 29, ratio: 0.3, want: Closed},    // 29 %
		{ok: 1000, fail: 300, ratio: 0.3, want: Closed}, // 23 %
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d ok %d failed ratio %v", tt.ok, tt.fail, tt.ratio), func(t *testing.T) {
			b := newTest(t, Config{FailureRatio: tt.ratio}, newClock())
			calls(b, tt.ok, nil)
			calls(b, tt.fail, errBoom)
			wantState(t, b, tt.want)
		})
	}
}

func TestMinCalls(t *testing.T) {
	tests := []struct {
		min      int
		failures int
		want     State
	}{
		{min: 5, failures: 4, want: Closed},
		{min: 5, failures: 5, want: Open},
		{min: -1, failures: 1, want: Open}, // negative: no minimum
	}
	for _, tt := range tests {
		b := newTest(t, Config{MinCalls: tt.min}, newClock())
		calls(b, tt.failures, errBoom)
		if got := b.State(); got != tt.want {
			t.Errorf("MinCalls %d, %d failures: State() = %v, want %v", tt.min, tt.failures, got, tt.want)
		}
	}
}

func TestWindowAgesOutOldOutcomes(t *testing.T) {
	c := newClock()
	b := newTest(t, Config{}, c) // 10 s in buckets of 1 s
	calls(b, 15, errBoom)        // t = 0
	c.Advance(9 * time.Second)
	calls(b, 15, nil) // t = 9 s: 15 failures + 15 successes
	if s := b.Snapshot(); s.Calls != 30 || s.Failures != 15 {
		t.Fatalf("at 9s: Snapshot() calls %d failures %d, want 30 and 15", s.Calls, s.Failures)
	}
	c.Advance(time.Second) // t = 10 s: the first bucket left the window
	if s := b.Snapshot(); s.Calls != 15 || s.Failures != 0 {
		t.Fatalf("at 10s: Snapshot() calls %d failures %d, want 15 and 0", s.Calls, s.Failures)
	}
	calls(b, 14, errBoom) // 14 / 29 < 0.5
	wantState(t, b, Closed)
	call(b, errBoom) // 15 / 30
	wantState(t, b, Open)
}

func TestConsecutiveFailures(t *testing.T) {
	b := newTest(t, Config{ConsecutiveFailures: 3, MinCalls: 100}, newClock())
	calls(b, 2, errBoom)
	call(b, nil) // resets the run
	calls(b, 2, errBoom)
	wantState(t, b, Closed)
	call(b, errBoom)
	wantState(t, b, Open)

	// With the ratio rule off, only the run trips it.
	b = newTest(t, Config{ConsecutiveFailures: 2, FailureRatio: -1, MinCalls: -1}, newClock())
	for range 10 {
		call(b, errBoom)
		call(b, nil)
	}
	wantState(t, b, Closed)
	calls(b, 2, errBoom)
	wantState(t, b, Open)
}

func TestSlowCallsAreFailures(t *testing.T) {
	c := newClock()
	b := newTest(t, Config{SlowCall: time.Second, MinCalls: 2}, c)
	slow := func(context.Context) error { c.Advance(1500 * time.Millisecond); return nil }
	_ = b.Do(context.Background(), slow)
	_ = b.Do(context.Background(), func(context.Context) error { c.Advance(999 * time.Millisecond); return nil })
	if s := b.Snapshot(); s.Calls != 2 || s.Failures != 1 {
		t.Fatalf("Snapshot() calls %d failures %d, want 2 and 1", s.Calls, s.Failures)
	}
	_ = b.Do(context.Background(), slow)
	wantState(t, b, Open) // 2 of 3
}

func TestOpenScheduleGrowsAfterFailedProbes(t *testing.T) {
	c := newClock()
	b := newTest(t, Config{MinCalls: -1, Open: noJitter}, c)
	call(b, errBoom)
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second} {
		wantState(t, b, Open)
		if oe := rejection(t, b); oe.Wait != want || oe.State != Open {
			t.Fatalf("trip %d: rejection %+v, want Open with Wait %v", i+1, *oe, want)
		}
		c.Advance(want - time.Nanosecond)
		if call(b, nil) {
			t.Fatalf("trip %d: call admitted before the open period ended", i+1)
		}
		c.Advance(time.Nanosecond)
		if !call(b, errBoom) { // the probe fails
			t.Fatalf("trip %d: probe not admitted when the open period ended", i+1)
		}
	}
	// A successful probe closes the breaker and restarts the schedule.
	c.Advance(8 * time.Second)
	call(b, nil)
	wantState(t, b, Closed)
	call(b, errBoom)
	if oe := rejection(t, b); oe.Wait != time.Second {
		t.Fatalf("after closing: Wait = %v, want the first period 1s", oe.Wait)
	}
}

func TestOpenPeriodsAreJittered(t *testing.T) {
	p := noJitter
	p.Jitter = backoff.EqualJitter
	seen := map[time.Duration]bool{}
	for seed := range uint64(20) {
		b := newTest(t, Config{MinCalls: -1, Open: p, Rand: rand.New(rand.NewPCG(seed, 1))}, newClock())
		call(b, errBoom)
		w := rejection(t, b).Wait
		if w < 500*time.Millisecond || w > time.Second {
			t.Fatalf("Wait = %v, want within [500ms, 1s] (equal jitter of 1s)", w)
		}
		seen[w] = true
	}
	if len(seen) < 15 {
		t.Errorf("20 breakers drew %d distinct open periods, want them spread", len(seen))
	}
}

func TestHalfOpenProbes(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	b := newTest(t, Config{MinCalls: -1, Open: noJitter, Probes: 2, ProbeSuccesses: 3}, c)
	call(b, errBoom)
	c.Advance(time.Second)

	p1, err1 := b.Allow(ctx)
	p2, err2 := b.Allow(ctx)
	if err1 != nil || err2 != nil {
		t.Fatalf("Allow() of two probes: %v, %v", err1, err2)
	}
	wantState(t, b, HalfOpen)
	if oe := rejection(t, b); oe.State != HalfOpen || oe.Wait != DefaultProbeTimeout {
		t.Fatalf("third call: rejection %+v, want HalfOpen with Wait %v", *oe, DefaultProbeTimeout)
	}
	p1.Done(nil)
	p2.Done(context.Canceled) // neutral: frees its slot without a verdict
	wantState(t, b, HalfOpen)
	if s := b.Snapshot(); s.Probes != 0 {
		t.Fatalf("Snapshot().Probes = %d, want 0", s.Probes)
	}
	call(b, nil)
	wantState(t, b, HalfOpen) // 2 of 3 successes
	call(b, nil)
	wantState(t, b, Closed)
}

func TestProbeFailureReopens(t *testing.T) {
	c := newClock()
	b := newTest(t, Config{MinCalls: -1, Open: noJitter, Probes: 3}, c)
	call(b, errBoom)
	c.Advance(time.Second)
	call(b, nil)
	call(b, errBoom)
	wantState(t, b, Open)
	if s := b.Snapshot(); s.Trips != 2 || !s.NextProbe.Equal(c.Now().Add(2*time.Second)) {
		t.Fatalf("Snapshot() = %+v, want Trips 2 and NextProbe in 2s", s)
	}
}

// A probe still running when another's failure reopens the breaker keeps
// its slot in the next half-open round: a slow dependency never has more
// than Probes probes at once. Its late verdict frees the slot and decides
// nothing, since the breaker has moved on.
func TestProbesOfAnEarlierRoundStillCount(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	b := newTest(t, Config{MinCalls: -1, Open: noJitter, Probes: 2, ProbeTimeout: 10 * time.Second}, c)
	call(b, errBoom)
	c.Advance(time.Second)
	a, errA := b.Allow(ctx)
	slow, errS := b.Allow(ctx) // a probe that takes its time
	if errA != nil || errS != nil {
		t.Fatalf("Allow() of two probes: %v, %v", errA, errS)
	}
	c.Advance(time.Second)
	a.Done(errBoom) // reopens for 2s
	c.Advance(3 * time.Second)
	admitted := 0
	var tickets []Ticket
	for range 5 {
		if tk, err := b.Allow(ctx); err == nil {
			admitted++
			tickets = append(tickets, tk)
		}
	}
	if admitted != 1 {
		t.Fatalf("half-open again with one probe of the last round in flight: admitted %d, want 1 (Probes 2)", admitted)
	}
	if s := b.Snapshot(); s.Probes != 2 {
		t.Fatalf("Snapshot().Probes = %d, want 2", s.Probes)
	}
	slow.Done(nil) // late: frees its slot, and does not count as this round's success
	if s := b.Snapshot(); s.State != HalfOpen || s.Probes != 1 {
		t.Fatalf("after the earlier round's probe reported: %+v, want half-open with 1 probe", s)
	}
	if _, err := b.Allow(ctx); err != nil {
		t.Fatalf("the freed slot: %v, want a probe admitted", err)
	}
	for _, tk := range tickets {
		tk.Done(nil)
	}
}

// A probe of an earlier round that outlives ProbeTimeout gives its slot
// back without reopening the breaker: its verdict was its round's.
func TestEarlierRoundProbeTimesOutQuietly(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	b := newTest(t, Config{MinCalls: -1, Open: noJitter, Probes: 2, ProbeTimeout: 4 * time.Second}, c)
	call(b, errBoom)
	c.Advance(time.Second)
	a, _ := b.Allow(ctx)
	if _, err := b.Allow(ctx); err != nil { // never reports
		t.Fatal(err)
	}
	a.Done(errBoom) // reopens for 2s
	c.Advance(2 * time.Second)
	if _, err := b.Allow(ctx); err != nil {
		t.Fatalf("half-open again: %v, want a probe", err)
	}
	c.Advance(2 * time.Second) // the earlier round's probe is 4s old now
	if _, err := b.Allow(ctx); err != nil {
		t.Fatalf("after the earlier round's probe timed out: %v, want its slot", err)
	}
	wantState(t, b, HalfOpen)
}

func TestProbeThatNeverReports(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	b := newTest(t, Config{MinCalls: -1, Open: noJitter, ProbeTimeout: 3 * time.Second}, c)
	call(b, errBoom)
	c.Advance(time.Second)
	lost, err := b.Allow(ctx) // its caller vanishes
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(2 * time.Second)
	if oe := rejection(t, b); oe.State != HalfOpen || oe.Wait != time.Second {
		t.Fatalf("rejection %+v, want HalfOpen with Wait 1s (the probe's timeout)", *oe)
	}
	c.Advance(time.Second)
	// The probe timed out: a failed probe, open for the next period.
	if oe := rejection(t, b); oe.State != Open || oe.Wait != 2*time.Second {
		t.Fatalf("rejection %+v, want Open with Wait 2s", *oe)
	}
	lost.Done(nil) // too late: ignored
	wantState(t, b, Open)
	c.Advance(2 * time.Second)
	call(b, nil)
	wantState(t, b, Closed)
}

func TestNoProbeTimeout(t *testing.T) {
	c := newClock()
	b := newTest(t, Config{MinCalls: -1, Open: noJitter, ProbeTimeout: -1}, c)
	call(b, errBoom)
	c.Advance(time.Second)
	if _, err := b.Allow(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Hour)
	if oe := rejection(t, b); oe.State != HalfOpen || oe.Wait != time.Second {
		t.Fatalf("rejection %+v, want HalfOpen with Wait 1s (the first open period)", *oe)
	}
}

func TestOpenError(t *testing.T) {
	c := newClock()
	b := newTest(t, Config{MinCalls: -1, Open: noJitter}, c)
	call(b, errBoom)
	c.Advance(250 * time.Millisecond)
	err := b.Do(context.Background(), func(context.Context) error { t.Fatal("op ran"); return nil })
	if !errors.Is(err, ErrOpen) {
		t.Fatalf("Do() = %v, want ErrOpen", err)
	}
	h, ok := err.(interface {
		RetryAfter() time.Duration
		Rejected() bool
	})
	if !ok || h.RetryAfter() != 750*time.Millisecond || !h.Rejected() {
		t.Fatalf("Do() = %#v, want RetryAfter 750ms and Rejected", err)
	}
	if want := "breaker: open, next probe in 750ms"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err, want)
	}
	b.Isolate()
	err = b.Do(context.Background(), func(context.Context) error { return nil })
	var oe *OpenError
	if !errors.As(err, &oe) || oe.State != Isolated || oe.Wait != forever || !strings.Contains(err.Error(), "isolated") {
		t.Fatalf("isolated: Do() = %v, want an isolated *OpenError with the longest Wait", err)
	}
}

func TestClassification(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		err  error
		want Outcome
	}{
		{"nil", nil, Success},
		{"error", errBoom, Failure},
		{"deadline", fmt.Errorf("get: %w", context.DeadlineExceeded), Failure},
		{"canceled", fmt.Errorf("get: %w", context.Canceled), Neutral},
		{"not fault", NotFault(errBoom), Neutral},
		{"wrapped not fault", fmt.Errorf("x: %w", NotFault(errBoom)), Neutral},
	}
	for _, tt := range tests {
		if got := Classify(tt.err); got != tt.want {
			t.Errorf("Classify(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
	if err := NotFault(errBoom); !errors.Is(err, errBoom) || err.Error() != "boom" {
		t.Errorf("NotFault(errBoom) = %v, want transparent to errBoom", err)
	}
	if NotFault(nil) != nil {
		t.Error("NotFault(nil) != nil")
	}

	// Neutral outcomes are not calls.
	b := newTest(t, Config{MinCalls: -1}, newClock())
	calls(b, 5, context.Canceled)
	calls(b, 5, NotFault(errBoom))
	if s := b.Snapshot(); s.Calls != 0 {
		t.Errorf("after neutral outcomes: Calls = %d, want 0", s.Calls)
	}

	// A caller's classifier.
	b = newTest(t, Config{MinCalls: -1, Classify: func(err error) Outcome {
		if errors.Is(err, errBoom) {
			return Success
		}
		return Failure
	}}, newClock())
	call(b, errBoom)
	wantState(t, b, Closed)
	call(b, errors.New("other"))
	wantState(t, b, Open)

	// A value judged as a failure.
	b = newTest(t, Config{MinCalls: -1}, newClock())
	status, err := CallJudged(ctx, b, func(context.Context) (int, error) { return 503, nil },
		func(status int, err error) Outcome {
			if err != nil || status >= 500 {
				return Failure
			}
			return Success
		})
	if status != 503 || err != nil {
		t.Fatalf("CallJudged() = %d, %v, want 503, nil", status, err)
	}
	wantState(t, b, Open)
	if v, err := Call(ctx, b, func(context.Context) (string, error) { return "x", nil }); v != "" || !errors.Is(err, ErrOpen) {
		t.Fatalf("Call() on an open breaker = %q, %v, want \"\", ErrOpen", v, err)
	}
}

func TestStaleOutcomesAreIgnored(t *testing.T) {
	ctx := context.Background()
	b := newTest(t, Config{MinCalls: -1}, newClock())
	old, _ := b.Allow(ctx)
	b.Isolate()
	b.Reset()
	old.Done(errBoom) // admitted before the changes
	if s := b.Snapshot(); s.State != Closed || s.Calls != 0 {
		t.Fatalf("Snapshot() = %+v, want closed with no calls", s)
	}
	var zero Ticket
	zero.Done(errBoom) // no panic
}

func TestPanicCountsAsFailure(t *testing.T) {
	b := newTest(t, Config{MinCalls: -1}, newClock())
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the panic did not reach the caller")
			}
		}()
		_ = b.Do(context.Background(), func(context.Context) error { panic("boom") })
	}()
	wantState(t, b, Open)
}

func TestIsolateAndReset(t *testing.T) {
	c := newClock()
	b := newTest(t, Config{MinCalls: -1, Open: noJitter}, c)
	b.Isolate()
	wantState(t, b, Isolated)
	c.Advance(time.Hour)
	if call(b, nil) {
		t.Fatal("an isolated breaker admitted a call")
	}
	b.Reset()
	wantState(t, b, Closed)
	call(b, errBoom)
	c.Advance(time.Second)
	call(b, errBoom) // failed probe: trip 2
	b.Reset()        // forgets the schedule's progress
	call(b, errBoom)
	if w := rejection(t, b).Wait; w != time.Second {
		t.Fatalf("after Reset: Wait = %v, want the first period 1s", w)
	}
}

func TestOnStateChange(t *testing.T) {
	c := newClock()
	var b *Breaker
	var got []string
	b = newTest(t, Config{MinCalls: -1, Open: noJitter, OnStateChange: func(ch Change) {
		s := b.Snapshot() // would deadlock if called under the breaker's lock
		got = append(got, fmt.Sprintf("%v→%v trips %d wait %v at %v now %v",
			ch.From, ch.To, ch.Trips, ch.Wait, ch.At.Sub(newClock().t), s.State))
		if ch.To == HalfOpen {
			b.Isolate() // a hook may change the state: delivered after this one
		}
	}}, c)
	call(b, errBoom)
	c.Advance(time.Second)
	call(b, nil)
	b.Reset()
	want := []string{
		"closed→open trips 1 wait 1s at 0s now open",
		"open→half-open trips 1 wait 0s at 1s now half-open",
		"half-open→isolated trips 1 wait 0s at 1s now isolated",
		"isolated→closed trips 0 wait 0s at 1s now closed",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		cfg   Config
		field string
	}{
		{Config{}, ""},
		{Config{Window: -1}, "Window"},
		{Config{Buckets: -1}, "Buckets"},
		{Config{Buckets: 1001}, "Buckets"},
		{Config{Window: 5, Buckets: 6}, "Buckets"},
		{Config{FailureRatio: 1.5}, "FailureRatio"},
		{Config{FailureRatio: -1}, "FailureRatio"},
		{Config{FailureRatio: -1, ConsecutiveFailures: 5}, ""},
		{Config{Probes: -1}, "Probes"},
		{Config{ProbeSuccesses: -1}, "ProbeSuccesses"},
		{Config{MinCalls: -1, SlowCall: -1, ProbeTimeout: -1, SharedRefresh: -1, ConsecutiveFailures: -1}, ""},
		{Config{Open: backoff.Policy{Multiplier: 0.5}}, "Open"},
		{Config{Open: backoff.Policy{Initial: 90 * time.Second}}, "Open.Initial"},
		{Config{Open: backoff.Policy{Initial: time.Minute}}, ""},
		{Config{Open: backoff.Policy{Initial: 90 * time.Second, Max: 90 * time.Second}}, ""},
		{Config{Open: backoff.Policy{Initial: 90 * time.Second, Max: backoff.NoCap}}, ""},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		_, newErr := New(tt.cfg)
		switch {
		case tt.field == "" && (err != nil || newErr != nil):
			t.Errorf("Validate(%+v) = %v, want nil", tt.cfg, err)
		case tt.field != "" && (!errors.Is(err, ErrInvalid) && !errors.Is(err, backoff.ErrInvalid) || !strings.Contains(err.Error(), " "+tt.field)):
			t.Errorf("Validate(%+v) = %v, want an error naming %s", tt.cfg, err, tt.field)
		case tt.field != "" && newErr == nil:
			t.Errorf("New(%+v) accepted an invalid config", tt.cfg)
		}
	}
}

func TestOnStateChangePanicDoesNotStopLaterChanges(t *testing.T) {
	var got []State
	b := newTest(t, Config{MinCalls: -1, OnStateChange: func(ch Change) {
		got = append(got, ch.To)
		if ch.To == Open {
			panic("hook")
		}
	}}, newClock())
	func() {
		defer func() { _ = recover() }()
		call(b, errBoom)
	}()
	b.Reset()
	if fmt.Sprint(got) != "[open closed]" {
		t.Fatalf("hook saw %v, want [open closed]", got)
	}
}

func TestSlowProbeReopens(t *testing.T) {
	c := newClock()
	b := newTest(t, Config{MinCalls: -1, Open: noJitter, SlowCall: time.Second}, c)
	call(b, errBoom)
	c.Advance(time.Second)
	_ = b.Do(context.Background(), func(context.Context) error { c.Advance(2 * time.Second); return nil })
	if s := b.Snapshot(); s.State != Open || s.Trips != 2 {
		t.Fatalf("after a slow successful probe: %+v, want open, trip 2", s)
	}
}
