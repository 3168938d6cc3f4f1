package breaker

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
)

// model is a reference model of the breaker's rules, written as plainly as
// possible: every outcome kept with its time, every rule checked by brute
// force. FuzzStateMachine checks the breaker against it.
type model struct {
	cfg     Config
	s       settings
	state   State
	gen     int
	events  []event // closed state's outcomes, placed in the window
	pending int     // closed state's successes not yet placed (see flushMask)
	run     int
	until   time.Duration
	trips   int
	probes  map[int]modelProbe // by id: those of earlier rounds too
	probeOK int
	nextID  int
}

// modelProbe is a probe in flight: when it started, and the generation
// (round) that admitted it.
type modelProbe struct {
	start time.Duration
	gen   int
}

type event struct {
	at   time.Duration
	fail bool
}

type modelTicket struct {
	gen, probe int
	start      time.Duration
}

func newModel(cfg Config) *model {
	return &model{cfg: cfg, s: cfg.settings(), probes: map[int]modelProbe{}}
}

func (m *model) set(s State) {
	m.state = s
	m.gen++
	m.events = nil
	m.pending = 0
	m.run = 0
	if s == Closed || s == Isolated {
		m.probes = map[int]modelProbe{}
	}
	m.probeOK = 0
	if s == Closed {
		m.trips = 0
	}
}

func (m *model) trip(now time.Duration, n int) {
	m.trips = n
	m.until = now + m.s.open.Delay(n)
	m.set(Open)
}

// place puts the pending successes in the window at now.
func (m *model) place(now time.Duration) {
	for ; m.pending > 0; m.pending-- {
		m.events = append(m.events, event{now, false})
	}
}

// counts returns the calls and failures whose bucket is still in the window.
func (m *model) counts(now time.Duration) (calls, fail int64) {
	newest := int64(now / m.s.width)
	for _, e := range m.events {
		if int64(e.at/m.s.width) > newest-int64(m.s.buckets) {
			calls++
			if e.fail {
				fail++
			}
		}
	}
	return calls, fail
}

// view is the state that the next call would meet at now, which State
// reports: an open period that is over reads half-open, and a probe that
// overstayed ProbeTimeout reads open, before any call makes it so.
func (m *model) view(now time.Duration) State {
	switch m.state {
	case Open:
		if now >= m.until {
			return HalfOpen
		}
	case HalfOpen:
		for _, p := range m.probes {
			if p.gen == m.gen && m.s.probeTimeout > 0 && now-p.start >= m.s.probeTimeout {
				return Open
			}
		}
	}
	return m.state
}

// allow returns the ticket, or the rejection's state and wait.
func (m *model) allow(now time.Duration) (modelTicket, *OpenError) {
	switch m.state {
	case Closed:
		return modelTicket{gen: m.gen, start: now}, nil
	case Isolated:
		return modelTicket{}, &OpenError{Isolated, forever}
	case Open:
		if now < m.until {
			return modelTicket{}, &OpenError{Open, m.until - now}
		}
		m.set(HalfOpen)
	}
	// Probes of earlier rounds hold their slots until they report or time
	// out; only this round's timing out reopens.
	for id, p := range m.probes {
		if p.gen != m.gen && m.s.probeTimeout > 0 && now-p.start >= m.s.probeTimeout {
			delete(m.probes, id)
		}
	}
	oldest := time.Duration(-1)
	for _, p := range m.probes {
		if p.gen == m.gen && m.s.probeTimeout > 0 && now-p.start >= m.s.probeTimeout {
			m.trip(now, m.trips+1)
			return modelTicket{}, &OpenError{Open, m.until - now}
		}
	}
	for _, p := range m.probes {
		if oldest < 0 || p.start < oldest {
			oldest = p.start
		}
	}
	if len(m.probes) >= m.s.probes {
		wait := m.s.open.Delay(1)
		if m.s.probeTimeout > 0 {
			wait = oldest + m.s.probeTimeout - now
		}
		return modelTicket{}, &OpenError{HalfOpen, wait}
	}
	m.nextID++
	m.probes[m.nextID] = modelProbe{now, m.gen}
	return modelTicket{gen: m.gen, probe: m.nextID, start: now}, nil
}

func (m *model) report(t modelTicket, o Outcome, now time.Duration) {
	if t.probe != 0 {
		if _, ok := m.probes[t.probe]; !ok {
			return // timed out already, or the breaker closed or was isolated
		}
		delete(m.probes, t.probe) // its slot frees, whatever its round
	}
	if t.gen != m.gen {
		return
	}
	if o == Success && m.s.slow > 0 && now-t.start >= m.s.slow {
		o = Failure
	}
	if t.probe != 0 {
		switch o {
		case Success:
			if m.probeOK++; m.probeOK >= m.s.probeSuccesses {
				m.set(Closed)
			}
		case Failure:
			m.trip(now, m.trips+1)
		}
		return
	}
	switch o {
	case Success:
		m.run = 0
		// Without SlowCall a success is counted on the fast path, which
		// places successes in the window 16 at a time, at the time of the
		// 16th; with it, each success is placed when it is reported.
		m.pending++
		if m.s.slow > 0 || m.pending == flushMask+1 {
			m.place(now)
		}
	case Failure:
		m.run++
		m.place(now)
		m.events = append(m.events, event{now, true})
		calls, fail := m.counts(now)
		if (m.s.ratio > 0 && calls >= m.s.minCalls && float64(fail) >= m.s.ratio*float64(calls)) ||
			(m.s.consecutive > 0 && int64(m.run) >= m.s.consecutive) {
			m.trip(now, 1)
		}
	}
}

