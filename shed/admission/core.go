package admission

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/again-go/again/backoff"
)

// core is a Shedder's decisions as functions of the times passed in: it
// reads no clock, starts no goroutine and never blocks. Core exports it;
// package shed's Shedder runs it under real time, with its lock, and a
// simulator on its virtual clock.
//
// admitNow and release touch only atomics and the Limit (safe for
// concurrent use), so that the path of a request that is not overloaded
// takes no lock; every other method must be called with the queue
// guarded (the Shedder's mutex).
type core struct {
	limit        Limit
	maxQueue     int
	maxWait      time.Duration
	def          Criticality
	trustTimeout bool
	retryAfter   time.Duration
	rand         backoff.Rand
	origin       time.Time
	drops        dropCap
	decide       func(w *Waiter, r Reason) // a queued request's fate, once

	waiting  atomic.Int64 // q.n, read without the lock by admitNow
	inflight atomic.Int64 // requests holding a permit
	atOnce   atomic.Int64 // requests admitNow admitted since dispatch last counted them (codel.atOnce)

	q        queue
	codel    codel
	lastFree time.Time // when freed last ran with requests left waiting; zero: the queue drained since

	// Whether each level's own demand exceeds the capacity (see own):
	// the requests queued at each level and the permits freed to the
	// queue in the current CoDel interval, and their moving averages
	// (1/8) over the intervals before, the demand counting every level
	// at or above (the higher are served first).
	lvQueued [levels]int
	frees    int
	lvDemand [levels]float64
	freesAvg float64
	lvOver   [levels]bool
	lvPrev   [levels]bool // whether the level queued any request in the interval before
}

// init configures c from a valid cfg; origin is the time the deadline
// cap's slices count from.
func (c *core) init(cfg Config, origin time.Time, decide func(*Waiter, Reason)) {
	c.limit = cfg.Adaptive
	c.maxQueue = max(orDefault(cfg.MaxQueue, DefaultMaxQueue), 0)
	c.maxWait = orDefault(cfg.MaxWait, DefaultMaxWait)
	c.def = orDefault(cfg.Default, Critical)
	c.trustTimeout = !cfg.IgnoreTimeout
	c.retryAfter = orDefault(cfg.RetryAfter, DefaultRetryAfter)
	c.rand = cfg.Rand
	c.origin = origin
	c.decide = decide
	c.codel = codel{target: orDefault(cfg.Target, DefaultTarget), interval: orDefault(cfg.Interval, DefaultInterval)}
	c.drops.slice = orDefault(cfg.DropWindow, DefaultDropWindow) / capBuckets
	c.drops.fraction = orDefault(cfg.DropFraction, DefaultDropFraction)
	if c.limit == nil {
		c.limit = NewFixed(orDefault(cfg.Limit, DefaultLimit))
	}
	c.drops.advance(0)
	if c.rand == nil {
		c.rand = globalRand{}
	}
}

type globalRand struct{}

func (globalRand) Float64() float64 { return rand.Float64() }

// admitNow counts an arrival and takes a permit for it if nobody waits
// and the limit allows one. It needs no lock.
func (c *core) admitNow(ctx context.Context) bool {
	if c.trustTimeout {
		c.drops.arrive()
	}
	if c.waiting.Load() == 0 && c.limit.Admit(ctx) == nil {
		c.inflight.Add(1)
		c.atOnce.Add(1)
		return true
	}
	return false
}

func (c *core) class(k Criticality) Criticality {
	if k == Unspecified {
		return c.def
	}
	return k
}

// queues reports whether a request of class k (filled in) may wait: a
// known class, and a queue at all.
func (c *core) queues(k Criticality) bool {
	return k >= Sheddable && k <= CriticalPlus && c.maxQueue > 0
}

// prepare fills in w for req, of class k, arriving at now.
func (c *core) prepare(now time.Time, k Criticality, req Request, w *Waiter) {
	w.since, w.level, w.deadline = now, level(k, req.Attempt), c.deadline(now, req)
}

// deadline is the client's deadline of req, arrived at arrived: the
// earlier of req.Deadline and arrived + req.Timeout; zero if neither is
// known, or with Config.IgnoreTimeout.
func (c *core) deadline(arrived time.Time, req Request) time.Time {
	if !c.trustTimeout {
		return time.Time{}
	}
	d := req.Deadline
	if req.Timeout > 0 && (d.IsZero() || arrived.Add(req.Timeout).Before(d)) {
		d = arrived.Add(req.Timeout)
	}
	return d
}

