package occ

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/cmd/again/internal/sim"
)

// Algorithm is one of the backoff algorithms of the AWS Architecture Blog's
// "Exponential Backoff And Jitter" (2015), as its simulator names them. Each
// maps to a backoff.Policy (see Policy), and the model's sleeps are that
// policy's: the nominal delays from Policy.Delay, the jitter exactly as
// Policy.Sample draws it (see occSleeps).
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

// Config configures Run. Zero fields mean the post's values.
type Config struct {
	// Clients lists the numbers of contending clients, one table row group
	// each, from 1 to MaxClients. Empty means 10, 20, …, 190.
	Clients []int
	// Algorithms lists the algorithms to compare; empty means Algorithms().
	Algorithms []Algorithm
	// Runs is the number of runs averaged per cell, 1 to MaxRuns; 0 means
	// 100. The sum of Clients² × Runs must be at most MaxWork.
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
	Runner sim.Runner
}

// Row is one cell of the OCC table: the means over the runs. Its JSON
// form is the one `again sim occ --format json` prints.
type Row struct {
	Clients   int       `json:"clients"`
	Algorithm Algorithm `json:"algorithm"`
	// Calls is the mean number of writes per run, failed ones included: the
	// work the algorithm made the database do.
	Calls float64 `json:"calls"`
	// TimeMS is the mean time in milliseconds until the last client learnt
	// that its write succeeded.
	TimeMS float64 `json:"time_ms"`
}

func (c *Config) withDefaults() (Config, error) {
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
		if err := sim.CheckInt("Clients", n, 1, sim.MaxClients); err != nil {
			return d, err
		}
	}
	for _, a := range d.Algorithms {
		if _, ok := ParseAlgorithm(string(a)); !ok {
			return d, &sim.FieldError{Field: "Algorithms", Value: fmt.Sprintf("%q", a), Accepted: "none, exponential, full, equal or decorrelated"}
		}
	}
	if err := sim.CheckInt("Runs", d.Runs, 1, MaxRuns); err != nil {
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
	if work > MaxWork {
		return d, &sim.FieldError{Field: FieldWork, Value: occWork(d.Clients, d.Runs), Accepted: fmt.Sprintf("at most %d", MaxWork)}
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
			return d, &sim.FieldError{Field: f.name, Value: f.v.String(), Accepted: "a duration from 0 to 1h"}
		}
	}
	return d, nil
}

// occWork formats the sum of clients² × runs with its terms, as "(10² +
// 20² + … + 190²) × 100 = 247000 × 100 = 24700000", or "1000² × 1000 =
// 1000000000" for one client count.
func occWork(clients []int, runs int) string {
	var sum float64
	terms := make([]string, 0, 4)
	for i, n := range clients {
		sum += float64(n) * float64(n)
		switch {
		case len(clients) <= 4 || i < 2 || i == len(clients)-1:
			terms = append(terms, fmt.Sprintf("%d²", n))
		case i == 2:
			terms = append(terms, "…")
		}
	}
	if len(clients) == 1 {
		return fmt.Sprintf("%s × %d = %.0f", terms[0], runs, sum*float64(runs))
	}
	return fmt.Sprintf("(%s) × %d = %.0f × %d = %.0f", strings.Join(terms, " + "), runs, sum, runs, sum*float64(runs))
}

// Limits of the OCC table.
const (
	MaxRuns = 100_000 // runs per cell
	// MaxWork bounds the OCC table's Σ clients² × runs, its work when
	// clients do not back off: about 6 s on 2 cores. The default table's is
	// 24,700,000.
	MaxWork = 100_000_000
)

// FieldWork is the Field of the *sim.FieldError for a table whose work
// exceeds MaxWork.
const FieldWork = "the sum of Clients² × Runs"

