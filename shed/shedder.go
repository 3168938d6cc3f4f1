package shed

import (
	"context"
	"sync"
	"time"

	"github.com/again-go/again/shed/admission"
)

// Shedder admits requests under a concurrency limit, queues the rest by
// priority under CoDel, and sheds what cannot be served in time (see the
// package documentation). Make one with New; the zero Shedder is not
// usable. A Shedder is safe for concurrent use.
//
// Its decisions are a Core's, under real time: the path of a request that
// is not overloaded takes no lock, every other takes mu.
type Shedder struct {
	core    *admission.Core
	measure bool   // the limit learns from latency: not a *Fixed
	cfg     Config // for the HTTP fields: Classify, Quota, OnShed, OnQueued

	mu sync.Mutex // guards the core's queue and CoDel
}

// New returns a Shedder configured by cfg, or cfg.Validate's error.
func New(cfg Config) (*Shedder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c, err := admission.NewCore(cfg.core(), time.Now(), decide)
	if err != nil {
		return nil, err
	}
	_, fixed := cfg.Adaptive.(*Fixed)
	return &Shedder{core: c, cfg: cfg, measure: cfg.Adaptive != nil && !fixed}, nil
}

// decide hands a queued request its fate, through its channel.
func decide(w *Waiter, r Reason) { w.Notify <- r }

// Permit is an admitted request's place under the limit. Give it back
// exactly once when the request ends: Done after serving it, Abandon if
// its client went away first (its context ended), Release if it was not
// served to the end for another reason (a panic). Only the first call
// counts. A Permit is a value its request holds; it is not safe for
// concurrent use.
// The zero Permit holds nothing.
type Permit struct {
	s     *Shedder
	start time.Time
	// cancelBefore is when its client's leaving stops being a choice
	// (admission.Core.CancelBefore); zero if its deadline is unknown, or
	// the limit learns nothing.
	cancelBefore time.Time
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
		s.release(s.core.Release(took))
	}
}

// Abandon gives the permit back after a request whose client went away
// before it was served to the end (its context ended). If it ends at or
// after its client's deadline (Request.Deadline or Timeout, less a margin:
// admission.Core.CancelBefore), or the deadline is unknown, its client
// most likely timed out: work nobody waited for, which an adaptive limit
// learns as a drop, the overload signal a client's timeout is to a
// client's limit. Before it, the client canceled by choice (a hedge's
// losing copy, a user who left), which says nothing of the server: no
// sample. Abandon reads the clock only for a request with a deadline.
func (p *Permit) Abandon() {
	if p.s != nil {
		s := p.s
		p.s = nil
		var now time.Time
		if !p.cancelBefore.IsZero() {
			now = time.Now()
		}
		s.release(s.core.ReleaseAbandoned(now, p.cancelBefore))
	}
}

// Release gives the permit back without a latency sample (after a panic).
func (p *Permit) Release() {
	if p.s != nil {
		s := p.s
		p.s = nil
		s.release(s.core.Release(-1))
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
		c := s.core.Class(req.Criticality)
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
	if s.core.AdmitNow(ctx) {
		p := Permit{s: s}
		if s.measure {
			p.start = time.Now()
			p.cancelBefore = s.core.CancelBefore(p.start, req)
		}
		return p, Admitted
	}
	c := s.core.Class(req.Criticality)
	if !s.core.Queues(c) {
		return Permit{}, QueueFull // Unknown: spare capacity only
	}
	now := time.Now()
	w := &Waiter{Notify: make(chan Reason, 1)}
	req.Criticality = c
	s.mu.Lock()
	queued := s.core.Enqueue(now, req, w)
	s.mu.Unlock()
	if !queued {
		return Permit{}, QueueFull
	}
	p, r := s.wait(ctx, w)
	if r == Admitted && s.measure {
		p.cancelBefore = s.core.CancelBefore(now, req) // its deadline counts from its arrival
	}
	if s.cfg.OnQueued != nil {
		s.cfg.OnQueued(c, time.Since(now), r)
	}
	return p, r
}

// wait waits for queued w's decision, or leaves the queue when ctx ends
// or MaxWait passes.
func (s *Shedder) wait(ctx context.Context, w *Waiter) (Permit, Reason) {
	timer := time.NewTimer(s.core.MaxWait())
	defer timer.Stop()
	var why Reason
	select {
	case r := <-w.Notify:
		return s.decided(r, Admitted)
	case <-ctx.Done():
		why = Canceled
	case <-timer.C:
		why = Timeout
	}
	s.mu.Lock()
	left := s.core.Leave(w, why)
	s.mu.Unlock()
	if left {
		return Permit{}, why
	}
	// Decided meanwhile: the decision is in the channel.
	return s.decided(<-w.Notify, why)
}

// decided turns a queued request's decision into its result: a permit if
// admitted, unless its client went away (why Canceled), when the permit
// goes back at once.
func (s *Shedder) decided(r, why Reason) (Permit, Reason) {
	if r != Admitted {
		return Permit{}, r
	}
	if why == Canceled {
		s.release(s.core.Release(-1))
		return Permit{}, Canceled
	}
	return Permit{s: s, start: time.Now()}, Admitted
}

// release serves the queue after a permit was given back (Core.Release
// or ReleaseAbandoned), if requests were waiting.
func (s *Shedder) release(waiting bool) {
	if waiting {
		now := time.Now()
		s.mu.Lock()
		s.core.Freed(now)
		s.mu.Unlock()
	}
}

// RetryAfter returns the wait a shed client is told now: Config.RetryAfter
// times 1 + 4 × CoDel's load, jittered uniformly up to twice that.
func (s *Shedder) RetryAfter() time.Duration {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.core.RetryAfter(now)
}

// Snapshot returns the Shedder's state now.
func (s *Shedder) Snapshot() Stats {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.core.Snapshot(now)
}
