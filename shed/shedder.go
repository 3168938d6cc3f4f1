package shed

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/again-go/again/backoff"
)

// Request is what a Shedder knows of a request before it admits it. The
// zero Request is a first attempt of class Config.Default without a
// deadline.
type Request struct {
	Criticality Criticality
	// Attempt is the attempt number, 1 for the first; 0 reads as 1.
	Attempt int
	// Deadline is when the client stops waiting; zero: unknown. A request
	// still queued at its deadline is dropped (within Config.DropFraction).
	Deadline time.Time
	// Timeout is the time the client will still wait, from Admit: a
	// deadline relative to the request's arrival (the earlier of the two
	// counts). Zero means none; HeaderTimeout's 0 is read as 1ns, a
	// deadline already passed.
	Timeout time.Duration
}

// Shedder admits requests under a concurrency limit, queues the rest by
// priority under CoDel, and sheds what cannot be served in time (see the
// package documentation). Make one with New; the zero Shedder is not
// usable. A Shedder is safe for concurrent use.
type Shedder struct {
	limit        Limit
	maxQueue     int
	maxWait      time.Duration
	def          Criticality
	trustTimeout bool
	measure      bool // the limit learns from latency: not a *Fixed
	retryAfter   time.Duration
	cfg          Config // for the HTTP fields: Classify, Quota, OnShed
	rand         backoff.Rand
	origin       time.Time
	drops        dropCap

	waiting  atomic.Int64 // q.n, read without the lock by the fast path
	inflight atomic.Int64 // requests holding a permit

	mu    sync.Mutex
	q     queue
	codel codel
}

// New returns a Shedder configured by cfg, or cfg.Validate's error.
func New(cfg Config) (*Shedder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Shedder{
		limit:        cfg.Adaptive,
		maxQueue:     orDefault(cfg.MaxQueue, DefaultMaxQueue),
		maxWait:      orDefault(cfg.MaxWait, DefaultMaxWait),
		def:          orDefault(cfg.Default, Critical),
		trustTimeout: !cfg.IgnoreTimeout,
		retryAfter:   orDefault(cfg.RetryAfter, DefaultRetryAfter),
		cfg:          cfg,
		rand:         cfg.Rand,
		origin:       time.Now(),
		codel:        codel{target: orDefault(cfg.Target, DefaultTarget), interval: orDefault(cfg.Interval, DefaultInterval)},
		drops: dropCap{
			slice:    orDefault(cfg.DropWindow, DefaultDropWindow) / capBuckets,
			fraction: orDefault(cfg.DropFraction, DefaultDropFraction),
		},
	}
	if s.limit == nil {
		s.limit = NewFixed(orDefault(cfg.Limit, DefaultLimit))
	}
	_, fixed := s.limit.(*Fixed)
	s.measure = !fixed
	s.drops.advance(0)
	if s.maxQueue < 0 {
		s.maxQueue = 0
	}
	if s.rand == nil {
		s.rand = globalRand{}
	}
	return s, nil
}

type globalRand struct{}

func (globalRand) Float64() float64 { return rand.Float64() }

// Permit is an admitted request's place under the limit. Give it back
// exactly once when the request ends: Done after serving it, Release if it
// was not served to the end (a panic). Only the first call counts. A
// Permit is a value its request holds; it is not safe for concurrent use.
// The zero Permit holds nothing.
type Permit struct {
	s     *Shedder
	start time.Time
}

// Done gives the permit back after the request was served: an adaptive
// limit learns the time since admission.
func (p *Permit) Done() {
	if p.s != nil {
		s := p.s
		p.s = nil
		took := time.Duration(-1)
		if s.measure {
			took = time.Since(p.start)
		}
		s.release(false, took)
	}
}

// Release gives the permit back without a latency sample.
func (p *Permit) Release() {
	if p.s != nil {
		s := p.s
		p.s = nil
		s.release(false, -1)
	}
}

// Admit admits req now, or queues it until a permit is free, and returns
// its Permit; or refuses it with a *ShedError (matching ErrShed) saying
// why and when to come back. A request whose ctx ends while it waits is
// refused with reason Canceled. Admit waits at most Config.MaxWait. A
// refusal is passed to Config.OnShed first.
func (s *Shedder) Admit(ctx context.Context, req Request) (Permit, error) {
	p, r := s.admit(ctx, req)
	if r != Admitted {
		c := s.class(req.Criticality)
		if s.cfg.OnShed != nil {
			s.cfg.OnShed(c, r)
		}
		return p, &ShedError{Reason: r, Criticality: c, RetryAfter: s.RetryAfter()}
	}
	return p, nil
}

func (s *Shedder) class(c Criticality) Criticality {
	if c == Unspecified {
		return s.def
	}
	return c
}

// admit is Admit without the error: the fast path allocates nothing, and
// reads the clock only for a limit that learns from latency.
func (s *Shedder) admit(ctx context.Context, req Request) (Permit, Reason) {
	if s.trustTimeout {
		s.drops.arrive()
	}
	if s.waiting.Load() == 0 && s.limit.Admit(ctx) == nil {
		s.inflight.Add(1)
		p := Permit{s: s}
		if s.measure {
			p.start = time.Now()
		}
		return p, Admitted
	}
	c := s.class(req.Criticality)
	if c < Sheddable || c > CriticalPlus {
		return Permit{}, QueueFull // Unknown: spare capacity only
	}
	if s.maxQueue == 0 {
		return Permit{}, QueueFull
	}
	now := time.Now()
	w := &waiter{since: now, level: level(c, req.Attempt), ch: make(chan Reason, 1)}
	if s.trustTimeout {
		w.deadline = req.Deadline
		if req.Timeout > 0 && (w.deadline.IsZero() || now.Add(req.Timeout).Before(w.deadline)) {
			w.deadline = now.Add(req.Timeout)
		}
	}
	if !s.enqueue(now, w) {
		return Permit{}, QueueFull
	}
	p, r := s.wait(ctx, w)
	if s.cfg.OnQueued != nil {
		s.cfg.OnQueued(c, time.Since(now), r)
	}
	return p, r
}