// Run simulates the optimistic-concurrency model of the AWS Architecture Blog
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
func Run(c Config) ([]Row, error) {
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
	sleeps := make([]occSleeps, len(c.Algorithms))
	for i, a := range c.Algorithms {
		sleeps[i] = newOCCSleeps(a, c.Base, c.Cap)
	}
	c.Runner.Run(len(res), func(i int) {
		cell, run := i/c.Runs, i%c.Runs
		n, a := c.Clients[cell/len(c.Algorithms)], c.Algorithms[cell%len(c.Algorithms)]
		r := &occRand{s: sim.Mix(c.Seed ^ sim.StreamKey(sim.StringID("occ"), uint64(n), sim.StringID(string(a)), uint64(run)))}
		wk := occWorkers.Get().(*occWorker)
		w, end := occRun(n, &sleeps[cell%len(c.Algorithms)], net, r, wk)
		occWorkers.Put(wk)
		res[i] = result{w, end}
	})
	rows := make([]Row, cells)
	for cell := range rows {
		var writes, end float64
		for _, r := range res[cell*c.Runs : (cell+1)*c.Runs] {
			writes += float64(r.writes)
			end += float64(r.end)
		}
		rows[cell] = Row{
			Clients:   c.Clients[cell/len(c.Algorithms)],
			Algorithm: c.Algorithms[cell%len(c.Algorithms)],
			Calls:     writes / float64(c.Runs),
			TimeMS:    end / float64(c.Runs) / float64(time.Millisecond),
		}
	}
	return rows, nil
}

// occNet draws messages' one-way delays, |N(mean, sd)| nanoseconds.
type occNet struct{ mean, sd float64 }

func (n occNet) delay(r *occRand) time.Duration {
	return occDuration(math.Abs(r.norm()*n.sd + n.mean))
}

// one returns a message's delay for the standard normal number x.
func (n occNet) one(x float64) time.Duration { return occDuration(math.Abs(x*n.sd + n.mean)) }

// sum returns the sum of two messages' delays for the standard normal
// numbers x and y.
func (n occNet) sum(x, y float64) time.Duration {
	return occDuration(math.Abs(x*n.sd+n.mean) + math.Abs(y*n.sd+n.mean))
}

// occDuration converts a message's delay to a Duration. It needs no
// bound: Config bounds the mean and the deviation to an hour, and no
// normal number the model draws exceeds 14 in size (zigR plus a tail draw
// of at most 53·ln 2 / zigR, from a uniform of 53 bits), so a delay is at
// most 15 hours, far from where a conversion would wrap round.
func occDuration(ns float64) time.Duration { return time.Duration(ns) }

// occRand is a run's random source: wyrand, one 64-bit multiply per draw,
// and its own normal draw, because the model draws 60 million normal
// numbers for the default table and math/rand/v2's PCG and NormFloat64,
// through an interface, were half of its time. It is a backoff.Rand
// itself, so that the tests can draw Policy.Sample's sleeps from the same
// numbers as the model's (see occSleeps).
type occRand struct{ s uint64 }

// Uint64 returns the next 64 random bits.
func (r *occRand) Uint64() uint64 {
	r.s += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(r.s, r.s^0xe7037ed1a0b428db)
	return hi ^ lo
}

// Float64 is uniform in [0, 1), as rand.Float64.
func (r *occRand) Float64() float64 { return float64(r.Uint64()>>11) * 0x1p-53 }

// norm returns a standard normal number.
func (r *occRand) norm() float64 {
	j := int32(r.Uint64())
	if x, ok := occZig.fast(j); ok {
		return x
	}
	return r.normSlow(j)
}

// norm2 returns two standard normal numbers, drawn from one Uint64 when
// both fall in the ziggurat's rectangles (97 % of the time).
func (r *occRand) norm2() (float64, float64) {
	u := r.Uint64()
	if x, y, ok := occZig.pair(u); ok {
		return x, y
	}
	return r.norm2Slow(u)
}

// norm2Slow returns the two numbers of the draw u when they do not both
// fall in their rectangles: the first from u's low half, then the second
// from its high half, each finished by normSlow if it needs to be.
func (r *occRand) norm2Slow(u uint64) (float64, float64) {
	j, k := int32(u), int32(u>>32)
	x, ok := occZig.fast(j)
	if !ok {
		x = r.normSlow(j)
	}
	y, ok := occZig.fast(k)
	if !ok {
		y = r.normSlow(k)
	}
	return x, y
}

