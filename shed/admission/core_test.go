package admission

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// coreRun drives a Core on explicit times and records each request's
// fate, by name.
// fixedRand draws always the same number.
type fixedRand float64

func (r fixedRand) Float64() float64 { return float64(r) }

type coreRun struct {
	t     *testing.T
	c     *Core
	t0    time.Time
	names []string
	ws    []*Waiter
	fate  map[string]string // name: "admitted@8ms", "overload@111ms", ...
	order []string          // names in the order they were admitted
	now   time.Duration
}

func newCoreRun(t *testing.T, cfg Config) *coreRun {
	t.Helper()
	r := &coreRun{t: t, t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), fate: map[string]string{}}
	c, err := NewCore(cfg, r.t0, func(w *Waiter, why Reason) {
		name := r.names[w.Tag]
		if f, ok := r.fate[name]; ok {
			t.Fatalf("%s decided twice: %s, then %v at %v", name, f, why, r.now)
		}
		r.fate[name] = fmt.Sprintf("%v@%v", why, r.now)
		if why == Admitted {
			r.order = append(r.order, name)
		}
	})
	if err != nil {
		t.Fatalf("NewCore(%+v) = %v", cfg, err)
	}
	r.c = c
	return r
}

// arrive sends request name at at; it returns what Arrive said.
func (r *coreRun) arrive(at time.Duration, name string, req Request) string {
	r.now = at
	w := &Waiter{Tag: len(r.names)}
	r.names = append(r.names, name)
	r.ws = append(r.ws, w)
	queued, why := r.c.Arrive(r.t0.Add(at), req, w)
	switch {
	case queued:
		return "queued"
	case why == Admitted:
		r.fate[name] = fmt.Sprintf("%v@%v", why, at)
		r.order = append(r.order, name)
	default:
		r.fate[name] = fmt.Sprintf("%v@%v", why, at)
	}
	return why.String()
}

// expect reports each request of want whose fate is not the one named.
func (r *coreRun) expect(want map[string]string) {
	r.t.Helper()
	for n, f := range want {
		if r.fate[n] != f {
			r.t.Errorf("%s: %q, want %q (all: %v)", n, r.fate[n], f, r.fate)
		}
	}
}

// burst sends at 0 request a, then n more, w0 to w(n-1), first attempts
// of the default class.
func (r *coreRun) burst(n int) {
	r.arrive(0, "a", Request{})
	for i := range n {
		r.arrive(0, fmt.Sprint("w", i), Request{})
	}
}

// done ends an admitted request at at.
func (r *coreRun) done(at time.Duration) {
	r.now = at
	r.c.Done(r.t0.Add(at), -1)
}

// twoClasses returns a Core of one permit whose queue is judged
// overloaded from 110ms ([8ms, 108ms) stood at 8ms), with crit1, crit2
// (CRITICAL) and s0 (SHEDDABLE) queued at 60ms, and a SHEDDABLE request.
func twoClasses(t *testing.T) (*coreRun, Request) {
	const ms = time.Millisecond
	r := newCoreRun(t, Config{Limit: 1})
	crit := Request{Criticality: Critical, Attempt: 1}
	low := Request{Criticality: Sheddable, Attempt: 1}
	r.arrive(0, "a", crit)
	r.arrive(0, "w1", low)
	r.arrive(0, "w2", low)
	r.done(8 * ms)  // w1 after 8ms: the interval's minimum, until 108ms
	r.done(50 * ms) // w2 after 50ms
	r.arrive(60*ms, "crit1", crit)
	r.arrive(60*ms, "crit2", crit)
	r.arrive(60*ms, "s0", low)
	return r, low
}

// sloughedAt111 returns a Core of one permit judged overloaded from
// 110ms ([8ms, 108ms) stood at 8ms), whose w3 and w4 were sloughed at
// 111ms, and w6, which waited 1ms (the minimum of [110ms, 210ms)),
// admitted at 112ms and still served.
func sloughedAt111(t *testing.T) *coreRun {
	const ms = time.Millisecond
	r := newCoreRun(t, Config{Limit: 1})
	r.arrive(0, "a", Request{})
	r.arrive(0, "w1", Request{})
	r.arrive(0, "w2", Request{})
	r.done(8 * ms)  // w1 waited 8ms: the minimum of [8ms, 108ms)
	r.done(50 * ms) // w2
	for _, n := range []string{"w3", "w4", "w5"} {
		r.arrive(60*ms, n, Request{})
	}
	r.done(110 * ms)                  // overloaded; w5 served, the interval's first
	r.arrive(111*ms, "w6", Request{}) // w3, w4 sloughed
	r.done(112 * ms)                  // w6
	return r
}

