package limiter

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
)

// Limiter bounds how many calls to a dependency are in flight at once: a
// bulkhead with a fixed limit, or an adaptive limit that an Algorithm moves
// from how the calls end. A call takes a Permit (Acquire) before it starts
// and gives it back (Permit.Done) when it ended; a call beyond the limit
// waits for a permit, if Config.MaxWait allows, or is refused at once with
// a *LimitError, which matches ErrLimited.
//
// A Limiter is also a retry.Admitter (Admit, Done) and a retry.Releaser
// (Release), which is how retry.WithAdmitter holds a permit for each
// attempt, and gives it back even when the attempt panics.
//
// The zero Limiter is ready to use, with the zero Config's rules (a fixed
// limit of 25, no wait). A Limiter is safe for concurrent use; an admitted
// call costs one compare-and-swap and one atomic add with a fixed limit,
// and no allocation. An adaptive limit adds, for the calls it measures,
// two clock reads and one short lock; when calls are frequent it measures
// only a sample of them (see Config.SampleEvery), so that its admitted
// call costs about twice a fixed limit's on average.
type Limiter struct {
	cfg      Config
	once     sync.Once
	adaptive bool // set by init, before limit is stored
	clocked  bool // the rule learns from RTTs: calls are measured, sampled
	every    uint32
	clock    Clock
	rand     backoff.Rand

	limit atomic.Int64 // the limit now; 0 until init
	// state packs the calls in flight (its low 32 bits) and the count of
	// permits ever taken (its high 32 bits, wrapping around), so that the
	// compare-and-swap that counts a permit in flight also numbers it for
	// sampling, at no extra cost. (2³² calls in flight at once would
	// overflow into the count: they would need as many goroutines.)
	state   atomic.Uint64
	skip    atomic.Uint32 // a permit is measured if its number & skip is 0
	waiting atomic.Int64  // len(waiters), readable without mu
	refused atomic.Int64
	queued  atomic.Int64

	mu       sync.Mutex
	waiters  []*waiter // first come, first served
	rule     rule      // nil for a fixed limit
	estimate float64   // the rule's limit, before it is rounded down
	// The window over which the rate of permits is measured, to choose
	// skip: since when, and the permits taken until then.
	winOpen  bool
	winStart time.Duration
	winTaken uint32
}

// The halves of Limiter.state.
const (
	oneInFlight = 1
	oneTaken    = 1 << 32
)

// inFlight returns the calls in flight of a state word.
func inFlight(s uint64) int64 { return int64(uint32(s)) }

// waiter is a call waiting for a permit. mu guards granted.
type waiter struct {
	ch      chan struct{} // receives once the permit is granted
	granted bool
}

var (
	_ retry.Admitter = (*Limiter)(nil)
	_ retry.Releaser = (*Limiter)(nil)
)

// New returns a Limiter with the rules of cfg, or the error of
// cfg.Validate.
func New(cfg Config) (*Limiter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	l := &Limiter{cfg: cfg}
	l.init()
	return l, nil
}

func (l *Limiter) init() {
	l.once.Do(func() {
		l.clock = l.cfg.Clock
		l.rand = l.cfg.Rand
		if l.rand == nil {
			l.rand = globalRand{}
		}
		limit := float64(orDefault(l.cfg.Limit, DefaultLimit))
		if l.cfg.Algorithm != nil {
			l.adaptive = true
			l.rule = l.cfg.Algorithm.newRule()
			l.clocked = l.rule.clocked()
			limit, _, _ = l.rule.bounds()
		}
		l.every = uint32(orDefault(l.cfg.SampleEvery, DefaultSampleEvery))
		l.estimate = limit
		l.limit.Store(int64(max(limit, 1)))
	})
}

// globalRand draws from math/rand/v2's top-level generator.
type globalRand struct{}

func (globalRand) Float64() float64 { return rand.Float64() }

// epoch0 is the origin of the times a Limiter measures in.
var epoch0 = time.Now()

func (l *Limiter) now() time.Duration {
	if l.clock != nil {
		return l.clock.Now().Sub(epoch0)
	}
	return time.Since(epoch0)
}

// Outcome is how a call ended, for an adaptive limit: Success (an RTT to
// learn from), Dropped (a loss signal) or Ignored (nothing to learn: the
// caller canceled it, or it failed in a way that says nothing of the
// dependency's load). The zero Outcome is Success.
type Outcome uint8

