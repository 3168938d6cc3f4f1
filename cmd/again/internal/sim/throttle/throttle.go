package throttle

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/cmd/again/internal/sim"
	"github.com/again-go/again/cmd/again/internal/sim/simshed"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/shed/admission"
	"github.com/again-go/again/throttle"
)

// Throttling is how the client of the throttle model holds its requests
// back before they are sent.
type Throttling string

// The throttlings that Run compares. Every one retries on the same
// policy; all but None with a retry.TokenBucket.
const (
	None     Throttling = "none"      // retries, nothing to limit them
	Budget   Throttling = "budget"    // a retry budget only: first attempts all sent
	SentOnly Throttling = "sent-only" // failsafe-go's formula: counts only the requests sent
	SRE      Throttling = "sre-k2"    // throttle.Throttler, K = 2
	SRE11    Throttling = "sre-k1.1"  // throttle.Throttler, K = 1.1
	CUBIC    Throttling = "cubic"     // throttle.Rate, AWS's adaptive send rate
)

// Throttlings returns the throttlings of Run, in order.
func Throttlings() []Throttling {
	return []Throttling{None, Budget, SentOnly, SRE, SRE11, CUBIC}
}

// Config configures Run. Zero fields mean the values in
// brackets.
type Config struct {
	// Throttlings lists what to compare [Throttlings()].
	Throttlings []Throttling
	// Demands lists the demand ratios D / a, each above 0 and up to 100
	// [1, 2, 3, 5, 10, 20, 30].
	Demands []float64
	// Capacity is the requests per second the backend accepts, a [100];
	// it answers the others at once with an overload signal (503).
	Capacity float64
	// Duration [5 min] is how long requests arrive; the figures cover
	// what follows Warmup [2.5 min], once the throttles' windows (2 min)
	// have filled.
	Duration, Warmup time.Duration
	// Latency [20 ms] is the backend's time for a request it accepts.
	Latency time.Duration
	// Attempts [3] is the most attempts per request, the first included;
	// a local rejection counts as one, as in retry.Do.
	Attempts int
	// Shed, if it sheds, replaces the backend's token bucket by a server
	// that protects itself with package shed's Core, as again proxy
	// --shed does: max(1, round(Capacity × Latency)) workers, each
	// serving a request in workers ÷ Capacity (Capacity per second in
	// all), behind the shedder's limit, queue (by attempt: first attempts
	// before retries) and CoDel; a shed attempt is answered at once with a
	// 503 and a Retry-After, which every client waits as package retry
	// does (never less than its policy's first delay). The zero Shed
	// sheds nothing [none].
	Shed simshed.Config
	// Seed seeds the random streams; every value, 0 included, is a seed.
	Seed uint64
	// Runner runs the cells; nil runs them one by one.
	Runner sim.Runner
}

// Row is one throttling at one demand. Its JSON form is a row of
// `again sim throttle --format json`.
type Row struct {
	DemandRatio float64    `json:"demand_ratio"`
	Throttler   Throttling `json:"throttler"`
	// PReject is the share of the attempts asked for that the client
	// rejected locally.
	PReject float64 `json:"p_reject"`
	// BackendLoadRatio is the attempts that reached the backend per
	// second, ÷ its capacity.
	BackendLoadRatio float64 `json:"backend_load_ratio"`
	// GoodputRatio is the requests that succeeded per second ÷ capacity.
	GoodputRatio float64 `json:"goodput_ratio"`
	// LatencyP50MS and LatencyP99MS are percentiles of the time from a
	// successful request's arrival to its response, retries and waits
	// included, in milliseconds.
	LatencyP50MS float64 `json:"latency_p50_ms"`
	LatencyP99MS float64 `json:"latency_p99_ms"`
	// ShedRatio is the attempts the server shed per second ÷ its
	// capacity (with Shed), and QueueDelayMS the mean time the attempts
	// it admitted waited in its queue, in milliseconds.
	ShedRatio    float64 `json:"shed_ratio"`
	QueueDelayMS float64 `json:"queue_delay_ms"`
}

// DefaultDemands returns the demand ratios of the default sweep.
func DefaultDemands() []float64 { return []float64{1, 2, 3, 5, 10, 20, 30} }

// FieldRequests is the Field of the FieldError for too many
// requests in one cell of Run.
const FieldRequests = "max(Demands) × Capacity × Duration"