func TestCoreCoDel(t *testing.T) {
	const ms = time.Millisecond
	t.Run("a standing queue over 5ms for 100ms turns LIFO and sheds what waited over 10ms", func(t *testing.T) {
		r := newCoreRun(t, Config{Limit: 1})
		r.arrive(0, "a", Request{})
		r.arrive(0, "w1", Request{})
		r.arrive(0, "w2", Request{})
		r.done(8 * ms)  // w1 after 8ms: the interval's minimum, until 108ms
		r.done(50 * ms) // w2 after 50ms
		for _, n := range []string{"w3", "w4", "w5"} {
			r.arrive(60*ms, n, Request{})
		}
		r.arrive(105*ms, "w6", Request{})
		// At 110ms the interval [8ms, 108ms) is judged: its minimum 8ms is
		// over 5ms, so the queue is overloaded. The new interval's first
		// request is never dropped; LIFO serves the newest, w6.
		r.done(110 * ms)
		// The next: w5, w4, w3 waited 51ms, over 2 × 5ms: shed, and the
		// newcomer w7, which waited 1ms, is served.
		r.arrive(111*ms, "w7", Request{})
		r.done(112 * ms)
		want := map[string]string{
			"a": "admitted@0s", "w1": "admitted@8ms", "w2": "admitted@50ms",
			"w6": "admitted@110ms", "w5": "overload@111ms", "w4": "overload@111ms", "w3": "overload@111ms",
			"w7": "admitted@112ms",
		}
		r.expect(want)
		if s := r.c.Snapshot(r.t0.Add(112 * ms)); !s.Overloaded || s.InFlight != 1 || s.Queued != 0 {
			t.Errorf("Snapshot(112ms) = %+v, want overloaded, 1 in flight, none queued", s)
		}
	})
	t.Run("while lower classes wait, a critical request is not sloughed: the sheddable ones are", func(t *testing.T) {
		r, low := twoClasses(t)
		r.arrive(105*ms, "s1", low)
		r.arrive(109*ms, "s2", low)
		// Overloaded from 110ms; the interval's first request is served:
		// crit1, the oldest critical, since sheddable requests wait below
		// the critical ones (their level keeps its arrival order).
		r.done(110 * ms)
		// crit2 waited 51ms, over 2 × 5ms, but sheddable requests wait
		// below it: it is served, not sloughed.
		r.done(111 * ms)
		r.done(112 * ms) // s2, the newest sheddable (LIFO), waited 3ms
		r.done(113 * ms) // s1 waited 8ms; s0, 53ms and the lowest, is sloughed next
		r.done(114 * ms)
		want := map[string]string{
			"crit1": "admitted@110ms", "crit2": "admitted@111ms",
			"s2": "admitted@112ms", "s1": "admitted@113ms", "s0": "overload@114ms",
		}
		r.expect(want)
	})
	t.Run("a sweep that sloughs the sheddable requests does not then slough a critical one as the overload's own", func(t *testing.T) {
		r, low := twoClasses(t)
		r.done(110 * ms) // overloaded; crit1 served, the interval's first
		// The arrival sweeps the queue, lowest level first: s0, 51ms old,
		// is sloughed; crit2, as old, waited above it and is kept.
		r.arrive(111*ms, "x", low)
		r.done(112 * ms)
		r.expect(map[string]string{"crit1": "admitted@110ms", "s0": "overload@111ms", "crit2": "admitted@112ms"})
	})
	t.Run("a critical request is not sloughed while a lower class queued requests lately, though none waits", func(t *testing.T) {
		r, _ := twoClasses(t)
		r.done(110 * ms) // overloaded; crit1 served, the interval's first
		r.now = 111 * ms
		if !r.c.Leave(r.ws[slices.Index(r.names, "s0")], Canceled) { // the last sheddable request leaves
			t.Fatal("Leave(s0) = false while it waits, want true (the premise)")
		}
		// crit2 waited 52ms with nothing below it, but SHEDDABLE requests
		// were queued in the interval before: the overload is theirs.
		r.done(112 * ms)
		r.expect(map[string]string{"crit1": "admitted@110ms", "crit2": "admitted@112ms"})
	})
	t.Run("an interval in which requests were sloughed stays overloaded, whatever its minimum", func(t *testing.T) {
		r := sloughedAt111(t)
		r.arrive(200*ms, "x", Request{})
		r.done(215 * ms) // judges [110ms, 210ms)
		if r.fate["w3"] != "overload@111ms" || r.fate["w6"] != "admitted@112ms" {
			t.Fatalf("the premise: w3 sloughed at 111ms, w6 admitted at 112ms; got %v", r.fate)
		}
		if s := r.c.Snapshot(r.t0.Add(215 * ms)); !s.Overloaded {
			t.Errorf("Snapshot(215ms) = %+v, want overloaded: requests were sloughed in [110ms, 210ms), a queue stood", s)
		}
	})
	t.Run("an interval that admitted more requests at once than it sloughed ends the overload", func(t *testing.T) {
		r := sloughedAt111(t)
		r.done(120 * ms) // the queue drained: 3 requests are admitted at once
		for i, n := range []string{"x1", "x2", "x3"} {
			at := time.Duration(130+20*i) * ms
			r.arrive(at, n, Request{})
			r.done(at + 10*ms)
		}
		r.arrive(200*ms, "y", Request{})
		r.arrive(205*ms, "z", Request{})
		r.done(215 * ms) // judges [110ms, 210ms)
		r.expect(map[string]string{"w3": "overload@111ms", "x1": "admitted@130ms", "x3": "admitted@170ms", "z": "admitted@215ms"})
		if s := r.c.Snapshot(r.t0.Add(215 * ms)); s.Overloaded {
			t.Errorf("Snapshot(215ms) = %+v, want not overloaded: 4 requests admitted at once in [110ms, 210ms), 2 sloughed", s)
		}
	})
	t.Run("an interval in which a request was admitted at once is no standing queue, whatever the others waited", func(t *testing.T) {
		r := newCoreRun(t, Config{Limit: 1})
		r.arrive(0, "a", Request{})
		r.arrive(0, "w1", Request{})
		r.arrive(0, "w2", Request{})
		r.done(8 * ms)  // w1 waited 8ms: the minimum of the waiting in [8ms, 108ms)
		r.done(50 * ms) // w2
		r.done(60 * ms) // the queue drained
		r.arrive(70*ms, "b", Request{})
		r.arrive(75*ms, "c", Request{})
		r.done(110 * ms) // judges [8ms, 108ms): c is served
		r.expect(map[string]string{"b": "admitted@70ms", "c": "admitted@110ms"})
		if s := r.c.Snapshot(r.t0.Add(110 * ms)); s.Overloaded {
			t.Errorf("Snapshot(110ms) = %+v, want not overloaded: b was admitted at once in [8ms, 108ms), a delay of 0", s)
		}
	})
	t.Run("a request next in line is not sloughed for waiting one turnover of the permits", func(t *testing.T) {
		r := newCoreRun(t, Config{Limit: 1})
		r.burst(12)
		// A permit frees every 9ms: the queue's head waits that long
		// however light the overload.
		for i := 1; i <= 12; i++ {
			r.done(time.Duration(9*i) * ms)
		}
		r.arrive(110*ms, "y", Request{})
		r.arrive(111*ms, "x", Request{})
		r.done(117 * ms) // overloaded ([9ms, 109ms) stood at 9ms and more): x, the newest
		r.done(124 * ms) // y waited 14ms: over 2 × 5ms, within 2 × 5ms + the turnover
		r.expect(map[string]string{"x": "admitted@117ms", "y": "admitted@124ms"})
		if s := r.c.Snapshot(r.t0.Add(124 * ms)); !s.Overloaded {
			t.Errorf("Snapshot(124ms) = %+v, want overloaded (the premise)", s)
		}
	})
	t.Run("first attempts that alone outnumber the permits freed are sloughed though retries wait below", func(t *testing.T) {
		r := newCoreRun(t, Config{Limit: 1})
		r.burst(6) // w0 to w5, first attempts
		r.done(8 * ms)
		for i := range 6 {
			r.arrive(50*ms, fmt.Sprint("f", i), Request{})
		}
		r.done(50 * ms)
		r.arrive(109*ms, "retry", Request{Attempt: 2})
		// [8ms, 108ms) stood, and 6 first attempts were queued in it for 2
		// permits freed: the first attempts' own work overloads the
		// queue. The newest, f5, is served.
		r.done(110 * ms)
		r.arrive(111*ms, "x", Request{}) // w2 to w5 and f0 to f4 sloughed, not the retry
		r.done(112 * ms)                 // x, the newest first attempt
		want := map[string]string{"f5": "admitted@110ms", "x": "admitted@112ms", "retry": ""}
		for i := range 5 {
			want[fmt.Sprint("f", i)] = "overload@111ms"
		}
		r.expect(want)
	})
	t.Run("a burst whose minimum stays under 5ms stays FIFO and sheds nothing", func(t *testing.T) {
		r := newCoreRun(t, Config{Limit: 1})
		r.burst(5)
		r.done(2 * ms) // w0 waited 2ms: the interval's minimum
		for i := 1; i <= 5; i++ {
			r.done(time.Duration(i) * 40 * ms)
		}
		if want := []string{"a", "w0", "w1", "w2", "w3", "w4"}; !slices.Equal(r.order, want) {
			t.Errorf("admitted %v, want %v (FIFO, none shed)", r.order, want)
		}
	})
}