const (
	// Success: the dependency answered; its RTT is a sample.
	Success Outcome = iota
	// Dropped: the call timed out, or the dependency refused it for
	// overload (HTTP 429 or 503, gRPC RESOURCE_EXHAUSTED or UNAVAILABLE).
	Dropped
	// Ignored: no sample.
	Ignored
)

// String returns "success", "dropped" or "ignored".
func (o Outcome) String() string {
	switch o {
	case Success:
		return "success"
	case Dropped:
		return "dropped"
	}
	return "ignored"
}

// Permit is one call's place under the limit, from Acquire until Done (or
// Record, then Release). Give it back exactly once, also when the call
// panics (defer p.Release() right after Acquire: a Release after Done does
// nothing). A Permit is a value the caller holds; it is not safe for
// concurrent use. The zero Permit holds nothing: its methods do nothing.
type Permit struct {
	l        *Limiter
	start    time.Duration // when it was taken, if measured
	inflight uint32        // calls in flight once it was taken
	// flags: recorded, measured. Four fields, not five: the compiler keeps
	// a struct of at most four in registers, and a fixed limit's Acquire
	// and Done then never store it to memory and load it back.
	flags uint8
}

// Permit.flags.
const (
	recorded uint8 = 1 << iota // Record (or Done) was called
	measured                   // its RTT is a sample: start was read
)

// Acquire takes a permit for one call: at once if fewer calls than the
// limit are in flight, otherwise after waiting for one to end, if
// Config.MaxWait allows. It fails with:
//   - a *LimitError (matching ErrLimited): the limit is reached and the
//     call may not wait (MaxWait is zero, or MaxWaiting calls wait
//     already), or the wait ran out (MaxWait, or the time left before
//     ctx's deadline, whichever is shorter);
//   - context.Cause(ctx): ctx ended while the call waited.
//
// ctx is read only when the call has to wait. The returned Permit must be
// given back (Permit.Done, or Permit.Release).
func (l *Limiter) Acquire(ctx context.Context) (Permit, error) {
	if s, ok := l.tryAcquire(); ok {
		return l.permit(s), nil
	}
	return l.acquireSlow(ctx)
}

// TryAcquire takes a permit if one is free now, and reports whether it
// did: it never waits, and counts no refusal. A hedge that finds no permit
// is not sent (retryhttp.Transport takes a hedge's permit so).
func (l *Limiter) TryAcquire() (Permit, bool) {
	n, ok := l.tryAcquire()
	if !ok {
		l.init()
		if n, ok = l.tryAcquire(); !ok {
			return Permit{}, false
		}
	}
	return l.permit(n), true
}

// tryAcquire takes a permit if one is free, returning the state word
// with it taken (see Limiter.state).
func (l *Limiter) tryAcquire() (uint64, bool) {
	for {
		s := l.state.Load()
		if inFlight(s) >= l.limit.Load() {
			return s, false
		}
		if l.state.CompareAndSwap(s, s+oneTaken+oneInFlight) {
			return s + oneTaken + oneInFlight, true
		}
	}
}

// permit is the Permit of state word s, measured (its start read) if the
// rule learns from RTTs and s numbers it for a sample. It inlines, and
// builds a fixed limit's Permit in registers: a fixed limit's Acquire
// calls nothing and stores nothing but its compare-and-swap.
func (l *Limiter) permit(s uint64) Permit {
	if l.clocked {
		return l.sample(s)
	}
	return Permit{l: l, inflight: uint32(s)}
}

// sample is the Permit of state word s, measured if s numbers it for a
// sample.
func (l *Limiter) sample(s uint64) Permit {
	if l.sampled(s) {
		return Permit{l: l, inflight: uint32(s), start: l.now(), flags: measured}
	}
	return Permit{l: l, inflight: uint32(s)}
}

// sampled reports whether the permit numbered in state word s is one of
// the sample whose RTT is measured.
func (l *Limiter) sampled(s uint64) bool { return uint32(s>>32)&l.skip.Load() == 0 }