// enqueue queues w at now, making room by evicting a request of a lower
// level, and serves the queue if permits are free. It reports false if
// the queue is full of requests at w's level or above.
func (c *core) enqueue(now time.Time, w *Waiter) bool {
	c.drops.advance(now.Sub(c.origin))
	// Each request is judged against the lowest level that waited
	// before the sweep: the sweep takes the lowest levels first, and
	// judging a critical request after it had just sloughed every
	// sheddable one found none below and sloughed it as the overload's
	// own (the bench's critical class at 0.8 × C fell to 0.976 available
	// on a virtual clock, 0.991 judged so, over 40 seeds). Dispatch
	// judges a request with the levels below it still waiting; the sweep
	// now does the same. First attempts with retries waiting below are
	// spared alike: in again sim outage --shed adaptive their queue delay
	// grew by 2 to 4 ms, their success ratio the same (8 seeds).
	lo := c.q.lowest()
	c.q.sweep(func(x *Waiter) Reason { return c.stale(now, x, lo) }, c.drop)
	if c.q.n >= c.maxQueue {
		lo := c.q.lowest()
		if lo < 0 || lo >= w.level {
			c.waiting.Store(int64(c.q.n))
			return false
		}
		c.decide(c.q.removeAt(lo, 0), Overload)
	}
	c.q.push(w)
	c.lvQueued[w.level]++
	// Publish the queue's length before trying the limit: a request that
	// ends now either sees it and serves the queue, or freed its permit
	// before dispatch tries the limit.
	c.waiting.Store(int64(c.q.n))
	c.dispatch(now)
	return true
}

// stale reports why w, queued, should be dropped at now without a
// permit, or Admitted to keep it: CoDel would slough it, or its deadline
// passed (within the cap; a drop is counted).
//
// CoDel sloughs w only when w's level is what overloads the queue (own,
// lo the lowest level waiting): lower classes, and retries below first
// attempts, are shed first.
func (c *core) stale(now time.Time, w *Waiter, lo int) Reason {
	if c.codel.sloughs(now, now.Sub(w.since)) && c.own(w.level, lo) {
		return Overload
	}
	return c.expired(now, w)
}

// own reports whether the requests of level l are themselves what
// overloads the queue, so that CoDel may slough them and serve them
// newest first: no lower level waits (lo, the lowest level waiting, -1
// for none, is not below l) and no lower class queued a request in this
// CoDel interval or the one before, or the requests of level l and
// above alone outnumber the permits that free (judgeLevels), as when
// first attempts alone exceed the capacity.
//
// A lower class that queued requests lately is part of the overload even
// when none of its requests waits at the moment (they were just served,
// sloughed or gone): a class is not shed while a lower one is still
// being served, as the SRE book's criticality has it. Judged by the
// requests waiting alone, at 1 × C with half the load CRITICAL and half
// SHEDDABLE, the critical class was sloughed whenever the sheddable
// queue was empty for a moment: 0.945 available at worst over 20 seeds
// on a virtual clock, 0.979 at 2 × C; above 0.995 so. Retries are not
// a lower class: first attempts with retries queued lately are sloughed
// as before when nothing lower waits, since sparing them made them wait
// in order behind a retry storm (again sim outage --shed adaptive, queue
// delay 39 ms to 64 ms, the success ratio the same).
//
// A queue served by priority hands the higher levels the next free
// permits, so a level that lower ones wait below is served as fast as
// the permits free, and waits only behind its own requests: sloughing
// it by age dropped the critical requests that were next in line with
// the sheddable ones (the bench's critical class was 0.31–0.74
// available at 4× its capacity), and serving it newest first left its
// oldest waiting for hundreds of milliseconds. But when a level's own
// work exceeds the capacity, sparing it while any lower request waits
// served its requests oldest first behind a standing queue (in again
// sim throttle --shed 1, first attempts at 10× the capacity, with
// retries below them, waited 69 ms on average; 2 ms when sloughed).
func (c *core) own(l, lo int) bool {
	if c.lvOver[l] {
		return true
	}
	if lo >= 0 && lo < l {
		return false
	}
	for k := range l &^ 1 { // the levels of lower classes
		if c.lvQueued[k] > 0 || c.lvPrev[k] {
			return false
		}
	}
	return true
}

// ownMargin is how far the requests queued at a level and above must
// outnumber the permits freed for the level's own demand to count as
// exceeding the capacity: a few tens of requests an interval vary that
// much at random. Without it, a critical class at 0.8 × the capacity was
// judged over it now and then (0.989 available at 4× on a virtual clock,
// 0.992 with it).
const ownMargin = 1.25

