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

	r, l = run(func(c *Core, now time.Time) { c.Abandoned(now) })
	if got := l.Limit(); got != 2 {
		t.Errorf("limit after Abandoned = %d, want 2 (halved)", got)
	}
	if s := r.c.Snapshot(r.t0.Add(r.now)); s.InFlight != 3 || s.Queued != 1 {
		t.Errorf("after Abandoned: %+v, want 3 in flight and 1 still queued under the halved limit", s)
	}
}