func (l *Limiter) acquireSlow(ctx context.Context) (Permit, error) {
	l.init()
	if n, ok := l.tryAcquire(); ok {
		return l.permit(n), nil
	}
	wait := l.cfg.MaxWait
	if wait <= 0 {
		return Permit{}, l.refuse(0)
	}
	if d, ok := ctx.Deadline(); ok {
		if left := time.Until(d); left <= 0 {
			return Permit{}, l.refuse(0)
		} else if left < wait {
			wait = 0 // ctx's deadline ends the wait first
		}
	}
	w, s, ok := l.enqueue()
	if ok {
		return l.permit(s), nil
	}
	if w == nil {
		return Permit{}, l.refuse(0)
	}
	start := time.Now()
	var timeout <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	var err error
	select {
	case <-w.ch:
		l.queued.Add(1)
		return l.permit(l.state.Load()), nil
	case <-timeout:
	case <-ctx.Done():
		err = context.Cause(ctx)
	}
	l.mu.Lock()
	granted := w.granted
	if !granted {
		l.remove(w)
	}
	l.mu.Unlock()
	switch {
	case granted && err == nil:
		// Granted as the wait ran out: the permit is the call's.
		l.queued.Add(1)
		return l.permit(l.state.Load()), nil
	case granted:
		l.release() // granted as ctx ended: pass it on
		return Permit{}, err
	case err != nil:
		return Permit{}, err
	}
	return Permit{}, l.refuse(time.Since(start))
}

// enqueue queues a waiter, unless MaxWaiting calls wait already (nil). It
// tries once more for a permit once queued, under the lock: a permit given
// back between the first try and the queueing finds no waiter to hand it
// to, so the waiter must see it (ok: the permit is taken, with state word
// s, and nothing is queued).
func (l *Limiter) enqueue() (w *waiter, s uint64, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	maxWaiting := int64(l.cfg.MaxWaiting)
	if maxWaiting == 0 {
		maxWaiting = l.limit.Load()
	}
	if maxWaiting > 0 && int64(len(l.waiters)) >= maxWaiting {
		return nil, 0, false
	}
	w = &waiter{ch: make(chan struct{}, 1)}
	l.waiters = append(l.waiters, w)
	l.waiting.Add(1)
	if s, ok = l.tryAcquire(); ok {
		l.remove(w)
		return nil, s, true
	}
	return w, 0, false
}

// remove takes w out of the queue. l.mu is held.
func (l *Limiter) remove(w *waiter) {
	for i, v := range l.waiters {
		if v == w {
			copy(l.waiters[i:], l.waiters[i+1:])
			l.waiters[len(l.waiters)-1] = nil
			l.waiters = l.waiters[:len(l.waiters)-1]
			l.waiting.Add(-1)
			return
		}
	}
}

func (l *Limiter) refuse(waited time.Duration) error {
	l.refused.Add(1)
	return &LimitError{Limit: int(l.limit.Load()), InFlight: int(inFlight(l.state.Load())), Waited: waited}
}

// release gives a permit back, to the first waiter if any.
func (l *Limiter) release() {
	l.state.Add(^uint64(oneInFlight - 1)) // minus one in flight
	if l.waiting.Load() > 0 {
		l.handOff()
	}
}

// handOff grants the free permits to the waiters, first come first served.
func (l *Limiter) handOff() {
	l.mu.Lock()
	for len(l.waiters) > 0 {
		if _, ok := l.tryAcquire(); !ok {
			break
		}
		w := l.waiters[0]
		l.waiters[0] = nil
		l.waiters = l.waiters[1:]
		l.waiting.Add(-1)
		w.granted = true
		w.ch <- struct{}{}
	}
	l.mu.Unlock()
}

// Record tells the limit how the permit's call ended, now: its RTT is from
// Acquire until now. It is for a call whose end is known before its
// permit may be given back, such as an HTTP response whose headers arrived
// while its body is still to be read: Record at the headers, Release when
// the body is closed. Only the first Record (or Done) counts.
func (p *Permit) Record(o Outcome) {
	if p.l == nil || p.flags&recorded != 0 {
		return
	}
	p.flags |= recorded
	if p.l.adaptive && o != Ignored {
		p.learn(o)
	}
}

// learn feeds the rule how the permit's call ended: its RTT if it was
// measured, or without one if the rule needs none; a drop always, with
// the time it came but no RTT if the call was not measured; and nothing
// for an unmeasured success, which sampling skipped.
func (p *Permit) learn(o Outcome) {
	l := p.l
	s := Sample{InFlight: int(p.inflight), Dropped: o == Dropped}
	switch {
	case !l.clocked:
		if l.rule.idle(s, float64(l.limit.Load())) {
			return
		}
	case p.flags&measured != 0:
		s.Now = l.now()
		s.RTT = max(s.Now-p.start, 1)
	case s.Dropped:
		s.Now = l.now()
	default:
		return
	}
	l.record(s, p.flags&measured != 0)
}

// Release gives the permit back, to a waiting call if there is one. A
// permit released without Record (or Done) teaches the limit nothing, as
// Ignored. Only the first Release counts.
func (p *Permit) Release() {
	if p.l == nil {
		return
	}
	l := p.l
	p.l = nil
	l.release()
}