func (c *Config) withDefaults() (Config, error) {
	d := *c
	if len(d.Throttlings) == 0 {
		d.Throttlings = Throttlings()
	}
	for _, t := range d.Throttlings {
		if !slices.Contains(Throttlings(), t) {
			return d, &sim.FieldError{Field: "Throttlings", Value: `"` + string(t) + `"`, Accepted: "none, budget, sent-only, sre-k2, sre-k1.1 or cubic"}
		}
	}
	if len(d.Demands) == 0 {
		d.Demands = DefaultDemands()
	}
	for _, x := range d.Demands {
		if !(x > 0 && x <= sim.MaxDemandRatio) {
			return d, &sim.FieldError{Field: "Demands", Value: fmt.Sprint(x), Accepted: fmt.Sprintf("ratios above 0 and up to %d", sim.MaxDemandRatio)}
		}
	}
	if d.Capacity == 0 {
		d.Capacity = 100
	}
	if !(d.Capacity > 0 && d.Capacity <= sim.MaxRate) {
		return d, &sim.FieldError{Field: "Capacity", Value: fmt.Sprint(d.Capacity), Accepted: fmt.Sprintf("a number of requests per second above 0 and up to %d", sim.MaxRate)}
	}
	for _, f := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{{"Duration", &d.Duration, 5 * time.Minute}, {"Warmup", &d.Warmup, 150 * time.Second}, {"Latency", &d.Latency, 20 * time.Millisecond}} {
		if *f.v == 0 {
			*f.v = f.def
		}
		if *f.v < 0 || *f.v > sim.MaxDuration {
			return d, &sim.FieldError{Field: f.name, Value: f.v.String(), Accepted: "a duration from 0 to " + sim.MaxDuration.String()}
		}
	}
	if d.Warmup >= d.Duration {
		return d, &sim.FieldError{Field: "Warmup", Value: d.Warmup.String(), Accepted: "shorter than Duration (" + d.Duration.String() + ")"}
	}
	if d.Attempts == 0 {
		d.Attempts = 3
	}
	if err := sim.CheckInt("Attempts", d.Attempts, 1, 100); err != nil {
		return d, err
	}
	if err := d.Shed.Check(); err != nil {
		return d, err
	}
	top := slices.Max(d.Demands)
	if n := top * d.Capacity * d.Duration.Seconds(); n > sim.MaxRequests {
		return d, &sim.FieldError{Field: FieldRequests, Value: fmt.Sprintf("%g × %g/s × %gs = %.0f", top, d.Capacity, d.Duration.Seconds(), n),
			Accepted: fmt.Sprintf("at most %d requests", sim.MaxRequests)}
	}
	return d, nil
}

// Run simulates the client-side throttling model: one client offers
// D × Capacity new requests per second (Poisson) to a backend that accepts
// Capacity per second (a token bucket holding a tenth of a second's) and
// answers the rest at once with an overload signal. The client retries an
// overloaded attempt on backoff.Default()'s schedule, up to Attempts
// attempts, through a retry.TokenBucket (except None), and holds
// attempts back as its throttling says: the library's throttle.Throttler
// on the model's clock (K 2 or 1.1), its throttle.Rate (a local rejection
// then waits for the token, as retry.Do waits a rejection's hint), or
// failsafe-go's AdaptiveThrottler at its defaults,
// p = min(0.9, max(0, (sent − accepts/0.9) / (sent + 1))) over a minute,
// which counts only the requests sent.
//
// With the SRE counting the backend's load stays near K × Capacity
// whatever the demand; counting only the requests sent, it grows with
// the square root of the demand. Run returns one row per demand and
// throttling, demand-major, or a *FieldError.
func Run(c Config) ([]Row, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	rows := make([]Row, len(c.Demands)*len(c.Throttlings))
	run := throttleRun
	if c.Shed.On() {
		run = throttleShedRun
	}
	c.Runner.Run(len(rows), func(i int) {
		rows[i] = run(&c, c.Demands[i/len(c.Throttlings)], c.Throttlings[i%len(c.Throttlings)])
	})
	return rows, nil
}

// gate is a throttling as the model drives it: ask at a time, report.
type gate interface {
	// admit reports whether an attempt may be sent at now, and if not,
	// how long until one may (0: no hint, the policy's delay applies).
	admit(now time.Time) (wait time.Duration, ok bool)
	done(now time.Time, overloaded bool)
}

type noGate struct{}

func (noGate) admit(time.Time) (time.Duration, bool) { return 0, true }
func (noGate) done(time.Time, bool)                  {}

type sreGate struct{ t *throttle.Throttler }

func (g sreGate) admit(now time.Time) (time.Duration, bool) { return 0, g.t.AdmitAt(now) == nil }
func (g sreGate) done(_ time.Time, overloaded bool)         { g.t.Done(overloaded) }