// zigR is where the ziggurat's base strip ends and its tail begins
// (Marsaglia and Tsang, "The Ziggurat Method for Generating Random
// Variables", 2000, for zigN strips of area zigV each). 256 strips rather
// than 128 halve the draws that need the slow path and its exp.
const (
	zigN = 256
	zigR = 3.6541528853610088
	zigV = 4.92867323399e-3
)

// ziggurat holds the strips of a zigN-strip ziggurat covering the standard
// normal's density, for 32-bit signed draws j: strip i = j mod zigN is
// accepted at once if |j| < k[i], giving j·w[i]; f[i] is the density at
// the strip's outer edge. The strips hold w[i] and the test in a form
// without |j| (see zigStrip), four strips to a cache line.
type ziggurat struct {
	s [zigN]zigStrip
	f [zigN]float64
}

// zigStrip is a strip's width w and its test |j| < k, kept as
// uint32(j) + off < span with off = k − 1 and span = 2k − 1 (0 when k is
// 0, which accepts nothing): the same draws pass, in an add and a compare.
type zigStrip struct {
	w         float64
	off, span uint32
}

// setK sets the strip's test to |j| < k.
func (s *zigStrip) setK(k uint32) {
	s.off, s.span = k-1, 0
	if k > 0 {
		s.span = 2*k - 1
	}
}

// occZig is computed once and never written again.
var occZig = newZiggurat()

func newZiggurat() *ziggurat {
	const m = 1 << 31
	var k [zigN]uint32
	z := &ziggurat{}
	dn, tn := zigR, zigR
	q := zigV / math.Exp(-0.5*dn*dn)
	k[0] = uint32(dn / q * m)
	z.s[0].w, z.s[zigN-1].w = q/m, dn/m
	z.f[0], z.f[zigN-1] = 1, math.Exp(-0.5*dn*dn)
	for i := zigN - 2; i >= 1; i-- {
		dn = math.Sqrt(-2 * math.Log(zigV/dn+math.Exp(-0.5*dn*dn)))
		k[i+1] = uint32(dn / tn * m)
		tn = dn
		z.f[i] = math.Exp(-0.5 * dn * dn)
		z.s[i].w = dn / m
	}
	for i := range z.s {
		z.s[i].setK(k[i])
	}
	return z
}

// fast returns j's number if j falls inside its strip's rectangle.
func (z *ziggurat) fast(j int32) (float64, bool) {
	s := &z.s[j&(zigN-1)]
	return float64(j) * s.w, uint32(j)+s.off < s.span
}

// pair returns the numbers of the two halves of u, and whether both fall
// inside their strips' rectangles. It is small enough to inline, so that
// the model's step draws its messages' delays without a call.
func (z *ziggurat) pair(u uint64) (float64, float64, bool) {
	j, k := int32(u), int32(u>>32)
	a, b := &z.s[j&(zigN-1)], &z.s[k&(zigN-1)]
	return float64(j) * a.w, float64(k) * b.w, uint32(j)+a.off < a.span && uint32(k)+b.off < b.span
}

// normSlow finishes a draw j that fell outside its strip's rectangle: in
// the wedge under the density, in the tail, or rejected and drawn again.
func (r *occRand) normSlow(j int32) float64 {
	z := occZig
	for {
		i := j & (zigN - 1)
		x := float64(j) * z.s[i].w
		if i == 0 { // the tail beyond zigR, by Marsaglia's method
			for {
				x = -math.Log(1-r.Float64()) / zigR
				y := -math.Log(1 - r.Float64())
				if y+y >= x*x {
					break
				}
			}
			if j > 0 {
				return zigR + x
			}
			return -zigR - x
		}
		if z.f[i]+r.Float64()*(z.f[i-1]-z.f[i]) < math.Exp(-0.5*x*x) {
			return x
		}
		j = int32(r.Uint64())
		if x, ok := z.fast(j); ok {
			return x
		}
	}
}

