package admission

import (
	"testing"
	"time"

	"github.com/again-go/again/limiter"
)

// A request whose client went away while it was served gives its permit
// back as a drop: an adaptive limit learns it (Gradient2 halves, and the
// request queued waits for the calls in flight to fall under it), where a
// request given back unmeasured (Done with a negative time) teaches it
// nothing and its permit serves the request queued.
func TestCoreAbandoned(t *testing.T) {
	// Four requests hold a limit of 4 and a fifth waits; one of the four
	// ends at 1ms, as end says.
	run := func(end func(c *Core, now time.Time)) (*coreRun, *limiter.Limiter) {
		l, err := limiter.New(limiter.Config{Algorithm: limiter.Gradient2{Initial: 4, Min: 1}})
		if err != nil {
			t.Fatal(err)
		}
		r := newCoreRun(t, Config{Adaptive: l})
		for _, name := range []string{"a", "b", "c", "d", "waiting"} {
			r.arrive(0, name, Request{})
		}
		r.now = time.Millisecond
		end(r.c, r.t0.Add(r.now))
		return r, l
	}

	r, l := run(func(c *Core, now time.Time) { c.Done(now, -1) })
	if got := l.Limit(); got != 4 {
		t.Errorf("limit after Done unmeasured = %d, want 4 (no sample)", got)
	}
	r.expect(map[string]string{"waiting": "admitted@1ms"})

	r, l = run(func(c *Core, now time.Time) { c.Abandoned(now, time.Time{}) })
	if got := l.Limit(); got != 2 {
		t.Errorf("limit after Abandoned = %d, want 2 (halved)", got)
	}
	if s := r.c.Snapshot(r.t0.Add(r.now)); s.InFlight != 3 || s.Queued != 1 {
		t.Errorf("after Abandoned: %+v, want 3 in flight and 1 still queued under the halved limit", s)
	}
}

// A request abandoned before its client's deadline, less the margin, was
// canceled by choice (a hedge's loser): its permit serves the request
// queued and the limit learns nothing; at or after it, a drop.
func TestCoreAbandonedBeforeTheDeadline(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		req   Request
		ended time.Duration // after arriving
		limit int           // after Abandoned
	}{
		{"no deadline", Request{}, time.Millisecond, 2},
		{"timeout 1s, ended at 1ms", Request{Timeout: time.Second}, time.Millisecond, 4},
		{"timeout 1s, ended at 749ms", Request{Timeout: time.Second}, 749 * time.Millisecond, 4},
		{"timeout 1s, ended at 750ms (the margin: a quarter)", Request{Timeout: time.Second}, 750 * time.Millisecond, 2},
		{"timeout 1s, ended at 2s", Request{Timeout: time.Second}, 2 * time.Second, 2},
		{"deadline 1s, ended at 10ms", Request{Deadline: t0.Add(time.Second)}, 10 * time.Millisecond, 4},
		{"deadline 1s, ended at 800ms", Request{Deadline: t0.Add(time.Second)}, 800 * time.Millisecond, 2},
		{"deadline 1s and timeout 100ms, ended at 80ms", Request{Deadline: t0.Add(time.Second), Timeout: 100 * time.Millisecond}, 80 * time.Millisecond, 2},
		{"deadline 100ms and timeout 1s, ended at 70ms", Request{Deadline: t0.Add(100 * time.Millisecond), Timeout: time.Second}, 70 * time.Millisecond, 4},
		{"timeout 12ms, ended at 6ms (the margin: 5ms)", Request{Timeout: 12 * time.Millisecond}, 6 * time.Millisecond, 4},
		{"timeout 12ms, ended at 7ms", Request{Timeout: 12 * time.Millisecond}, 7 * time.Millisecond, 2},
		{"deadline passed on arrival", Request{Deadline: t0.Add(-time.Second)}, 0, 2},
	}
	for _, tt := range tests {
		l, err := limiter.New(limiter.Config{Algorithm: limiter.Gradient2{Initial: 4, Min: 1}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := NewCore(Config{Adaptive: l}, t0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !c.AdmitNow(t.Context()) {
			t.Fatalf("%s: AdmitNow = false, want a permit", tt.name)
		}
		c.Abandoned(t0.Add(tt.ended), c.CancelBefore(t0, tt.req))
		if got := l.Limit(); got != tt.limit {
			t.Errorf("%s: limit after Abandoned = %d, want %d", tt.name, got, tt.limit)
		}
	}
}

// With Config.IgnoreTimeout, the deadline is unknown: every abandoned
// request is a drop.
func TestCoreCancelBeforeIgnoreTimeout(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c, err := NewCore(Config{IgnoreTimeout: true}, t0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.CancelBefore(t0, Request{Timeout: time.Second, Deadline: t0.Add(time.Second)}); !got.IsZero() {
		t.Errorf("CancelBefore with IgnoreTimeout = %v, want zero (no deadline known)", got)
	}
}
