package breaker

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Breaker is a circuit breaker: it stops calling a dependency that fails too
// often, and lets a few probes find out when it is back. One Breaker guards
// calls of any result type; most callers use Do, or Call and CallJudged for
// calls that return a value.
//
// The zero Breaker is ready to use with the zero Config's rules (see Config);
// New applies a Config. A Breaker must not be copied after first use. It is
// safe for concurrent use by many goroutines, and never starts goroutines or
// timers: it reads its clock when a call is admitted or reports, so time
// passes for it only through calls.
type Breaker struct {
	// sg packs the state (low 2 bits) and a generation that grows with
	// every state change, so that outcomes of calls admitted before a
	// change are ignored. The closed path reads it without the lock.
	sg atomic.Uint64

	// Set by New, read without the lock afterwards: they share sg's cache
	// line, which changes only with the state.
	clock  Clock
	shared Shared
	slow   bool
	watch  bool // shared || slow: closed calls need more than the fast path
	_      [64 - 8 - 16 - 16 - 2]byte

	// pending counts successes reported in the closed state and not yet
	// placed in the window, so that the success path reads no clock and
	// takes no lock; every 16th success places them. It and run, written
	// by calls, have a cache line of their own.
	pending atomic.Int64
	// run counts failures in a row (ConsecutiveFailures).
	run atomic.Int64
	_   [64 - 16]byte

	// nextRefresh is when (ns on the breaker's clock) a call should next
	// read the shared state.
	nextRefresh atomic.Int64
	// storeDown is set while the shared store fails to answer.
	storeDown atomic.Bool

	mu        sync.Mutex
	ready     bool
	s         settings
	base      time.Time
	win       window
	until     time.Duration // Open: when the open period ends
	trips     int           // opens since the breaker was last closed
	lastOpen  time.Duration // the previous open period (decorrelated jitter)
	probes    []probe       // half-open: probes in flight
	probeSeq  uint64
	probeOK   int    // half-open: probes that succeeded
	ver       uint64 // the shared state's version this process knows
	asking    bool   // a call is asking the store for the fleet's probe
	notes     []Change
	notifying bool
	pushes    []SharedState
	pushing   bool
}

// flushMask: the success path places pending successes in the window every
// 16 successes, so at most 15 successes are counted late (at the next flush
// rather than when they happened), and the clock read and lock cost under
// 2 ns per call.
const flushMask = 15

type probe struct {
	id    uint64
	start time.Duration
	sg    uint64 // the state generation that admitted it: its round
}

// New returns a breaker with cfg's rules, or cfg.Validate's error.
func New(cfg Config) (*Breaker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b := &Breaker{clock: cfg.Clock, shared: cfg.Shared, slow: cfg.SlowCall > 0}
	b.watch = b.shared != nil || b.slow
	b.setup(cfg.settings())
	return b, nil
}

func (b *Breaker) setup(s settings) {
	b.s = s
	b.win = newWindow(s.buckets, s.width)
	if b.clock != nil {
		b.base = b.clock.Now()
	} else {
		b.base = time.Now()
	}
	b.ready = true
}

// init applies the zero Config's rules to a zero Breaker. Called with b.mu held.
func (b *Breaker) init() {
	if !b.ready {
		b.setup(Config{}.settings())
	}
}

// now is the time on b's clock, as a duration since b was set up, never negative.
func (b *Breaker) now() time.Duration {
	var d time.Duration
	if b.clock != nil {
		d = b.clock.Now().Sub(b.base)
	} else {
		d = time.Since(b.base)
	}
	return max(d, 0)
}

func (b *Breaker) state() State { return State(b.sg.Load() & 3) }

// Ticket is a call admitted by Allow. Report its outcome exactly once, with
// Done or Record, from any goroutine. The zero Ticket ignores reports.
//
// A Ticket belongs to the round of the breaker that issued it: the state
// and its generation at admission. A report is stale, and dropped, when
// the breaker has left that round by the time it arrives (it tripped,
// closed, reopened, was reset or isolated, or, for a half-open probe, the
// probe was already counted as failed after Config.ProbeTimeout): the
// outcome describes the dependency as it was before a decision that has
// since been taken, as in sony/gobreaker's generations. Config.OnStale is
// told of each dropped report, and otelagain counts them.
type Ticket struct {
	b     *Breaker
	sg    uint64        // state and generation at admission
	start time.Duration // admission time (SlowCall or probe), or untimed
	probe uint64        // half-open probe id; 0 for other calls
}

// untimed is Ticket.start when the call's duration does not matter.
const untimed = -1

// Allow admits a call or rejects it with an *OpenError (matched by
// ErrOpen). Run the call only when err is nil, then report its outcome with
// the Ticket's Done or Record. Prefer Do, Call or CallJudged, which also
// count a panicking call as a failure.
//
// ctx is passed, without its cancellation, to the Shared store if the call
// must consult it; Allow does not check whether ctx is done.
func (b *Breaker) Allow(ctx context.Context) (Ticket, error) {
	// Kept small enough to inline: the closed path without rules that
	// need the clock.
	if sg := b.sg.Load(); State(sg&3) == Closed && !b.watch {
		return Ticket{b: b, sg: sg, start: untimed}, nil
	}
	return b.allow(ctx)
}