// Done is Record(o), then Release: the usual way to give a permit back.
func (p *Permit) Done(o Outcome) {
	l := p.l
	if l == nil {
		return
	}
	if l.adaptive && p.flags&recorded == 0 && o != Ignored {
		p.learn(o)
	}
	p.l = nil
	l.release()
}

// record feeds s to the rule, and wakes waiters if the limit grew;
// measured says s has an RTT of a sampled call, whose time also measures
// the rate of calls for the sampling.
func (l *Limiter) record(s Sample, measured bool) {
	l.mu.Lock()
	if measured && l.every > 1 {
		l.resample(s.Now)
	}
	l.estimate = l.rule.update(l.estimate, s, l.rand)
	n := int64(max(l.estimate, 1))
	grew := n > l.limit.Swap(n) && len(l.waiters) > 0
	l.mu.Unlock()
	if grew {
		l.handOff()
	}
}

// resample chooses how sparsely calls are measured, at a measured call's
// end (now), once per sampleWindow: one in N, N the largest power of two
// that is at most the permits taken a second ÷ MinSampleRate, and at most
// SampleEvery. l.mu is held.
func (l *Limiter) resample(now time.Duration) {
	taken := uint32(l.state.Load() >> 32)
	if !l.winOpen {
		l.winOpen, l.winStart, l.winTaken = true, now, taken
		return
	}
	d := now - l.winStart
	if d < sampleWindow {
		return
	}
	rate := float64(taken-l.winTaken) / d.Seconds()
	n := uint32(1)
	for n < l.every && float64(2*n)*MinSampleRate <= rate {
		n *= 2
	}
	l.skip.Store(n - 1)
	l.winStart, l.winTaken = now, taken
}

// Admit takes a permit for one attempt, as Acquire does, for
// retry.WithAdmitter: the permit is counted, not returned, and Done or
// Release gives one back.
func (l *Limiter) Admit(ctx context.Context) error {
	if _, ok := l.tryAcquire(); ok {
		return nil
	}
	_, err := l.acquireSlow(ctx)
	return err
}

// Done gives back a permit taken with Admit: overloaded is a loss signal
// (see retry.IsOverload), which an adaptive limit learns from; otherwise
// it learns nothing, not knowing how long the attempt took. retry.Do calls
// Release instead.
func (l *Limiter) Done(overloaded bool) {
	if overloaded && l.adaptive {
		s := Sample{InFlight: int(inFlight(l.state.Load())), Dropped: true}
		if l.clocked {
			s.Now = l.now()
		}
		l.record(s, false)
	}
	l.release()
}

// Release gives back a permit taken with Admit, after an attempt that
// took took (negative: not measured, as after a panic), and was an
// overload signal if overloaded: the retry.Releaser that retry.Do and
// retry.Run call in place of Done. When calls are frequent, an adaptive
// limit learns the RTT of a sample of them (see Config.SampleEvery: those
// released while the count of permits taken is a multiple of N), and
// every overload.
func (l *Limiter) Release(overloaded bool, took time.Duration) {
	if l.adaptive && (took >= 0 || overloaded) {
		st := l.state.Load()
		s := Sample{InFlight: int(inFlight(st)), Dropped: overloaded}
		timed := l.clocked && took >= 0 && l.sampled(st)
		if timed {
			s.RTT = took
		}
		if timed || l.clocked && overloaded {
			s.Now = l.now()
		}
		if timed || !l.clocked || overloaded {
			l.record(s, timed)
		}
	}
	l.release()
}

// Stats is a Limiter's state, as Snapshot returns it: a plain value, safe
// to copy and keep. The zero Stats is an idle Limiter.
type Stats struct {
	// Limit is the limit now; InFlight the calls holding a permit, and
	// Waiting those waiting for one.
	Limit, InFlight, Waiting int
	// Refused counts the calls refused since the Limiter was made, and
	// Queued those that waited and got a permit: counters that only grow.
	Refused, Queued int64
}

// Snapshot returns the limiter's state now.
func (l *Limiter) Snapshot() Stats {
	l.init()
	return Stats{Limit: int(l.limit.Load()), InFlight: int(inFlight(l.state.Load())), Waiting: int(l.waiting.Load()),
		Refused: l.refused.Load(), Queued: l.queued.Load()}
}

// Limit returns the limit now: Snapshot().Limit.
func (l *Limiter) Limit() int {
	l.init()
	return int(l.limit.Load())
}