func TestCorePriority(t *testing.T) {
	r := newCoreRun(t, Config{Limit: 1, MaxQueue: 4})
	r.arrive(0, "holder", Request{})
	r.arrive(1, "sheddable", Request{Criticality: Sheddable})
	r.arrive(2, "critical retry", Request{Criticality: Critical, Attempt: 2})
	r.arrive(3, "critical", Request{Criticality: Critical, Attempt: 1})
	r.arrive(4, "critical_plus retry", Request{Criticality: CriticalPlus, Attempt: 3})
	// The queue is full: a higher class evicts the lowest, a lower one is refused.
	if got := r.arrive(5, "sheddable_plus", Request{Criticality: SheddablePlus}); got != "queued" {
		t.Errorf("SHEDDABLE_PLUS at a queue full down to SHEDDABLE: %s, want queued", got)
	}
	if f := r.fate["sheddable"]; f != "overload@5ns" {
		t.Errorf("the SHEDDABLE evicted for a SHEDDABLE_PLUS: %q, want overload@5ns", f)
	}
	if got := r.arrive(6, "sheddable late", Request{Criticality: Sheddable}); got != "queue_full" {
		t.Errorf("SHEDDABLE at a queue full of higher classes: %s, want queue_full", got)
	}
	if got := r.arrive(7, "unknown", Request{Criticality: Unknown}); got != "queue_full" {
		t.Errorf("UNKNOWN while a permit is out: %s, want queue_full (spare capacity only)", got)
	}
	for i := range 5 {
		r.done(time.Duration(10+i) * time.Microsecond)
	}
	want := []string{"holder", "critical_plus retry", "critical", "critical retry", "sheddable_plus"}
	if !slices.Equal(r.order, want) {
		t.Errorf("served %q, want %q: by class, first attempts before retries", r.order, want)
	}
}