// allow is Allow's path for every state but closed, and for closed calls
// that need the clock.
func (b *Breaker) allow(ctx context.Context) (Ticket, error) {
	b.refresh(ctx)
	if sg := b.sg.Load(); State(sg&3) == Closed {
		t := Ticket{b: b, sg: sg, start: untimed}
		if b.slow {
			t.start = b.now()
		}
		return t, nil
	}
	b.mu.Lock()
	b.init()
	now := b.now()
	t, err, ask := b.admit(now)
	b.unlock(ctx)
	if ask {
		t, err = b.askProbe(ctx)
	}
	if err != nil && b.s.onReject != nil {
		if oe, ok := err.(*OpenError); ok {
			b.s.onReject(oe)
		}
	}
	return t, err
}

// Done reports the outcome of the call admitted with t: a nil err is a
// Success; other errors are classified by Config.Classify (by default, the
// package function Classify). Reports after the breaker changed state since
// t was issued are ignored, as are reports on the zero Ticket.
func (t Ticket) Done(err error) {
	if err == nil {
		t.Record(Success)
		return
	}
	b := t.b
	if b == nil {
		return
	}
	b.mu.Lock()
	b.init()
	o := b.s.classify(err)
	b.mu.Unlock()
	t.Record(o)
}

// Record reports the outcome of the call admitted with t, as judged by the
// caller. Like Done, it ignores stale reports.
func (t Ticket) Record(o Outcome) {
	if o == Success && t.start == untimed && t.b != nil {
		t.b.success(t.sg)
		return
	}
	t.record(o)
}

// success counts a closed call's success: no clock, no lock.
func (b *Breaker) success(sg uint64) {
	if now := b.sg.Load(); now != sg {
		b.stale(Success, sg, now)
		return
	}
	if b.run.Load() != 0 {
		b.run.Store(0)
	}
	if n := b.pending.Add(1); n&flushMask == 0 {
		b.mu.Lock()
		b.init()
		if b.sg.Load() == sg {
			b.win.add(b.now(), b.pending.Swap(0), 0)
		}
		b.mu.Unlock()
	}
}

func (t Ticket) record(o Outcome) {
	b := t.b
	if b == nil {
		return
	}
	b.mu.Lock()
	b.init()
	now := b.now()
	if t.start != untimed && o == Success && b.s.slow > 0 && now-t.start >= b.s.slow {
		o = Failure
	}
	counted := true
	switch current := b.sg.Load() == t.sg; {
	case t.probe != 0:
		counted = b.probeDone(t.probe, o, now, current)
	case current:
		b.closedDone(o, now)
	default:
		counted = false
	}
	sg := b.sg.Load()
	b.unlock(context.Background())
	if !counted {
		b.stale(o, t.sg, sg)
	}
}

// stale tells Config.OnStale that a report of o, from a call admitted in
// round admitted, was dropped while the breaker was in round now. Called
// without b.mu held.
func (b *Breaker) stale(o Outcome, admitted, now uint64) {
	if f := b.s.onStale; f != nil {
		f(Stale{Outcome: o, Admitted: State(admitted & 3), Now: State(now & 3)})
	}
}

// unlock releases b.mu, then tells the shared store about this process's
// transitions and calls OnStateChange for each change, outside the lock.
func (b *Breaker) unlock(ctx context.Context) {
	push := len(b.pushes) > 0 && !b.pushing
	notify := len(b.notes) > 0 && !b.notifying
	b.mu.Unlock()
	if push {
		b.pushAll(ctx)
		notify = true
	}
	if notify {
		b.notify()
	}
}

// notify calls OnStateChange for each queued change, one at a time and in
// order: if another goroutine is already doing so, it delivers ours too.
// If the hook panics, the panic goes on to the caller and the changes still
// queued are delivered with the next one.
func (b *Breaker) notify() {
	drainQueue(&b.mu, &b.notes, &b.notifying, func(c Change) bool {
		b.s.onChange(c)
		return true
	})
}

// drainQueue delivers the items of *q one at a time and in order, outside
// mu, which guards *q and *busy, so that a slow or re-entrant delivery (a
// store's round trip, an OnStateChange hook that calls the breaker) holds
// no lock. *busy marks the goroutine delivering: one that finds it set
// leaves its items to it. deliver returns false to stop; the rest stay
// queued. If deliver panics, the panic goes on and the next drain
// delivers what is left.
func drainQueue[T any](mu *sync.Mutex, q *[]T, busy *bool, deliver func(T) bool) {
	mu.Lock()
	if *busy {
		mu.Unlock()
		return
	}
	*busy = true
	locked := true
	defer func() {
		if !locked {
			mu.Lock()
		}
		*busy = false
		mu.Unlock()
	}()
	for len(*q) > 0 {
		item := (*q)[0]
		*q = (*q)[1:]
		mu.Unlock()
		locked = false
		more := deliver(item)
		mu.Lock()
		locked = true
		if !more {
			break
		}
	}
}