// occRun simulates one run of n clients sleeping by sl, and returns the
// number of writes the database received and the time the last client
// learnt that it had written. Its memory comes from w, which it leaves
// ready for the next run.
//
// Only the writes' arrivals at the database go through the event queue: a
// client's write succeeds if no other write succeeded between its read and
// it, so a write's fate is known when the writes are taken in time order,
// and the read that precedes it, the replies and the sleep need no events
// of their own. A read at the same nanosecond as a successful write sees
// it.
func occRun(n int, sl *occSleeps, net occNet, r *occRand, w *occWorker) (writes int, end time.Duration) {
	if cap(w.clients) < n {
		w.clients = make([]occClient, n)
	}
	clients := w.clients[:n]
	clear(clients)
	s := occState{sl: sl, net: net, r: r, clients: clients, lastWrite: -1}
	// Both queues pop the same events in the same order; the calendar is
	// faster when it applies (see occCalendar.reset).
	if c := &w.cal; c.reset(n, net, sl.longest()) {
		for i := range n {
			c.push(s.attempt(int32(i), net.delay(r)), int32(i))
		}
		for c.len() > 0 {
			now, i := c.pop()
			if at, ok := s.write(now, i); ok {
				c.push(at, i)
			}
		}
		return s.writes, s.end
	}
	q := &w.heap
	q.Reset()
	for i := range n {
		q.Push(s.attempt(int32(i), net.delay(r)), int32(i))
	}
	// Every failed write schedules the client's next one: it replaces the
	// event at the top of the queue.
	for q.Len() > 0 {
		now, i := q.Top()
		if at, ok := s.write(now, i); ok {
			q.Replace(at, i)
		} else {
			q.Pop()
		}
	}
	return s.writes, s.end
}

// occWorker is the memory of one run at a time, kept between runs so that
// the default table's 9,500 runs do not each allocate (and the collector
// clear) a calendar and the clients' state: Run takes one from occWorkers
// for each run and puts it back after, so each goroutine of the Runner
// reuses one.
type occWorker struct {
	clients []occClient
	cal     occCalendar
	heap    sim.Queue[int32]
}

var occWorkers = sync.Pool{New: func() any { return new(occWorker) }}

type occClient struct {
	read     time.Duration // when the client's current read reached the database
	failures int
	prev     time.Duration // the last sleep, for decorrelated jitter
}

// occState is a run of the OCC model between events.
type occState struct {
	sl        *occSleeps
	net       occNet
	r         *occRand
	clients   []occClient
	lastWrite time.Duration // the last successful write's arrival, or -1
	writes    int
	end       time.Duration
}

// attempt records that client i's read reaches the database at t, and
// returns when its write will: after the read's reply and the write's way
// there, one draw each.
//
// It and write draw as s.r.norm2 does, with its common case written out:
// a call that cannot be inlined, twice per write, was a tenth of the
// model's instructions.
func (s *occState) attempt(i int32, t time.Duration) time.Duration {
	s.clients[i].read = t
	u := s.r.Uint64()
	x, y, ok := occZig.pair(u)
	if !ok {
		x, y = s.r.norm2Slow(u)
	}
	return t + s.net.sum(x, y)
}

// write handles client i's write reaching the database at now. It returns
// when the client's next write will, or false if this one succeeded.
func (s *occState) write(now time.Duration, i int32) (time.Duration, bool) {
	s.writes++
	c := &s.clients[i]
	// The reply, and the next read if the write failed: drawn together,
	// the second unused after a success.
	u := s.r.Uint64()
	x, y, ok := occZig.pair(u)
	if !ok {
		x, y = s.r.norm2Slow(u)
	}
	reply := now + s.net.one(x)
	if s.lastWrite <= c.read {
		s.lastWrite = now
		s.end = max(s.end, reply) // the client learns it is done
		return 0, false
	}
	c.failures++
	c.prev = s.sl.sample(c.failures, c.prev, s.r)
	return s.attempt(i, reply+c.prev+s.net.one(y)), true
}