func TestCoreLeaveAndDeadline(t *testing.T) {
	const ms = time.Millisecond
	r := newCoreRun(t, Config{Limit: 1, DropFraction: 1})
	r.arrive(0, "holder", Request{})
	r.arrive(0, "patient", Request{})
	r.arrive(0, "hurried", Request{Timeout: 3 * ms})
	if !r.c.Leave(r.ws[1], Canceled) {
		t.Fatalf("Leave(patient) = false while it waits, want true")
	}
	if r.c.Leave(r.ws[1], Timeout) {
		t.Errorf("Leave(patient) twice = true, want false")
	}
	r.done(4 * ms) // hurried's deadline passed at 3ms
	if r.fate["patient"] != "canceled@0s" || r.fate["hurried"] != "deadline@4ms" {
		t.Errorf("fates %v, want patient canceled@0s, hurried deadline@4ms", r.fate)
	}
	if s := r.c.Snapshot(r.t0.Add(4 * ms)); s.InFlight != 0 || s.Queued != 0 {
		t.Errorf("Snapshot at the end = %+v, want nothing in flight or queued", s)
	}
	if got := r.c.MaxWait(); got != DefaultMaxWait {
		t.Errorf("MaxWait() = %v, want %v", got, DefaultMaxWait)
	}
}

