package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/again-go/again/backoff"
)

// Algorithm is one of the backoff algorithms of the AWS Architecture Blog's
// "Exponential Backoff And Jitter" (2015), as its simulator names them. Each
// maps to a backoff.Policy (see Policy), so the model samples delays with
// the library's own code.
type Algorithm string

// The algorithms of the OCC model, in the order the post discusses them.
const (
	NoBackoff          Algorithm = "none"         // retry at once
	Exponential        Algorithm = "exponential"  // expo(n) = min(cap, base·2ⁿ), no jitter
	FullJitter         Algorithm = "full"         // uniform in [0, expo(n)]
	EqualJitter        Algorithm = "equal"        // expo(n)/2 + uniform in [0, expo(n)/2]
	DecorrelatedJitter Algorithm = "decorrelated" // min(cap, uniform(base, 3·previous sleep))
)

// Algorithms returns every Algorithm in the post's order.
func Algorithms() []Algorithm {
	return []Algorithm{NoBackoff, Exponential, FullJitter, EqualJitter, DecorrelatedJitter}
}

// ParseAlgorithm returns the Algorithm named s ("none", "exponential",
// "full", "equal" or "decorrelated").
func ParseAlgorithm(s string) (Algorithm, bool) {
	a := Algorithm(s)
	return a, slices.Contains(Algorithms(), a)
}

// Policy returns the backoff.Policy whose Sample draws a's sleep after the
// n-th failure (n from 1), with the post's base and cap:
//
//   - exponential, full, equal: the post's expo(n) = min(cap, base·2ⁿ) is
//     the Policy's Delay(n) = min(Max, Initial·2ⁿ⁻¹) with Initial = 2·base,
//     Multiplier 2 and Max = cap (the first sleep is 2·base, not base);
//     NoJitter, FullJitter and EqualJitter draw exactly the post's formulas.
//   - decorrelated: sleep = min(cap, uniform(base, 3·sleep)) starting from
//     sleep = base is DecorrelatedJitter with Initial = base, Multiplier 3
//     and Max = cap, previous delay passed to Sample.
//   - none: a negative Initial, which waits nothing.
//
// The model does not read Retries: it keeps retrying until the write
// succeeds, as the post's clients do.
func (a Algorithm) Policy(base, cap time.Duration) backoff.Policy {
	expo := backoff.Policy{Initial: 2 * base, Multiplier: 2, Max: cap}
	switch a {
	case Exponential:
		expo.Jitter = backoff.NoJitter
	case FullJitter:
		expo.Jitter = backoff.FullJitter
	case EqualJitter:
		expo.Jitter = backoff.EqualJitter
	case DecorrelatedJitter:
		return backoff.Policy{Initial: base, Multiplier: 3, Max: cap, Jitter: backoff.DecorrelatedJitter}
	default:
		return backoff.Policy{Initial: -1, Jitter: backoff.NoJitter}
	}
	return expo
}

// OCCConfig configures OCC. Zero fields mean the post's values.
type OCCConfig struct {
	// Clients lists the numbers of contending clients, one table row group
	// each, from 1 to MaxClients. Empty means 10, 20, …, 190.
	Clients []int
	// Algorithms lists the algorithms to compare; empty means Algorithms().
	Algorithms []Algorithm
	// Runs is the number of runs averaged per cell, 1 to MaxRuns; 0 means 100.
	Runs int
	// Seed seeds every run's random stream; every value, 0 included, is a
	// seed.
	Seed uint64
	// Base and Cap are the post's base and cap; 0 means 5 ms and 2 s.
	Base, Cap time.Duration
	// NetMean and NetSD describe the one-way delay of every message,
	// |N(NetMean, NetSD)|; 0 means 10 ms and 2 ms.
	NetMean, NetSD time.Duration
	// Runner runs the independent runs; nil runs them one by one.
	Runner Runner
}