// judgeLevels ends the counts of an interval, when codel has just judged
// it: level l's own demand exceeds the capacity if the requests queued
// at l and above outnumbered the permits freed (by ownMargin), on
// average.
func (c *core) judgeLevels() {
	c.freesAvg += (float64(c.frees) - c.freesAvg) / 8
	c.frees = 0
	demand := 0
	for l := levels - 1; l >= 0; l-- {
		demand += c.lvQueued[l]
		c.lvPrev[l] = c.lvQueued[l] > 0
		c.lvQueued[l] = 0
		c.lvDemand[l] += (float64(demand) - c.lvDemand[l]) / 8
		c.lvOver[l] = c.codel.overloaded && c.lvDemand[l] > ownMargin*c.freesAvg
	}
}

// expired reports Deadline if w's deadline passed at now and the cap
// allows one more drop (which it counts), else Admitted.
func (c *core) expired(now time.Time, w *Waiter) Reason {
	if !w.deadline.IsZero() && !now.Before(w.deadline) && c.drops.allow(now.Sub(c.origin)) {
		return Deadline
	}
	return Admitted
}

// drop sheds queued w, taken out of the queue, for why; a slough (CoDel's
// Overload) tells CoDel that a queue stood (see codel.observe).
func (c *core) drop(w *Waiter, why Reason) {
	if why == Overload {
		c.codel.sloughed++
	}
	c.decide(w, why)
}

// dispatch hands free permits to queued requests at now, highest level
// first, FIFO or LIFO as CoDel judges, dropping those CoDel sloughs or
// whose deadline passed.
func (c *core) dispatch(now time.Time) {
	for c.q.n > 0 && c.limit.Admit(context.Background()) == nil {
		served := false
		for c.q.n > 0 {
			c.codel.atOnce += int(c.atOnce.Swap(0))
			first := c.codel.observe(now, now.Sub(c.q.oldest()))
			if first {
				c.judgeLevels()
			}
			w := c.q.pop(c.codel.isOverloaded(now) && c.own(c.q.top(), c.q.lowest()))
			why := c.stale(now, w, c.q.lowest())
			if why == Overload && first {
				// The interval's first request is never sloughed.
				why = c.expired(now, w)
			}
			if why != Admitted {
				c.drop(w, why)
				continue
			}
			c.inflight.Add(1)
			c.decide(w, Admitted)
			served = true
			break
		}
		if !served {
			c.limit.Release(false, -1)
		}
	}
	c.waiting.Store(int64(c.q.n))
}

// freed serves the queue at now, after a permit was given back while
// requests waited, and measures the permits' turnover: the time between
// two permits freed while the queue stood, its moving average (1/8),
// which a request at the head of the queue waits however light the
// overload. CoDel's sloughing age adds it to twice Target: with 4
// permits and 35 ms of work, a permit frees only every ~10 ms, the
// sloughing age itself, so that a critical request next in line was
// sloughed for the wait of one turnover (15 % of the critical class at
// 4× capacity, 20 % of the load, on a virtual clock; 1 % with it). It needs no clock read of its own:
// now is the one dispatch takes.
func (c *core) freed(now time.Time) {
	if !c.lastFree.IsZero() && c.q.n > 0 {
		gap := min(now.Sub(c.lastFree), c.codel.interval)
		c.codel.turn += (gap - c.codel.turn) / 8
	}
	c.lastFree = now
	c.frees++
	c.dispatch(now)
	if c.q.n == 0 {
		c.lastFree = time.Time{}
	}
}

// release gives a permit back, without the lock, and reports whether
// requests wait: then the caller serves the queue (dispatch).
func (c *core) release(overloaded bool, took time.Duration) bool {
	c.inflight.Add(-1)
	c.limit.Release(overloaded, took)
	return c.waiting.Load() > 0
}

// leave takes w out of the queue, deciding it why, and reports true; or
// reports false if w was decided before.
func (c *core) leave(w *Waiter, why Reason) bool {
	if !w.queued {
		return false
	}
	c.q.remove(w)
	c.waiting.Store(int64(c.q.n))
	c.decide(w, why)
	return true
}

// retryAfterAt returns the wait a shed client is told under CoDel's load:
// RetryAfter times 1 + 4 × load, jittered uniformly up to twice that.
func (c *core) retryAfterAt(load float64) time.Duration {
	base := float64(c.retryAfter) * (1 + 4*load)
	return time.Duration(base * (1 + c.rand.Float64()))
}

func (c *core) snapshot(now time.Time) Stats {
	return Stats{InFlight: int(c.inflight.Load()), Queued: c.q.n, Overloaded: c.codel.isOverloaded(now), Load: c.codel.load(now)}
}