type rateGate struct{ r *throttle.Rate }

func (g rateGate) admit(now time.Time) (time.Duration, bool) { return g.r.AcquireAt(now) }
func (g rateGate) done(now time.Time, overloaded bool)       { g.r.DoneAt(now, overloaded) }

// sentOnly is failsafe-go's AdaptiveThrottler's counting (and Finagle's):
// p = min(0.9, max(0, (sent − accepts/threshold) / (sent + 1))), sent
// counting only the requests that were sent, over failsafe-go's default
// period of a minute, here in 6 buckets of 10 s.
type sentOnly struct {
	threshold float64
	r         backoff.Rand
	b         [6]struct{ sent, acc int64 }
	epoch     int64
}

// failsafe-go's defaults: its successRateThreshold and maxRejectionRate.
const (
	sentOnlyThreshold = 0.9
	sentOnlyMaxP      = 0.9
)

func (g *sentOnly) roll(now time.Time) *struct{ sent, acc int64 } {
	e := now.UnixNano() / int64(10*time.Second)
	for ; g.epoch < e; g.epoch++ {
		g.b[(g.epoch+1)%int64(len(g.b))] = struct{ sent, acc int64 }{}
	}
	return &g.b[e%int64(len(g.b))]
}

func (g *sentOnly) admit(now time.Time) (time.Duration, bool) {
	cur := g.roll(now)
	var sent, acc int64
	for _, b := range g.b {
		sent, acc = sent+b.sent, acc+b.acc
	}
	p := min(sentOnlyMaxP, max(0, (float64(sent)-float64(acc)/g.threshold)/float64(sent+1)))
	if p > 0 && g.r.Float64() < p {
		return 0, false
	}
	cur.sent++
	return 0, true
}

func (g *sentOnly) done(now time.Time, overloaded bool) {
	if !overloaded {
		g.roll(now).acc++
	}
}

// newGate makes the throttling t on the model's random stream.
func newGate(t Throttling, r backoff.Rand, start time.Time) gate {
	switch t {
	case SRE, SRE11:
		k := 2.0
		if t == SRE11 {
			k = 1.1
		}
		th, err := throttle.New(throttle.Config{K: k, Rand: r})
		if err != nil {
			panic("sim: " + err.Error())
		}
		return sreGate{th}
	case CUBIC:
		rt, err := throttle.NewRate(throttle.RateConfig{FailFast: true, Clock: fixedClock(start)})
		if err != nil {
			panic("sim: " + err.Error())
		}
		return rateGate{rt}
	case SentOnly:
		return &sentOnly{threshold: sentOnlyThreshold, r: r, epoch: start.UnixNano() / int64(10*time.Second)}
	}
	return noGate{}
}

// fixedClock is the time a Rate starts at.
type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

type thrEvent struct {
	req int32
}

type thrRequest struct {
	arrived  time.Duration
	attempts int
	prev     time.Duration
}

// client is what the two runs of the throttle model share: the random
// streams, the clock, the throttling, the schedule and the retry budget
// of the client offering demand × Capacity.
type client struct {
	arrivals, r *rand.Rand
	clock       sim.VirtualClock
	g           gate
	policy      backoff.Policy
	budget      *retry.TokenBucket // nil for None
	rate        float64
}

func newClient(c *Config, demand float64, t Throttling) *client {
	cl := &client{
		arrivals: sim.Stream(c.Seed, sim.StringID("throttle arrivals"), sim.FloatID(demand)),
		r:        sim.Stream(c.Seed, sim.StringID("throttle"), sim.FloatID(demand), sim.StringID(string(t))),
		policy:   backoff.Default(),
		rate:     demand * c.Capacity,
	}
	cl.g = newGate(t, cl.r, cl.clock.Now())
	if t != None {
		cl.budget = &retry.TokenBucket{}
	}
	return cl
}

// ask asks the throttling for attempt number attempts of a request: ok,
// or rejected locally, then whether the request asks again and after what
// wait: the rejection's hint, or the policy's delay (drawn from prev, which
// it updates). A rejection spends no budget.
func (cl *client) ask(c *Config, attempts int, prev *time.Duration) (wait time.Duration, again, ok bool) {
	wait, ok = cl.g.admit(cl.clock.Now())
	if ok || attempts >= c.Attempts {
		return 0, false, ok
	}
	if wait == 0 {
		wait = cl.policy.Sample(attempts, *prev, cl.r)
		*prev = wait
	}
	return wait, true, false
}

