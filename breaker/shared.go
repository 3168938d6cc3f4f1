package breaker

import (
	"context"
	"time"
)

// Shared is a store through which the breakers of many processes (a fleet)
// share one state: when one process trips, the others see the breaker open
// until the same moment on the store's clock; when the open period ends,
// exactly one probe runs across the fleet, and its outcome closes or reopens
// the breaker for all. Package fleet implements it on Redis;
// breakertest.MemoryStore implements it in memory, for tests.
//
// The breaker keeps its own state and consults the store only on its
// transitions (trip, probe claim, probe outcome, Isolate, Reset) and, at
// most once per Config.SharedRefresh, on a call that finds a refresh due:
// never on the closed state's success path, never from a goroutine of its
// own, and never while holding a lock of its own or the store's while the
// caller's operation runs. When a method returns an error, the breaker goes
// on deciding alone with the same rules (Snapshot.SharedDown) and asks the
// store again at the next refresh; a call never fails because of the store.
//
// The methods are called synchronously on callers' goroutines, with the
// caller's context stripped of its cancellation (context.WithoutCancel), so
// an implementation must bound each call's time itself (tens of
// milliseconds) and must be safe for concurrent use.
//
// With Shared set, every call reads the breaker's clock (about 25 ns) to see
// whether a refresh is due; the closed state's success path still takes no
// lock and makes no store call.
//
// Times are durations measured on the store's clock at the moment it
// answers, never absolute times, so the processes' clocks need not agree.
type Shared interface {
	// Load returns the fleet's state. A store that holds none returns the
	// zero SharedState (closed, version 0).
	Load(ctx context.Context) (SharedState, error)
	// Update replaces the fleet's state with next if its version is still
	// ver, giving it a new, greater version; next.Wait (for Open) counts
	// from the store's now. Either way it returns the state in force
	// afterwards, so that a process that lost the race (another one
	// tripped first) adopts the winner's state. An Update also releases
	// any probe claim.
	Update(ctx context.Context, ver uint64, next SharedState) (SharedState, error)
	// Probe claims the fleet's single probe for ttl (> 0: the breaker's
	// ProbeTimeout, or DefaultProbeTimeout when that has no limit, so that
	// a process that dies while probing cannot block the fleet for long):
	// it succeeds (true)
	// only if the version is still ver, the state is Open, its open period
	// is over (Wait <= 0), and no live claim exists. The claim ends at the
	// next Update or after ttl (a probe whose process died). It returns
	// the state in force. On Redis: a Lua script that checks the state and
	// then takes a key with SET NX PX.
	Probe(ctx context.Context, ver uint64, ttl time.Duration) (SharedState, bool, error)
}

// SharedState is the state a Shared store holds for a fleet. The zero
// SharedState is the initial one: closed, version 0. It is a plain value.
type SharedState struct {
	// State is Closed, Open or Isolated (half-open is Open with Wait <= 0).
	State State
	// Wait is, for Open, the rest of the open period (<= 0 once it is
	// over) on the store's clock when it answered; in Update's next, the
	// open period to set.
	Wait time.Duration
	// Trips is how many times the breaker opened since it was last closed
	// (the step of Config.Open's schedule); the process that reopens after
	// a failed probe continues from it.
	Trips int
	// Version grows with every Update; 0 is the initial closed state.
	Version uint64
}

// The state machine (machine.go) knows of the store only through
// fleetProbe, probeRule and push; calls reach refresh, and unlock sends
// what push queued. Each is a no-op, or the local rule, without a store.

// fleetAnswers reports whether decisions are the fleet's: a store is set
// and answered last time.
func (b *Breaker) fleetAnswers() bool { return b.shared != nil && !b.storeDown.Load() }

// fleetProbe is consulted when the open period is over: ask reports that
// the fleet's probe must be claimed from the store (askProbe, outside the
// lock), and err rejects a call while another call of this process asks.
// Neither, without a store that answers: the breaker goes half-open on its
// own. Called with b.mu held.
func (b *Breaker) fleetProbe() (ask bool, err error) {
	switch {
	case !b.fleetAnswers():
		return false, nil
	case b.asking:
		return false, &OpenError{State: HalfOpen, Wait: b.probeWait()}
	}
	b.asking = true
	return true, nil
}

// probeRule is how many probes half-open admits at once and how many must
// succeed to close: Config's, or one for the whole fleet while the store
// answers.
func (b *Breaker) probeRule() (limit, need int) {
	if b.fleetAnswers() {
		return 1, 1
	}
	return b.s.probes, b.s.probeSuccesses
}

// push queues a transition for the store. Called with b.mu held.
func (b *Breaker) push(next SharedState) {
	if b.fleetAnswers() {
		b.pushes = append(b.pushes, next)
	}
}