// Waiter is a request waiting in a Core's queue (or a Shedder's). The
// zero Waiter is ready to be passed to Core.Arrive, once; its fields
// other than Tag are the Core's.
type Waiter struct {
	// Tag is the caller's own, never read by the Core: an index into the
	// caller's requests, say.
	Tag int

	since    time.Time // when it was queued
	deadline time.Time // zero: none
	level    int
	queued   bool // still in the queue

	// Notify is the caller's own too, never read by the Core: a Shedder,
	// whose queued requests wait on goroutines, gives each a buffered
	// channel that its decide function sends the fate on.
	Notify chan Reason
}

// Core is a Shedder's decisions without a clock, goroutines or blocking:
// every method takes the time it acts at, and a queued request's fate
// comes back through the function given to NewCore, once. A Shedder runs
// the same code under real time; Core runs it on any clock, such as a
// simulator's, whose events call Arrive when a request arrives, Done
// when an admitted one ends, and Leave when a queued one's client gives
// up (or after MaxWait: a Shedder's timer).
//
// A Core is not safe for concurrent use, but for the methods that say
// so: AdmitNow, Release, Class and Queues, the path of a request that is
// not overloaded, which a Shedder runs without its lock while every other
// method runs under it. Its Limit may be shared. Make one with NewCore;
// the zero Core is not usable.
type Core struct {
	c core
}

// NewCore returns a Core configured by cfg, whose deadline cap counts
// from origin, and which tells decide each queued request's fate: Admitted
// (a permit taken for it: give it back with Done) or the Reason it was
// shed. decide runs inside the Core's methods, once per queued request,
// possibly before Arrive returns; it may read the Core (RetryAfter,
// Snapshot) but not call Arrive, Done or Leave. It returns
// cfg.Validate's error.
func NewCore(cfg Config, origin time.Time, decide func(w *Waiter, r Reason)) (*Core, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if decide == nil {
		decide = func(*Waiter, Reason) {}
	}
	c := &Core{}
	c.c.init(cfg, origin, decide)
	return c, nil
}

// Arrive decides at now on an arriving request: admitted at once (queued
// false, r Admitted: a permit is taken, give it back with Done), queued
// (queued true: its fate comes through decide, perhaps already), or shed
// (r says why: QueueFull). w is the request's place in the queue, used
// only if it is queued; its Tag is kept.
func (c *Core) Arrive(now time.Time, req Request, w *Waiter) (queued bool, r Reason) {
	if c.c.admitNow(context.Background()) {
		return false, Admitted
	}
	if !c.Enqueue(now, req, w) {
		return false, QueueFull
	}
	return true, Admitted
}

// AdmitNow is Arrive's first step, safe for concurrent use: it counts an
// arriving request and reports whether it took a permit for it, which it
// does if nobody waits and the limit allows one (ctx goes to the Limit's
// Admit). It reads no clock and takes no lock. A request it refuses may
// be queued with Enqueue.
func (c *Core) AdmitNow(ctx context.Context) bool { return c.c.admitNow(ctx) }

// Class returns k, or Config.Default for Unspecified. It is safe for
// concurrent use.
func (c *Core) Class(k Criticality) Criticality { return c.c.class(k) }

// Queues reports whether a request of class k (as Class returns it) may
// wait in the queue: a known class, and a queue at all (Config.MaxQueue
// not negative). It is safe for concurrent use.
func (c *Core) Queues(k Criticality) bool { return c.c.queues(k) }

// Enqueue is Arrive's second step, for a request AdmitNow refused: it
// queues req at now in w, making room by evicting a request of a lower
// level, and reports false, queuing nothing, if req may not wait (Queues)
// or the queue is full of requests at its level or above (QueueFull). A
// queued request's fate comes through decide, perhaps before Enqueue
// returns.
func (c *Core) Enqueue(now time.Time, req Request, w *Waiter) bool {
	k := c.c.class(req.Criticality)
	if !c.c.queues(k) {
		return false
	}
	c.c.prepare(now, k, req, w)
	return c.c.enqueue(now, w)
}

// Done gives back at now the permit of a request served for took
// (negative: not measured, as after a failure), and serves the queue:
// Release, then Freed if requests wait.
func (c *Core) Done(now time.Time, took time.Duration) {
	if c.c.release(false, took) {
		c.c.freed(now)
	}
}

// Release is Done's first step, safe for concurrent use: it gives a
// permit back to the limit, which learns took (negative: not measured),
// and reports whether requests wait; then the caller calls Freed. It
// reads no clock and takes no lock.
func (c *Core) Release(took time.Duration) (waiting bool) { return c.c.release(false, took) }