func TestCoreRetryAfterRange(t *testing.T) {
	const ms = time.Millisecond
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, draw := range []float64{0, 0.25, 0.5, 0.999999} {
		c, err := NewCore(Config{Rand: fixedRand(draw)}, t0, nil)
		if err != nil {
			t.Fatal(err)
		}
		// At rest: RetryAfter (1s) jittered up to twice.
		if got := c.RetryAfter(t0); got < time.Second || got >= 2*time.Second {
			t.Errorf("RetryAfter at rest, draw %v = %v, want in [1s, 2s)", draw, got)
		}
		// Fully loaded: up to five times, jittered up to twice: [5s, 10s).
		c.c.codel.observe(t0, time.Second)
		if got := c.RetryAfter(t0.Add(ms)); got < 5*time.Second || got >= 10*time.Second {
			t.Errorf("RetryAfter at full load, draw %v = %v, want in [5s, 10s)", draw, got)
		}
	}
}

// FuzzCore runs a Core through any sequence of arrivals, ends, departures
// and waits, on explicit times, and checks its invariants: the requests in
// flight never exceed the limit; every queued request is decided exactly
// once (admitted, or shed with a reason), and once everything in flight
// has ended nothing is left queued; Snapshot agrees with the count.
func FuzzCore(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{0, 8, 16, 24, 32, 40, 3, 3, 3, 3, 5, 5, 5, 1, 1, 1})
	f.Add([]byte{0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x33, 0x3b, 0x43, 0x4b, 0x53})
	f.Fuzz(func(t *testing.T, ops []byte) {
		const limit = 3
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		decided := map[int]Reason{}
		inflight := 0
		c, err := NewCore(Config{Limit: limit, MaxQueue: 4, Target: time.Millisecond, Interval: 10 * time.Millisecond,
			MaxWait: 50 * time.Millisecond, DropFraction: 0.5, DropWindow: time.Second}, t0, func(w *Waiter, r Reason) {
			if prev, ok := decided[w.Tag]; ok {
				t.Fatalf("request %d decided %v, then %v", w.Tag, prev, r)
			}
			decided[w.Tag] = r
			if r == Admitted {
				inflight++
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		var queued []*Waiter
		now := t0
		check := func(op string) {
			t.Helper()
			if inflight > limit {
				t.Fatalf("after %s: %d in flight, above the limit %d", op, inflight, limit)
			}
			if s := c.Snapshot(now); s.InFlight != inflight {
				t.Fatalf("after %s: Snapshot().InFlight = %d, want %d", op, s.InFlight, inflight)
			}
		}
		n := 0
		for _, b := range ops {
			switch b & 7 {
			case 0, 1, 2: // an arrival of any class, attempt and timeout
				req := Request{Criticality: Criticality(b>>3&7) % (CriticalPlus + 1), Attempt: int(b >> 6),
					Timeout: time.Duration(b>>5) * 3 * time.Millisecond}
				w := &Waiter{Tag: n}
				n++
				q, r := c.Arrive(now, req, w)
				switch {
				case q:
					queued = append(queued, w)
				case r == Admitted:
					inflight++
				}
			case 3, 4: // the oldest request in flight ends
				if inflight > 0 {
					inflight--
					c.Done(now, time.Duration(b)*time.Microsecond)
				}
			case 5: // a queued request's client leaves
				if len(queued) > 0 {
					w := queued[int(b>>3)%len(queued)]
					_, was := decided[w.Tag]
					if left := c.Leave(w, Canceled); left == was {
						t.Fatalf("Leave of request %d = %v, decided before: %v", w.Tag, left, was)
					}
				}
			default: // time passes
				now = now.Add(time.Duration(b>>3) * time.Millisecond)
			}
			check(fmt.Sprintf("op %#x", b))
		}
		// Drain: end everything in flight, later and later.
		for inflight > 0 {
			now = now.Add(time.Millisecond)
			inflight--
			c.Done(now, time.Millisecond)
			check("drain")
		}
		if s := c.Snapshot(now); s.Queued != 0 {
			t.Fatalf("%d queued once nothing is in flight", s.Queued)
		}
		for _, w := range queued {
			if _, ok := decided[w.Tag]; !ok {
				t.Fatalf("request %d queued and never decided", w.Tag)
			}
		}
	})
}