// FuzzStateMachine drives a breaker and the model with the same sequence of
// admissions, outcomes reported in any order (concurrent callers), clock
// steps, Isolate and Reset, and checks after each step that they agree on
// the state, each admission or rejection (with its wait), and the window's
// counts, and that no more probes are in flight than allowed.
func FuzzStateMachine(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	f.Add([]byte{1, 2, 1, 3, 0x10, 0x10, 0x10, 0x40, 0x10, 0x21, 0x10, 0x31, 0x44, 0x10, 0x20})
	f.Add([]byte{7, 0, 2, 1, 0x10, 0x10, 0x10, 0x10, 0x2f, 0x48, 0x10, 0x10, 0x10, 0x5f, 0x10, 0x4f, 0x10, 0x60, 0x70})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 4 {
			return
		}
		cfg := Config{
			Window:              time.Duration(1+data[0]%4) * time.Second,
			Buckets:             1 + int(data[0]>>2)%4,
			FailureRatio:        []float64{0, 1, 0.3, -1}[data[1]%4],
			MinCalls:            1 + int(data[1]>>2)%5,
			ConsecutiveFailures: int(data[2] % 4),
			Probes:              1 + int(data[2]>>2)%3,
			ProbeSuccesses:      1 + int(data[2]>>4)%3,
			ProbeTimeout:        []time.Duration{-1, 500 * time.Millisecond, 2 * time.Second, 0}[data[3]%4],
			SlowCall:            []time.Duration{0, 300 * time.Millisecond}[data[3]>>2%2],
			Open:                backoff.Policy{Initial: time.Second, Multiplier: 2, Max: 4 * time.Second, Jitter: backoff.NoJitter},
		}
		if cfg.FailureRatio < 0 && cfg.ConsecutiveFailures == 0 {
			cfg.ConsecutiveFailures = 2
		}
		c := newClock()
		b := newTest(t, cfg, c)
		m := newModel(cfg)
		start := c.Now()
		type pair struct {
			real  Ticket
			model modelTicket
		}
		var held []pair
		ctx := context.Background()
		for i, op := range data[4:] {
			now := c.Now().Sub(start)
			step := fmt.Sprintf("step %d (op %#x) at %v", i, op, now)
			// admit asks both for an admission and checks that they agree.
			admit := func() (pair, bool) {
				tk, err := b.Allow(ctx)
				mt, rej := m.allow(now)
				var oe *OpenError
				switch {
				case rej == nil && err != nil:
					t.Fatalf("%s: Allow() = %v, model admits", step, err)
				case rej != nil && !errors.As(err, &oe):
					t.Fatalf("%s: Allow() admitted, model rejects with %+v", step, *rej)
				case rej != nil && *oe != *rej:
					t.Fatalf("%s: Allow() rejected with %+v, model with %+v", step, *oe, *rej)
				}
				return pair{tk, mt}, err == nil
			}
			switch op >> 4 {
			case 0, 1, 2: // a call arrives and runs for a while
				if p, ok := admit(); ok {
					held = append(held, p)
				}
			case 3, 4, 5: // a running call reports: success, failure, neutral
				if len(held) == 0 {
					continue
				}
				k := int(op&15) % len(held)
				o := Outcome(op>>4 - 3)
				held[k].real.Record(o)
				m.report(held[k].model, o, now)
				held = append(held[:k], held[k+1:]...)
			case 6, 7, 8, 9, 10, 11:
				c.Advance(time.Duration(op&15+1) * 100 * time.Millisecond)
			case 12:
				b.Isolate()
				if m.state != Isolated {
					m.set(Isolated)
				}
			case 13:
				b.Reset()
				m.set(Closed)
			default: // a call that reports at once
				if p, ok := admit(); ok {
					o := Outcome(op & 3 % 3)
					p.real.Record(o)
					m.report(p.model, o, now)
				}
			}
			if got, want := b.State(), m.view(c.Now().Sub(start)); got != want {
				t.Fatalf("%s: State() = %v, model %v", step, got, want)
			}
			s := b.Snapshot()
			if s.Probes > cfg.Probes {
				t.Fatalf("%s: %d probes in flight, at most %d allowed", step, s.Probes, cfg.Probes)
			}
			if s.State == Closed {
				calls, fail := m.counts(c.Now().Sub(start))
				calls += int64(m.pending) // counted as of now, as Snapshot does
				if s.Calls != calls || s.Failures != fail {
					t.Fatalf("%s: window holds %d calls, %d failures; model %d, %d", step, s.Calls, s.Failures, calls, fail)
				}
			}
		}
	})
}