// Abandoned gives back at now the permit of a request whose client went
// away while it was served (its context ended), and serves the queue.
// cancelBefore is what CancelBefore returned for the request: its
// client's deadline less a margin, zero if none is known. A request that
// ended before it was canceled by its client's choice (a hedge's losing
// copy, a user who left): its permit goes back unmeasured, no drop. One
// that ended at or after it, or whose deadline is unknown, most likely
// timed out: work nobody waited for, which an adaptive limit learns as a
// drop, an overload signal. Without the drop, a server whose latency
// climbed to its clients' timeout learned nothing from the requests they
// gave up on, and its limit stayed where every request timed out (again
// sim outage --shed adaptive); with a drop for every cancel, 5 % of
// hedged requests halved the limit once per round trip down to its Min.
func (c *Core) Abandoned(now, cancelBefore time.Time) {
	if c.ReleaseAbandoned(now, cancelBefore) {
		c.c.freed(now)
	}
}

// ReleaseAbandoned is Abandoned's first step, as Release is Done's: safe
// for concurrent use, it gives the permit back (a drop unless now is
// before cancelBefore) and reports whether requests wait; then the caller
// calls Freed. now is read only if cancelBefore is not zero.
func (c *Core) ReleaseAbandoned(now, cancelBefore time.Time) (waiting bool) {
	return c.c.release(cancelBefore.IsZero() || !now.Before(cancelBefore), -1)
}

// CancelBefore returns the time before which the end of a request that
// arrived at arrived as req, if its client went away, was its client's
// choice rather than its timeout (see Abandoned): the client's deadline,
// the earlier of req.Deadline and arrived + req.Timeout, less a quarter
// of the time from arrived to it, and at least CancelMargin. The margin
// covers what makes the server's deadline later than the client's: the
// request's way to the server, and what it waited before arrived (a
// connection's queue, a stream's); both deadlines are relative
// (Again-Timeout-Ms, grpc-timeout), so the clocks' skew does not count.
// A quarter, not a tenth: in again sim outage (a 3 s timeout, a one-way
// delay exponential of mean 100 ms) a tenth read the 5 % of timeouts
// whose request took over 300 ms to arrive as cancels; a quarter, 1 in
// 2,000. A hedge's losing copy ends when the winner answers, mostly well
// within the first three quarters of its deadline.
// It returns zero if no deadline is known, or with Config.IgnoreTimeout.
// It reads no clock and is safe for concurrent use.
func (c *Core) CancelBefore(arrived time.Time, req Request) time.Time {
	d := c.c.deadline(arrived, req)
	if d.IsZero() {
		return time.Time{}
	}
	left := max(d.Sub(arrived), 0)
	return arrived.Add(left - max(left/4, CancelMargin))
}

// CancelMargin is the least margin CancelBefore takes off a client's
// deadline: a few times a network's one-way delay within a region, and
// a scheduler's or a collector's pause.
const CancelMargin = 5 * time.Millisecond

// Freed is Done's second step: it serves the queue at now, after Release
// reported requests waiting.
func (c *Core) Freed(now time.Time) { c.c.freed(now) }

// Leave sheds queued w for why: Timeout when MaxWait passed, Canceled
// when its client left. It reports false, deciding nothing, if w was
// decided before.
func (c *Core) Leave(w *Waiter, why Reason) bool { return c.c.leave(w, why) }

// MaxWait returns the longest a request may wait in the queue: a caller
// calls Leave(w, Timeout) that long after Arrive queued w.
func (c *Core) MaxWait() time.Duration { return c.c.maxWait }

// RetryAfter returns the wait a shed client is told at now, as a
// Shedder's: Config.RetryAfter times 1 + 4 × CoDel's load (from 0 to 1),
// jittered uniformly up to twice that.
func (c *Core) RetryAfter(now time.Time) time.Duration {
	return c.c.retryAfterAt(c.c.codel.load(now))
}

// Snapshot returns the Core's state at now.
func (c *Core) Snapshot(now time.Time) Stats { return c.c.snapshot(now) }

// RetryAfterSeconds returns the whole seconds of the Retry-After header
// that tells a client to wait wait: wait rounded to the nearest second, at
// least 1 (rounding up would turn the jitter of a wait between 1s and 2s
// into 2s for everyone). A simulated server tells its clients the same.
func RetryAfterSeconds(wait time.Duration) int64 {
	return max(1, int64(wait.Round(time.Second)/time.Second))
}
