// Package breakertest provides test doubles for package breaker. A Shared
// store in memory whose failures can be injected (MemoryStore), and a clock
// that moves only when told (Clock), let tests of code using breakers,
// fleets of them included, run on virtual time and without Redis.
//
// # Quick start
//
//	clock := breakertest.NewClock(time.Unix(0, 0))
//	store := breakertest.NewMemoryStore(clock)
//	cfg := breaker.Config{Clock: clock, Shared: store}
//	a, _ := breaker.New(cfg) // two "processes" sharing one state
//	b, _ := breaker.New(cfg)
//	store.Fail(errors.New("connection refused")) // the store is down
//	clock.Advance(time.Second)
//
// Everything here is safe for concurrent use and keeps no global state.
package breakertest

import (
	"context"
	"sync"
	"time"

	"github.com/again-go/again/breaker"
)

// Clock is a breaker.Clock that moves only when told to (Advance). The
// zero Clock reads the zero time. It is safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a Clock that reads t until it is advanced.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d (backward for a negative d).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// MemoryStore is a breaker.Shared store in memory, for tests and simulations of a
// fleet: breakers in one process that share a MemoryStore behave as breakers
// in many processes that share a Redis key. Its zero value is not usable;
// call NewMemoryStore. It is safe for concurrent use.
type MemoryStore struct {
	clock breaker.Clock

	mu      sync.Mutex
	st      breaker.SharedState
	until   time.Time // Open: end of the open period
	claimed time.Time // end of the live probe claim, if after now
	fail    error
}

// NewMemoryStore returns an empty store (closed, version 0) whose clock is
// clock (nil: the real clock); it plays the part of the Redis server's clock.
func NewMemoryStore(clock breaker.Clock) *MemoryStore { return &MemoryStore{clock: clock} }

// Fail makes every following call return err (nil: answer again), to
// simulate a store that is down.
func (m *MemoryStore) Fail(err error) {
	m.mu.Lock()
	m.fail = err
	m.mu.Unlock()
}

func (m *MemoryStore) now() time.Time {
	if m.clock != nil {
		return m.clock.Now()
	}
	return time.Now()
}

// answer returns the state with Wait measured at now. Called with m.mu held.
func (m *MemoryStore) answer(now time.Time) breaker.SharedState {
	st := m.st
	if st.State == breaker.Open {
		st.Wait = m.until.Sub(now)
	}
	return st
}

// Load implements breaker.Shared.
func (m *MemoryStore) Load(context.Context) (breaker.SharedState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return breaker.SharedState{}, m.fail
	}
	return m.answer(m.now()), nil
}

// Update implements breaker.Shared.
func (m *MemoryStore) Update(_ context.Context, ver uint64, next breaker.SharedState) (breaker.SharedState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return breaker.SharedState{}, m.fail
	}
	now := m.now()
	if ver == m.st.Version {
		m.st = breaker.SharedState{State: next.State, Trips: next.Trips, Version: ver + 1}
		m.until = now.Add(next.Wait)
		m.claimed = time.Time{}
	}
	return m.answer(now), nil
}

// Probe implements breaker.Shared.
func (m *MemoryStore) Probe(_ context.Context, ver uint64, ttl time.Duration) (breaker.SharedState, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return breaker.SharedState{}, false, m.fail
	}
	now := m.now()
	st := m.answer(now)
	if ver != st.Version || st.State != breaker.Open || st.Wait > 0 || now.Before(m.claimed) {
		return st, false, nil
	}
	if ttl <= 0 {
		ttl = 100 * 365 * 24 * time.Hour // no limit
	}
	m.claimed = now.Add(ttl)
	return st, true, nil
}

// compile-time check
var _ breaker.Shared = (*MemoryStore)(nil)