// wait waits for queued w's decision, or leaves the queue when ctx ends
// or MaxWait passes.
func (s *Shedder) wait(ctx context.Context, w *waiter) (Permit, Reason) {
	timer := time.NewTimer(s.maxWait)
	defer timer.Stop()
	var why Reason
	select {
	case r := <-w.ch:
		return s.decided(r, Admitted)
	case <-ctx.Done():
		why = Canceled
	case <-timer.C:
		why = Timeout
	}
	s.mu.Lock()
	if w.queued {
		s.q.remove(w)
		s.waiting.Store(int64(s.q.n))
		s.mu.Unlock()
		return Permit{}, why
	}
	s.mu.Unlock()
	// Decided meanwhile: the decision is in the channel.
	return s.decided(<-w.ch, why)
}

// decided turns a queued request's decision into its result: a permit if
// admitted, unless its client went away (why Canceled), when the permit
// goes back at once.
func (s *Shedder) decided(r, why Reason) (Permit, Reason) {
	if r != Admitted {
		return Permit{}, r
	}
	s.inflight.Add(1)
	if why == Canceled {
		s.release(false, -1)
		return Permit{}, Canceled
	}
	return Permit{s: s, start: time.Now()}, Admitted
}

// enqueue queues w, making room by evicting a request of a lower level,
// and serves the queue if permits are free. It reports false if the queue
// is full of requests at w's level or above.
func (s *Shedder) enqueue(now time.Time, w *waiter) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drops.advance(now.Sub(s.origin))
	s.q.sweep(func(x *waiter) Reason { return s.stale(now, x) }, decide)
	if s.q.n >= s.maxQueue {
		lo := s.q.lowest()
		if lo < 0 || lo >= w.level {
			s.waiting.Store(int64(s.q.n))
			return false
		}
		decide(s.q.removeAt(lo, 0), Overload)
	}
	s.q.push(w)
	// Publish the queue's length before trying the limit: a request that
	// ends now either sees it and serves the queue, or freed its permit
	// before dispatch tries the limit.
	s.waiting.Store(int64(s.q.n))
	s.dispatch()
	return true
}

// stale reports why w, queued, should be dropped at now without a
// permit, or Admitted to keep it: CoDel would slough it, or its deadline
// passed (within the cap; a drop is counted).
func (s *Shedder) stale(now time.Time, w *waiter) Reason {
	if s.codel.sloughs(now, now.Sub(w.since)) {
		return Overload
	}
	return s.expired(now, w)
}

// expired reports Deadline if w's deadline passed at now and the cap
// allows one more drop (which it counts), else Admitted.
func (s *Shedder) expired(now time.Time, w *waiter) Reason {
	if !w.deadline.IsZero() && !now.Before(w.deadline) && s.drops.allow(now.Sub(s.origin)) {
		return Deadline
	}
	return Admitted
}

func decide(w *waiter, r Reason) { w.ch <- r }

// dispatch hands free permits to queued requests, highest level first,
// FIFO or LIFO as CoDel judges, dropping those CoDel sloughs or whose
// deadline passed. s.mu is held.
func (s *Shedder) dispatch() {
	for s.q.n > 0 && s.limit.Admit(context.Background()) == nil {
		served := false
		for s.q.n > 0 {
			now := time.Now()
			first := s.codel.observe(now, now.Sub(s.q.oldest()))
			w := s.q.pop(s.codel.isOverloaded(now))
			why := s.stale(now, w)
			if why == Overload && first {
				// The interval's first request is never sloughed.
				why = s.expired(now, w)
			}
			if why != Admitted {
				decide(w, why)
				continue
			}
			decide(w, Admitted)
			served = true
			break
		}
		if !served {
			s.limit.Release(false, -1)
		}
	}
	s.waiting.Store(int64(s.q.n))
}

// release gives a permit back and serves the queue.
func (s *Shedder) release(overloaded bool, took time.Duration) {
	s.inflight.Add(-1)
	s.limit.Release(overloaded, took)
	if s.waiting.Load() > 0 {
		s.mu.Lock()
		s.dispatch()
		s.mu.Unlock()
	}
}

// RetryAfter returns the wait a shed client is told now: Config.RetryAfter
// times 1 + 4 × CoDel's load, jittered uniformly up to twice that.
func (s *Shedder) RetryAfter() time.Duration {
	s.mu.Lock()
	load := s.codel.load(time.Now())
	s.mu.Unlock()
	base := float64(s.retryAfter) * (1 + 4*load)
	return time.Duration(base * (1 + s.rand.Float64()))
}

// Stats is a Shedder's state, as Snapshot returns it: a plain value.
type Stats struct {
	// InFlight is how many requests hold a permit; Queued how many wait
	// for one.
	InFlight, Queued int
	// Overloaded reports CoDel's judgment: the queue serves newest first
	// and sloughs requests that waited over twice Target.
	Overloaded bool
	// Load is CoDel's load: the smallest delay of the current interval
	// over twice Target, from 0 to 1.
	Load float64
}

// Snapshot returns the Shedder's state now.
func (s *Shedder) Snapshot() Stats {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{InFlight: int(s.inflight.Load()), Queued: s.q.n, Overloaded: s.codel.isOverloaded(now), Load: s.codel.load(now)}
}