// OCCRow is one cell of the OCC table: the means over the runs. Its JSON
// form is the one `again sim occ --format json` prints.
type OCCRow struct {
	Clients   int       `json:"clients"`
	Algorithm Algorithm `json:"algorithm"`
	// Calls is the mean number of writes per run, failed ones included: the
	// work the algorithm made the database do.
	Calls float64 `json:"calls"`
	// TimeMS is the mean time in milliseconds until the last client learnt
	// that its write succeeded.
	TimeMS float64 `json:"time_ms"`
}

func (c *OCCConfig) withDefaults() (OCCConfig, error) {
	d := *c
	if len(d.Clients) == 0 {
		for n := 10; n <= 190; n += 10 {
			d.Clients = append(d.Clients, n)
		}
	}
	if len(d.Algorithms) == 0 {
		d.Algorithms = Algorithms()
	}
	if d.Runs == 0 {
		d.Runs = 100
	}
	for _, n := range d.Clients {
		if err := checkInt("Clients", n, 1, MaxClients); err != nil {
			return d, err
		}
	}
	for _, a := range d.Algorithms {
		if _, ok := ParseAlgorithm(string(a)); !ok {
			return d, &FieldError{"Algorithms", fmt.Sprintf("%q", a), "none, exponential, full, equal or decorrelated"}
		}
	}
	if err := checkInt("Runs", d.Runs, 1, MaxRuns); err != nil {
		return d, err
	}
	// Without backoff every client's write can collide with every other's,
	// so a run's work grows with the square of its clients: 100000 clients
	// within their limit would run for hours in a model that cannot be
	// interrupted. Bound the table's work; the default is a quarter of it.
	work := 0.0
	for _, n := range d.Clients {
		work += float64(n) * float64(n) * float64(d.Runs)
	}
	if work > MaxOCCWork {
		return d, &FieldError{"Work", fmt.Sprintf("%.0f", work), fmt.Sprintf("small enough that the sum of clients² × runs is at most %d", MaxOCCWork)}
	}
	for _, f := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{{"Base", &d.Base, 5 * time.Millisecond}, {"Cap", &d.Cap, 2 * time.Second}, {"NetMean", &d.NetMean, 10 * time.Millisecond}, {"NetSD", &d.NetSD, 2 * time.Millisecond}} {
		switch {
		case *f.v == 0:
			*f.v = f.def
		case *f.v < 0 || *f.v > time.Hour:
			return d, &FieldError{f.name, f.v.String(), "a duration from 0 to 1h"}
		}
	}
	return d, nil
}

// OCC runs the optimistic-concurrency model of the AWS Architecture Blog
// post "Exponential Backoff And Jitter" (2015) and of its simulator
// (aws-samples/aws-arch-backoff-simulator): a database holds one row with a
// version number; each client reads the version, then writes conditionally
// on it; a write with a stale version fails, and the client sleeps as its
// algorithm says, then reads again, until its write succeeds. Every message
// (read, reply, write, reply) takes |N(NetMean, NetSD)| one way. All clients
// start at t = 0; a run ends when every client has written.
//
// It returns one row per client count and algorithm, in the order of
// c.Clients and c.Algorithms, or a *FieldError for an invalid c.
func OCC(c OCCConfig) ([]OCCRow, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	cells := len(c.Clients) * len(c.Algorithms)
	type result struct {
		writes int
		end    time.Duration
	}
	res := make([]result, cells*c.Runs)
	net := occNet{mean: float64(c.NetMean), sd: float64(c.NetSD)}
	c.Runner.run(len(res), func(i int) {
		cell, run := i/c.Runs, i%c.Runs
		n, a := c.Clients[cell/len(c.Algorithms)], c.Algorithms[cell%len(c.Algorithms)]
		r := stream(c.Seed, stringID("occ"), uint64(n), stringID(string(a)), uint64(run))
		w, end := occRun(n, a.Policy(c.Base, c.Cap), net, r)
		res[i] = result{w, end}
	})
	rows := make([]OCCRow, cells)
	for cell := range rows {
		var writes, end float64
		for _, r := range res[cell*c.Runs : (cell+1)*c.Runs] {
			writes += float64(r.writes)
			end += float64(r.end)
		}
		rows[cell] = OCCRow{
			Clients:   c.Clients[cell/len(c.Algorithms)],
			Algorithm: c.Algorithms[cell%len(c.Algorithms)],
			Calls:     writes / float64(c.Runs),
			TimeMS:    end / float64(c.Runs) / float64(time.Millisecond),
		}
	}
	return rows, nil
}