// Do runs op if the breaker admits it and counts its outcome: a nil error is
// a Success, other errors are judged by Config.Classify, and a panic is a
// Failure (the panic continues). A rejected call returns an *OpenError
// matched by ErrOpen without running op; otherwise Do returns op's error
// unchanged. It is CallJudged for an operation without a value, on the
// same steps (Allow, then settle); it does not call CallJudged itself, as
// the wrapping closure would cost the success path a fifth of its time.
func (b *Breaker) Do(ctx context.Context, op func(context.Context) error) error {
	t, err := b.Allow(ctx)
	if err != nil {
		return err
	}
	ran := false
	defer t.settle(&ran)
	err = op(ctx)
	ran = true
	t.Done(err)
	return err
}

// settle counts a call that did not return (it panicked) as a Failure: Do
// and CallJudged defer it after admitting a call, with *ran set once the
// operation returned.
func (t Ticket) settle(ran *bool) {
	if !*ran {
		t.Record(Failure)
	}
}

// Call is Do for an operation that returns a value: it returns op's value
// and error, or the zero T and an *OpenError if the breaker rejected the
// call.
func Call[T any](ctx context.Context, b *Breaker, op func(context.Context) (T, error)) (T, error) {
	return CallJudged(ctx, b, op, nil)
}

// CallJudged is Call with the outcome judged by judge from the value and the
// error, for results that are failures although the error is nil (an HTTP
// response with status 503) or successes although it is not. A nil judge
// means Call's rule.
func CallJudged[T any](ctx context.Context, b *Breaker, op func(context.Context) (T, error), judge func(T, error) Outcome) (T, error) {
	t, err := b.Allow(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	ran := false
	defer t.settle(&ran)
	v, err := op(ctx)
	ran = true
	if judge != nil {
		t.Record(judge(v, err))
	} else {
		t.Done(err)
	}
	return v, err
}

// Isolate opens the breaker by hand: every call is rejected with an
// *OpenError whose State is Isolated until Reset. With a Shared store, the
// whole fleet is isolated.
func (b *Breaker) Isolate() {
	b.mu.Lock()
	b.init()
	if b.state() != Isolated {
		b.set(Isolated, b.now(), 0)
		b.push(SharedState{State: Isolated})
	}
	b.unlock(context.Background())
}

// Reset closes the breaker by hand, from any state, and forgets every count
// and the open schedule's progress. With a Shared store, the whole fleet is
// reset.
func (b *Breaker) Reset() {
	b.mu.Lock()
	b.init()
	b.close(b.now())
	b.unlock(context.Background())
}

// Snapshot describes a breaker at one moment, for metrics and health pages.
// It is a plain value, a copy: safe to keep and to read from any goroutine.
// The zero Snapshot is a closed breaker that has counted nothing.
type Snapshot struct {
	// State is the state the next call would meet (see Breaker.State).
	State State
	// Calls and Failures are the outcomes counted in the rolling window
	// (closed state only; up to 15 recent successes count as of the
	// Snapshot, though they may be older). Neutral outcomes are not calls.
	Calls, Failures int64
	// ConsecutiveFailures is the current run of failures (closed state).
	ConsecutiveFailures int64
	// Trips is how many times the breaker opened since it was last closed.
	Trips int
	// Probes is how many probes are in flight: those of the half-open
	// round, and those of an earlier round that a failed probe cut short
	// and that have neither reported nor timed out (they still count
	// against Config.Probes).
	Probes int
	// NextProbe is when the open period ends and a probe may be admitted
	// (Open only; the zero time otherwise, and for a half-open breaker that
	// the next call will reopen, whose open period is not drawn yet).
	NextProbe time.Time
	// SharedDown reports that the Shared store did not answer last time, so
	// that the breaker decides on its own.
	SharedDown bool
}

// Snapshot returns the breaker's state and counts now; State is the one
// the next call would meet, as the State method reports it.
func (b *Breaker) Snapshot() Snapshot {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.init()
	now := b.now()
	s := Snapshot{
		State:               b.meets(now),
		ConsecutiveFailures: b.run.Load(),
		Trips:               b.trips,
		Probes:              len(b.probes),
		SharedDown:          b.storeDown.Load(),
	}
	switch s.State {
	case Closed:
		s.Calls, s.Failures = b.win.sums(now)
		s.Calls += b.pending.Load() // successes not yet placed count as of now
	case Open:
		if b.state() == Open {
			s.NextProbe = b.base.Add(b.until)
		}
	}
	return s
}

// State returns the state that the next call would meet, read from the
// clock: an open breaker whose open period is over reports HalfOpen, and a
// half-open one whose probe overstayed ProbeTimeout reports Open, before
// any call arrives. A closed breaker reads no clock.
func (b *Breaker) State() State {
	if s := b.state(); s == Closed || s == Isolated {
		return s
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.init()
	return b.meets(b.now())
}