// next returns the arrival of the new request after now.
func (cl *client) next(now time.Duration) time.Duration {
	return now + sim.FromFloat(cl.arrivals.ExpFloat64()/cl.rate*float64(time.Second))
}

func throttleRun(c *Config, demand float64, t Throttling) Row {
	cl := newClient(c, demand, t)
	r, g, policy, budget, clock := cl.r, cl.g, cl.policy, cl.budget, &cl.clock
	var (
		q                            sim.Queue[thrEvent]
		reqs                         []thrRequest
		asked, rejected, sent, goods int
		latencies                    []float64
	)
	// The backend: a token bucket of Capacity per second, a tenth of a
	// second's worth deep.
	depth := max(c.Capacity/10, 1)
	tokens, filled := depth, time.Duration(0)
	accept := func(now time.Duration) bool {
		tokens = min(depth, tokens+(now-filled).Seconds()*c.Capacity)
		filled = now
		if tokens >= 1 {
			tokens--
			return true
		}
		return false
	}
	next := cl.next
	const arrival = -1
	q.Push(next(0), thrEvent{req: arrival})
	for q.Len() > 0 {
		now, e := q.Pop()
		clock.At = now
		counted := now >= c.Warmup && now < c.Duration
		if e.req == arrival {
			if now >= c.Duration {
				continue
			}
			reqs = append(reqs, thrRequest{arrived: now})
			e.req = int32(len(reqs) - 1)
			q.Push(next(now), thrEvent{req: arrival})
		}
		rq := &reqs[e.req]
		rq.attempts++
		if counted {
			asked++
		}
		if wait, again, ok := cl.ask(c, rq.attempts, &rq.prev); !ok {
			if counted {
				rejected++
			}
			if again {
				q.Push(now+wait, e)
			}
			continue
		}
		if counted {
			sent++
		}
		if accept(now) {
			g.done(clock.Now(), false)
			if budget != nil {
				budget.Success()
			}
			if counted {
				goods++
				latencies = append(latencies, float64(now-rq.arrived+c.Latency)/float64(time.Millisecond))
			}
			continue
		}
		g.done(clock.Now(), true)
		if rq.attempts < c.Attempts && (budget == nil || budget.Failure()) {
			d := policy.Sample(rq.attempts, rq.prev, r)
			rq.prev = d
			q.Push(now+d, e)
		}
	}
	span := (c.Duration - c.Warmup).Seconds() * c.Capacity
	row := Row{DemandRatio: demand, Throttler: t,
		BackendLoadRatio: float64(sent) / span, GoodputRatio: float64(goods) / span}
	if asked > 0 {
		row.PReject = float64(rejected) / float64(asked)
	}
	slices.Sort(latencies)
	row.LatencyP50MS, row.LatencyP99MS = sim.Percentile(latencies, 0.5), sim.Percentile(latencies, 0.99)
	return row
}

// shedEvent is an event of the throttle model with a shedding server.
type shedEvent struct {
	kind uint8
	req  int32
	n    int32 // shedMaxWait: the attempt number, stale once another starts
}

const (
	shedAttempt uint8 = iota // a request asks for an attempt (-1: a new request)
	shedServed               // the server finished serving req's attempt
	shedMaxWait              // req's attempt waited MaxWait in the queue
)

type shedRequest struct {
	arrived  time.Duration
	attempts int
	prev     time.Duration
	queued   time.Duration // when its attempt reached the server
	start    time.Duration // when the shedder admitted it
	w        admission.Waiter
}