// pushAll sends queued transitions to the store, one at a time and in order,
// each against the version this process knows, and adopts the answers.
func (b *Breaker) pushAll(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	drainQueue(&b.mu, &b.pushes, &b.pushing, func(next SharedState) bool {
		b.mu.Lock()
		ver := b.ver
		b.mu.Unlock()
		st, err := b.shared.Update(ctx, ver, next)
		b.mu.Lock()
		defer b.mu.Unlock()
		now := b.now()
		if err != nil {
			b.storeFailed(now)
			return false
		}
		b.adopt(st, now)
		return true
	})
}

// askProbe asks the store for the fleet's probe after the open period ended.
func (b *Breaker) askProbe(ctx context.Context) (Ticket, error) {
	b.mu.Lock()
	ver := b.ver
	b.mu.Unlock()
	// The claim always expires, so that a process that dies while probing
	// cannot block the fleet, even when this one's probes have no limit.
	ttl := b.s.probeTimeout
	if ttl <= 0 {
		ttl = DefaultProbeTimeout
	}
	st, ok, err := b.shared.Probe(context.WithoutCancel(ctx), ver, ttl)
	b.mu.Lock()
	b.asking = false
	now := b.now()
	if err != nil {
		b.storeFailed(now)
	} else {
		b.adopt(st, now)
		if ok && b.state() == Open {
			b.set(HalfOpen, now, 0)
		} else if !ok && b.state() == Open && now >= b.until {
			// Another process holds the fleet's probe: ask again later.
			wait := b.probeWait()
			if b.s.refresh > 0 {
				wait = min(b.s.refresh, wait)
			}
			b.until = now + wait
			b.unlock(ctx)
			return Ticket{}, &OpenError{State: HalfOpen, Wait: wait}
		}
	}
	t, rejected, _ := b.admit(now)
	b.unlock(ctx)
	return t, rejected
}

// refresh reads the shared state when a refresh is due (one caller does);
// without a store, it returns at once.
func (b *Breaker) refresh(ctx context.Context) {
	if b.shared == nil {
		return
	}
	now := b.now()
	next := b.nextRefresh.Load()
	if int64(now) < next {
		return
	}
	every := b.s.refresh
	if every < 0 {
		if !b.storeDown.Load() {
			b.nextRefresh.Store(int64(forever))
			return
		}
		every = DefaultSharedRefresh
	}
	if !b.nextRefresh.CompareAndSwap(next, int64(now+every)) {
		return
	}
	st, err := b.shared.Load(context.WithoutCancel(ctx))
	b.mu.Lock()
	now = b.now()
	if err != nil {
		b.storeFailed(now)
	} else {
		wasDown := b.storeDown.Swap(false)
		if wasDown && st.Version == b.ver && !b.agrees(st) {
			// This process decided alone while the store was down and
			// nobody changed the fleet's state since: publish its state.
			b.pushes = append(b.pushes, b.local(now))
		}
		b.adopt(st, now)
	}
	b.unlock(ctx)
}

// storeFailed switches to local decisions until the next refresh. Called
// with b.mu held.
func (b *Breaker) storeFailed(now time.Duration) {
	b.storeDown.Store(true)
	b.pushes = b.pushes[:0]
	every := b.s.refresh
	if every <= 0 {
		every = DefaultSharedRefresh
	}
	b.nextRefresh.Store(int64(now + every))
}

// agrees reports whether this process's state matches st.
func (b *Breaker) agrees(st SharedState) bool {
	s := b.state()
	return s == st.State || (s == HalfOpen && st.State == Open)
}

// local is this process's state as a SharedState for Update.
func (b *Breaker) local(now time.Duration) SharedState {
	switch s := b.state(); s {
	case Open:
		return SharedState{State: Open, Wait: b.until - now, Trips: b.trips}
	case HalfOpen:
		return SharedState{State: Open, Trips: b.trips}
	default:
		return SharedState{State: s}
	}
}

// adopt makes the fleet's state this process's state. Called with b.mu held.
func (b *Breaker) adopt(st SharedState, now time.Duration) {
	b.storeDown.Store(false)
	if st.Version == b.ver {
		return // nothing new
	}
	b.ver = st.Version
	switch st.State {
	case Closed:
		if b.state() != Closed {
			b.set(Closed, now, 0)
		}
	case Open:
		b.trips = st.Trips
		b.until = now + st.Wait
		if b.state() != Open {
			b.set(Open, now, max(st.Wait, 0))
		}
	case Isolated:
		if b.state() != Isolated {
			b.set(Isolated, now, 0)
		}
	}
}
