package shed

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
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
//
// Its decisions are a Core's, under real time: the path of a request that
// is not overloaded takes no lock, every other takes mu.
type Shedder struct {
	core
	measure bool   // the limit learns from latency: not a *Fixed
	cfg     Config // for the HTTP fields: Classify, Quota, OnShed, OnQueued

	mu sync.Mutex // guards the core's queue and CoDel
}

// New returns a Shedder configured by cfg, or cfg.Validate's error.
func New(cfg Config) (*Shedder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Shedder{cfg: cfg}
	s.init(cfg, time.Now(), decide)
	_, fixed := s.limit.(*Fixed)
	s.measure = !fixed
	return s, nil
}

// decide hands a queued request its fate, through its channel.
func decide(w *Waiter, r Reason) { w.ch <- r }

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

// admit is Admit without the error: the fast path allocates nothing, and
// reads the clock only for a limit that learns from latency.
func (s *Shedder) admit(ctx context.Context, req Request) (Permit, Reason) {
	if s.admitNow(ctx) {
		p := Permit{s: s}
		if s.measure {
			p.start = time.Now()
		}
		return p, Admitted
	}
	c := s.class(req.Criticality)
	if !s.queues(c) {
		return Permit{}, QueueFull // Unknown: spare capacity only
	}
	now := time.Now()
	w := &Waiter{ch: make(chan Reason, 1)}
	s.prepare(now, c, req, w)
	s.mu.Lock()
	queued := s.enqueue(now, w)
	s.mu.Unlock()
	if !queued {
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
func (s *Shedder) wait(ctx context.Context, w *Waiter) (Permit, Reason) {
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
	left := s.leave(w, why)
	s.mu.Unlock()
	if left {
		return Permit{}, why
	}
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
	if why == Canceled {
		s.release(false, -1)
		return Permit{}, Canceled
	}
	return Permit{s: s, start: time.Now()}, Admitted
}

// release gives a permit back and serves the queue.
func (s *Shedder) release(overloaded bool, took time.Duration) {
	if s.core.release(overloaded, took) {
		now := time.Now()
		s.mu.Lock()
		s.freed(now)
		s.mu.Unlock()
	}
}

// RetryAfter returns the wait a shed client is told now: Config.RetryAfter
// times 1 + 4 × CoDel's load, jittered uniformly up to twice that.
func (s *Shedder) RetryAfter() time.Duration {
	now := time.Now()
	s.mu.Lock()
	load := s.codel.load(now)
	s.mu.Unlock()
	return s.retryAfterAt(load)
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
	return s.snapshot(now)
}