// throttleShedRun is throttleRun against a server that sheds with
// c.Shed: the answer to an attempt comes when the server serves it or
// sheds it, not at once.
func throttleShedRun(c *Config, demand float64, t Throttling) Row {
	cl := newClient(c, demand, t)
	r, g, policy, budget, clock := cl.r, cl.g, cl.policy, cl.budget, &cl.clock
	workers := max(1, int(math.Round(c.Capacity*c.Latency.Seconds())))
	service := sim.FromFloat(float64(workers) / c.Capacity * float64(time.Second))
	var (
		q                                   sim.Queue[shedEvent]
		reqs                                []*shedRequest
		asked, rejected, sent, goods, shedN int
		admitted                            int
		waited                              time.Duration
		latencies                           []float64
		busy                                int
		fifo                                []int32 // admitted, waiting for a worker
	)
	counted := func(now time.Duration) bool { return now >= c.Warmup && now < c.Duration }
	// retryAfter schedules req's next attempt after wait, if it has one left.
	retryAfter := func(now time.Duration, i int32, wait time.Duration) {
		if rq := reqs[i]; rq.attempts < c.Attempts && (budget == nil || budget.Failure()) {
			q.Push(now+wait, shedEvent{kind: shedAttempt, req: i})
		}
	}
	var core *shedCore
	work := func(now time.Duration, i int32) {
		busy++
		q.Push(now+service, shedEvent{kind: shedServed, req: i})
	}
	probes := sim.Stream(c.Seed, sim.StringID("throttle shed probes"), sim.FloatID(demand), sim.StringID(string(t)))
	core = newShedCore(c, clock, r, probes, func(i int32, why admission.Reason) {
		now := clock.At
		rq := reqs[i]
		if why != admission.Admitted {
			if counted(now) {
				shedN++
			}
			hint := simshed.Hint(core.Core, clock)
			g.done(clock.Now(), true)
			retryAfter(now, i, simshed.HintFloor(hint, policy))
			return
		}
		rq.start = now
		if counted(now) {
			admitted++
			waited += now - rq.queued
		}
		if busy < workers {
			work(now, i)
		} else {
			fifo = append(fifo, i)
		}
	})
	next := cl.next
	q.Push(next(0), shedEvent{kind: shedAttempt, req: -1})
	for q.Len() > 0 {
		now, e := q.Pop()
		clock.At = now
		switch e.kind {
		case shedServed:
			busy--
			if len(fifo) > 0 {
				work(now, fifo[0])
				fifo = fifo[1:]
			}
			rq := reqs[e.req]
			core.Done(clock.Now(), now-rq.start)
			g.done(clock.Now(), false)
			if budget != nil {
				budget.Success()
			}
			if counted(now) {
				goods++
				latencies = append(latencies, float64(now-rq.arrived)/float64(time.Millisecond))
			}
			continue
		case shedMaxWait:
			if rq := reqs[e.req]; rq.attempts == int(e.n) {
				core.Leave(&rq.w, admission.Timeout)
			}
			continue
		}
		if e.req < 0 {
			if now >= c.Duration {
				continue
			}
			reqs = append(reqs, &shedRequest{arrived: now})
			e.req = int32(len(reqs) - 1)
			q.Push(next(now), shedEvent{kind: shedAttempt, req: -1})
		}
		rq := reqs[e.req]
		rq.attempts++
		if counted(now) {
			asked++
		}
		if wait, again, ok := cl.ask(c, rq.attempts, &rq.prev); !ok {
			if counted(now) {
				rejected++
			}
			if again {
				q.Push(now+wait, e)
			}
			continue
		}
		if counted(now) {
			sent++
		}
		rq.queued = now
		rq.w = admission.Waiter{Tag: int(e.req)}
		if core.arrive(now, rq.attempts, &rq.w) {
			q.Push(now+core.MaxWait(), shedEvent{shedMaxWait, e.req, int32(rq.attempts)})
		}
	}
	span := (c.Duration - c.Warmup).Seconds() * c.Capacity
	row := Row{DemandRatio: demand, Throttler: t,
		BackendLoadRatio: float64(sent) / span, GoodputRatio: float64(goods) / span, ShedRatio: float64(shedN) / span}
	if asked > 0 {
		row.PReject = float64(rejected) / float64(asked)
	}
	if admitted > 0 {
		row.QueueDelayMS = float64(waited) / float64(admitted) / float64(time.Millisecond)
	}
	slices.Sort(latencies)
	row.LatencyP50MS, row.LatencyP99MS = sim.Percentile(latencies, 0.5), sim.Percentile(latencies, 0.99)
	return row
}

// shedCore is the shedder of throttleShedRun, telling decide the fate of
// every attempt that reaches it, queued or not.
type shedCore struct {
	*admission.Core
	clock  *sim.VirtualClock
	decide func(int32, admission.Reason)
}

func newShedCore(c *Config, clock *sim.VirtualClock, r, probes backoff.Rand, decide func(int32, admission.Reason)) *shedCore {
	sc := &shedCore{clock: clock, decide: decide}
	sc.Core = simshed.New(c.Shed, clock, r, probes, func(w *admission.Waiter, why admission.Reason) { decide(int32(w.Tag), why) })
	return sc
}

// arrive hands the attempt number n, w's, to the shedder at now, and
// reports whether it waits in the queue (its fate then comes later).
func (sc *shedCore) arrive(now time.Duration, n int, w *admission.Waiter) bool {
	queued, why := sc.Arrive(sc.clock.Now(), admission.Request{Attempt: n}, w)
	if !queued {
		sc.decide(int32(w.Tag), why)
	}
	return queued
}
