package breaker

import (
	"math/rand/v2"
	"slices"
	"time"
)

// admit decides on a call at now: the state machine's entry for calls
// (the outcomes enter through closedDone and probeDone). ask reports that
// the decision needs the shared store (see fleetProbe). Called with b.mu
// held.
func (b *Breaker) admit(now time.Duration) (t Ticket, err error, ask bool) {
	switch b.state() {
	case Closed:
		t = Ticket{b: b, sg: b.sg.Load(), start: untimed}
		if b.slow {
			t.start = now
		}
		return t, nil, false
	case Open:
		if now < b.until {
			return t, &OpenError{State: Open, Wait: b.until - now}, false
		}
		if ask, err := b.fleetProbe(); ask || err != nil {
			return t, err, ask
		}
		b.set(HalfOpen, now, 0)
	case Isolated:
		return t, &OpenError{State: Isolated, Wait: forever}, false
	}
	// Half-open. The probes of an earlier round (admitted before a failed
	// probe reopened the breaker) are still in flight against a dependency
	// that may be struggling: they count against the limit until they
	// report or time out, but their verdict belongs to their own round.
	sg := b.sg.Load()
	if b.s.probeTimeout > 0 {
		b.probes = slices.DeleteFunc(b.probes, func(p probe) bool {
			return p.sg != sg && now-p.start >= b.s.probeTimeout
		})
		for _, p := range b.probes {
			if p.sg == sg && now-p.start >= b.s.probeTimeout {
				b.reopen(now)
				return t, &OpenError{State: Open, Wait: b.until - now}, false
			}
		}
	}
	if limit, _ := b.probeRule(); len(b.probes) >= limit {
		wait := b.probeWait()
		if b.s.probeTimeout > 0 {
			wait = b.probes[0].start + b.s.probeTimeout - now
		}
		return t, &OpenError{State: HalfOpen, Wait: wait}, false
	}
	b.probeSeq++
	b.probes = append(b.probes, probe{b.probeSeq, now, sg})
	return Ticket{b: b, sg: b.sg.Load(), start: now, probe: b.probeSeq}, nil, false
}

// probeWait is the hint given when a probe's outcome is awaited and its
// timeout is unknown: the probe timeout, or the first open period.
func (b *Breaker) probeWait() time.Duration {
	if b.s.probeTimeout > 0 {
		return b.s.probeTimeout
	}
	return b.s.open.Delay(1)
}

// closedDone counts an outcome in the closed state. Called with b.mu held.
func (b *Breaker) closedDone(o Outcome, now time.Duration) {
	switch o {
	case Success:
		b.run.Store(0)
		b.win.add(now, b.pending.Swap(0)+1, 0)
	case Failure:
		run := b.run.Add(1)
		b.win.add(now, b.pending.Swap(0), 1)
		calls, fail := b.win.sums(now)
		if (b.s.ratio > 0 && calls >= b.s.minCalls && float64(fail) >= b.s.ratio*float64(calls)) ||
			(b.s.consecutive > 0 && run >= b.s.consecutive) {
			b.trip(now, 1)
		}
	}
}

// probeDone frees a probe's slot and, if it is of the current round,
// counts its outcome; it returns false for a stale report (see Ticket).
// Called with b.mu held.
func (b *Breaker) probeDone(id uint64, o Outcome, now time.Duration, current bool) (counted bool) {
	i := slices.IndexFunc(b.probes, func(p probe) bool { return p.id == id })
	if i < 0 {
		return false // timed out already, or the breaker closed or was isolated
	}
	b.probes = slices.Delete(b.probes, i, i+1)
	if !current {
		return false // an earlier round's: the breaker has moved on since
	}
	switch o {
	case Success:
		b.probeOK++
		if _, need := b.probeRule(); b.probeOK >= need {
			b.close(now)
		}
	case Failure:
		b.reopen(now)
	}
	return true
}

// trip opens the breaker for step n of the open schedule. Called with b.mu held.
func (b *Breaker) trip(now time.Duration, n int) {
	d := b.sample(n)
	b.trips = n
	b.until = now + d
	b.set(Open, now, d)
	b.push(SharedState{State: Open, Wait: d, Trips: n})
}

// reopen opens the breaker again after a failed probe, for longer.
func (b *Breaker) reopen(now time.Duration) { b.trip(now, b.trips+1) }

// close closes the breaker after enough successful probes.
func (b *Breaker) close(now time.Duration) {
	b.set(Closed, now, 0)
	b.push(SharedState{State: Closed})
}

func (b *Breaker) sample(n int) time.Duration {
	var r = b.s.rand
	if r == nil {
		r = globalRand{}
	}
	d := b.s.open.Sample(n, b.lastOpen, r)
	b.lastOpen = d
	return d
}

// globalRand is math/rand/v2's global source, safe for concurrent use.
type globalRand struct{}

func (globalRand) Float64() float64 { return rand.Float64() }

// set changes the state, forgetting what the previous state counted, and
// queues the change for OnStateChange. Called with b.mu held.
func (b *Breaker) set(to State, now, wait time.Duration) {
	sg := b.sg.Load()
	from := State(sg & 3)
	b.sg.Store((sg>>2+1)<<2 | uint64(to))
	b.win.reset()
	b.pending.Store(0)
	b.run.Store(0)
	if to == Closed || to == Isolated {
		// Reopening keeps the probes in flight (see admit); closing, by
		// probes' successes or by hand, and isolating forget them.
		b.probes = b.probes[:0]
	}
	b.probeOK = 0
	if to == Closed {
		b.trips = 0
		b.lastOpen = 0
	}
	if b.s.onChange != nil {
		b.notes = append(b.notes, Change{From: from, To: to, At: b.base.Add(now), Trips: b.trips, Wait: wait})
	}
}

// meets is the state that a call at now would meet: the state, unless the
// clock has moved it on since the last call. Called with b.mu held.
func (b *Breaker) meets(now time.Duration) State {
	switch s := b.state(); s {
	case Open:
		if now >= b.until {
			return HalfOpen
		}
	case HalfOpen:
		if b.s.probeTimeout > 0 {
			sg := b.sg.Load()
			for _, p := range b.probes {
				if p.sg == sg && now-p.start >= b.s.probeTimeout {
					return Open
				}
			}
		}
	}
	return b.state()
}