// occNet draws one message's one-way delay, |N(mean, sd)| nanoseconds.
type occNet struct{ mean, sd float64 }

func (n occNet) delay(r *rand.Rand) time.Duration {
	return fromFloat(math.Abs(r.NormFloat64()*n.sd + n.mean))
}

// The messages of the OCC model.
const (
	occRead       uint8 = iota // a read arrives at the database
	occReadReply               // the version arrives at the client
	occWrite                   // a conditional write arrives at the database
	occWriteReply              // the write's outcome arrives at the client
)

type occEvent struct {
	client  int32
	kind    uint8
	version int32 // the version read or written; 1 for a successful write reply
}

// occRun simulates one run of n clients sleeping by p, and returns the
// number of writes the database received and the time the last client
// learnt that it had written.
func occRun(n int, p backoff.Policy, net occNet, r *rand.Rand) (writes int, end time.Duration) {
	s := occState{p: p, net: net, r: r, clients: make([]occClient, n)}
	// Both queues pop the same events in the same order; the calendar is
	// faster when it applies (see newOCCCalendar).
	if c := newOCCCalendar(n, net); c != nil {
		for i := range n {
			c.push(net.delay(r), occEvent{client: int32(i), kind: occRead})
		}
		for c.len() > 0 {
			now, e := c.pop()
			if at, next, ok := s.step(now, e); ok {
				c.push(at, next)
			}
		}
		return s.writes, s.end
	}
	var q queue[occEvent]
	q.items = make([]item[occEvent], 0, n)
	for i := range n {
		q.push(net.delay(r), occEvent{client: int32(i), kind: occRead})
	}
	// Every event but a successful write's reply schedules the client's
	// next one: it replaces the event at the top of the queue.
	for q.len() > 0 {
		now, e := q.top()
		if at, next, ok := s.step(now, e); ok {
			q.replace(at, next)
		} else {
			q.pop()
		}
	}
	return s.writes, s.end
}

type occClient struct {
	failures int
	prev     time.Duration // the last sleep, for decorrelated jitter
}

// occState is a run of the OCC model between events.
type occState struct {
	p       backoff.Policy
	net     occNet
	r       *rand.Rand
	clients []occClient
	version int32
	writes  int
	end     time.Duration
}

// step handles e, which happens at now, and returns the client's next
// event and when, or false if the client is done.
func (s *occState) step(now time.Duration, e occEvent) (time.Duration, occEvent, bool) {
	s.end = now
	switch e.kind {
	case occRead:
		return now + s.net.delay(s.r), occEvent{e.client, occReadReply, s.version}, true
	case occReadReply:
		return now + s.net.delay(s.r), occEvent{e.client, occWrite, e.version}, true
	case occWrite:
		s.writes++
		ok := int32(0)
		if e.version == s.version {
			s.version++
			ok = 1
		}
		return now + s.net.delay(s.r), occEvent{e.client, occWriteReply, ok}, true
	}
	if e.version == 1 {
		return 0, occEvent{}, false // this client is done
	}
	c := &s.clients[e.client]
	c.failures++
	c.prev = s.p.Sample(c.failures, c.prev, s.r)
	return now + s.net.delay(s.r) + c.prev, occEvent{e.client, occRead, 0}, true
}
