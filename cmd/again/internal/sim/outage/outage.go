package outage

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
	"github.com/again-go/again/cmd/again/internal/sim"
	"github.com/again-go/again/cmd/again/internal/sim/simshed"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/shed/admission"
)

// Config configures Outage. Zero fields mean the values in brackets.
type Config struct {
	// Strategies lists the strategies to compare [OutageStrategies()].
	Strategies []sim.Strategy
	// Rate is the rate of new requests per second [40]; during the spike
	// it is SpikeRate [80].
	Rate, SpikeRate float64
	// SpikeStart [20 s] and Spike [20 s] place the spike; a negative Spike
	// (NoSpike) means none, the summary then covering what follows
	// SpikeStart. Duration [120 s]
	// is how long new requests arrive. They must expect at most MaxRequests
	// requests: Rate × (Duration − Spike) + SpikeRate × Spike, counting
	// only the part of the spike within Duration.
	SpikeStart, Spike, Duration time.Duration
	// HardStart [0] and Hard, if Hard is positive, add a hard outage, what
	// `again proxy --outage Hard@HardStart` does: every attempt that
	// reaches the server in [HardStart, HardStart+Hard) fails at once, a
	// 503 that costs the server no work, its answer reaching the client
	// after the network delay back. The summary is then about the outage,
	// not the spike (see Summary). Zero Hard means none.
	HardStart, Hard time.Duration
	// Latency [1 s] plus PerRequest [10 ms] for every request in progress is
	// the server's time for a request that arrives.
	Latency, PerRequest time.Duration
	// Timeout [3 s] is how long a client waits for an attempt's response.
	Timeout time.Duration
	// Attempts [3] is the most attempts per request, the first included.
	Attempts int
	// NetMean [100 ms] is the mean of the exponential one-way network delay.
	NetMean time.Duration
	// Policy is the schedule of the backoff, budget and breaker strategies
	// (its Retries is ignored: Attempts decides). Give it explicitly, such
	// as backoff.Default().
	Policy backoff.Policy
	// Shed, if it sheds, puts package shed's Core in front of the server,
	// as again proxy --shed does: at most its limit of attempts in
	// progress, the rest queued under CoDel or answered at once with a 503
	// and a Retry-After, which the backoff, budget and breaker strategies
	// obey as package retry does (never waiting less than the policy's
	// first delay); immediate retries ignore it. A client that gives up
	// leaves the queue, as a request whose context ends does. The zero
	// Shed sheds nothing [none].
	Shed simshed.Config
	// Seed seeds the random streams; every value, 0 included, is a seed.
	Seed uint64
	// Runner runs the strategies; nil runs them one by one.
	Runner sim.Runner
}

// Second is what happened in one second of an outage run. Its JSON
// form is a row of `again sim outage --per-second --format json`.
type Second struct {
	Strategy sim.Strategy `json:"strategy"`
	Second   int          `json:"second"`
	// NewRequests arrived in this second (the demand).
	NewRequests int `json:"new_requests"`
	// Attempts were sent to the server in this second, first ones included.
	Attempts int `json:"attempts"`
	// Successes are the requests whose response reached the client in this
	// second, in time (the goodput).
	Successes int `json:"successes"`
	// Shed is the attempts the server shed in this second (with Shed),
	// and QueueDelayMS the mean time the attempts it started serving in
	// this second had waited in its queue, in milliseconds.
	Shed         int     `json:"shed"`
	QueueDelayMS float64 `json:"queue_delay_ms"`
}

// Summary sums up one strategy's run. Its JSON form is a row of
// `again sim outage --format json`.
type Summary struct {
	Strategy sim.Strategy `json:"strategy"`
	// Amplification is the attempts sent ÷ the new requests, from the end
	// of the spike to the end of the run: the load retrying multiplies the
	// demand by once the trigger is gone. With a hard outage (Hard), it is
	// the same ratio over the outage's seconds, from the one it starts in
	// to the last it covers: the load retrying multiplies the demand by
	// while the server fails, a fast server having nothing left to
	// recover from once the outage ends.
	Amplification float64 `json:"amplification"`
	// Recovered reports that goodput came back to 90 % of demand after the
	// spike (or the hard outage): in some 5 s window that starts at or
	// after its end (the first one starts RecoveryS after it), the
	// successes were at least 90 % of the new requests. A window, not a
	// second: at 40 requests per second one second's count varies by
	// ±16 %.
	Recovered bool `json:"recovered"`
	// RecoveryS is the seconds from the end of the spike (or the hard
	// outage) until the recovery, or nil if the goodput never recovered.
	RecoveryS *float64 `json:"recovery_s"`
	// SuccessRatio is the share of all new requests that succeeded.
	SuccessRatio float64 `json:"success_ratio"`
	// Shed is the attempts the server shed in the whole run (with Shed),
	// and QueueDelayMS the mean time the attempts it served waited in its
	// queue, in milliseconds.
	Shed         int     `json:"shed"`
	QueueDelayMS float64 `json:"queue_delay_ms"`
}

// Result is one strategy's run: its summary and its seconds.
type Result struct {
	Summary Summary
	Seconds []Second
}

// recoveryWindow is the seconds over which goodput is compared with demand.
const recoveryWindow = 5

func (c *Config) withDefaults() (Config, error) {
	d := *c
	if len(d.Strategies) == 0 {
		d.Strategies = sim.OutageStrategies()
	}
	if err := sim.CheckStrategies(d.Strategies, sim.OutageStrategies(), "none, immediate, backoff, budget or breaker"); err != nil {
		return d, err
	}
	for _, f := range []struct {
		name string
		v    *float64
		def  float64
	}{{"Rate", &d.Rate, 40}, {"SpikeRate", &d.SpikeRate, 80}} {
		if *f.v == 0 {
			*f.v = f.def
		}
		if !(*f.v > 0 && *f.v <= sim.MaxRate) {
			return d, &sim.FieldError{Field: f.name, Value: fmt.Sprint(*f.v), Accepted: fmt.Sprintf("a number of requests per second above 0 and up to %d", sim.MaxRate)}
		}
	}
	for _, f := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"SpikeStart", &d.SpikeStart, 20 * time.Second},
		{"Duration", &d.Duration, 120 * time.Second}, {"Latency", &d.Latency, time.Second},
		{"PerRequest", &d.PerRequest, 10 * time.Millisecond}, {"Timeout", &d.Timeout, 3 * time.Second},
		{"NetMean", &d.NetMean, 100 * time.Millisecond},
		{"HardStart", &d.HardStart, 0}, {"Hard", &d.Hard, 0},
	} {
		if *f.v == 0 {
			*f.v = f.def
		}
		if *f.v < 0 || *f.v > sim.MaxDuration {
			return d, &sim.FieldError{Field: f.name, Value: f.v.String(), Accepted: "a duration from 0 to " + sim.MaxDuration.String()}
		}
	}
	switch {
	case d.Spike == 0:
		d.Spike = 20 * time.Second
	case d.Spike < 0:
		d.Spike = 0
	case d.Spike > sim.MaxDuration:
		return d, &sim.FieldError{Field: "Spike", Value: d.Spike.String(), Accepted: "a duration up to " + sim.MaxDuration.String() + ", or NoSpike"}
	}
	if d.Attempts == 0 {
		d.Attempts = 3
	}
	if err := sim.CheckInt("Attempts", d.Attempts, 1, 100); err != nil {
		return d, err
	}
	if err := d.Policy.Validate(); err != nil {
		return d, &sim.FieldError{Field: "Policy", Value: err.Error(), Accepted: "a valid backoff.Policy"}
	}
	if err := d.Shed.Check(); err != nil {
		return d, err
	}
	// Each rate and the duration are within their limits, but together they
	// could ask for 36 M requests: gigabytes and minutes in a model that
	// cannot be interrupted. Bound the expected number of new requests.
	if n := d.expectedRequests(); n > sim.MaxRequests {
		spike := d.spikeWithin()
		return d, &sim.FieldError{Field: FieldRequests,
			Value:    fmt.Sprintf("%g/s × %gs + %g/s × %gs = %.0f", d.Rate, (d.Duration - spike).Seconds(), d.SpikeRate, spike.Seconds(), n),
			Accepted: fmt.Sprintf("at most %d requests", sim.MaxRequests)}
	}
	return d, nil
}

// expectedRequests returns the mean number of new requests in a run.
func (c *Config) expectedRequests() float64 {
	spike := c.spikeWithin()
	return c.Rate*(c.Duration-spike).Seconds() + c.SpikeRate*spike.Seconds()
}

// spikeWithin returns how much of the spike falls within Duration.
func (c *Config) spikeWithin() time.Duration {
	return min(c.SpikeStart+c.Spike, c.Duration) - min(c.SpikeStart, c.Duration)
}

// hardEnd returns the end of the hard outage, 0 if there is none.
func (c *Config) hardEnd() time.Duration {
	if c.Hard <= 0 {
		return 0
	}
	return c.HardStart + c.Hard
}

// inHard reports whether t falls within the hard outage.
func (c *Config) inHard(t time.Duration) bool {
	return c.Hard > 0 && t >= c.HardStart && t < c.HardStart+c.Hard
}

// FieldRequests is the Field of the *sim.FieldError for a run that
// expects more than sim.MaxRequests requests.
const FieldRequests = "Rate × (Duration − Spike) + SpikeRate × Spike"

// NoSpike is an Config.Spike that means no spike at all.
const NoSpike time.Duration = -1

// Run simulates the metastable-failure model of Marc Brooker's posts on
// metastability: requests arrive as a Poisson process at Rate, at
// SpikeRate during the spike; the server works on every request at once
// and takes Latency + PerRequest × (requests in progress) for each, so
// the more it has in progress the slower it gets; a client waits Timeout
// for a response, then retries as its strategy says, up to Attempts
// attempts; the server still works on requests whose client gave up. Every
// message takes an exponential one-way network delay of mean NetMean.
//
// With retries that do nothing to limit the load, a spike longer than the
// timeout leaves the server collapsed after it ends: every request times
// out, so every request becomes Attempts requests, which keeps the server
// slow. A retry budget (one retry.TokenBucket for all clients) or a circuit
// breaker (one breaker.Breaker with its recommended rules, on the model's
// clock) cuts the extra attempts, and the server recovers. An attempt the
// breaker rejects never reaches the server; the client waits for the
// breaker's hint (RetryAfter) as package retry does, or gives up when the
// hint is longer than Timeout.
//
// With a hard outage (Hard) the trigger is a server that fails every
// attempt at once for a while, as `again proxy --outage` makes one: a
// failure answered at once is retried at once by immediate retries, so
// they multiply the load by Attempts while it lasts, where backoff
// spreads the retries out, a budget stops most of them and a breaker,
// once open, keeps even first attempts away.
//
// Every strategy sees the same arrivals. Run returns one result per
// strategy, in the order of c.Strategies, or a *FieldError.
func Run(c Config) ([]Result, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	res := make([]Result, len(c.Strategies))
	c.Runner.Run(len(res), func(i int) { res[i] = outageRun(&c, c.Strategies[i]) })
	return res, nil
}

// The events of the outage model.
const (
	outArrival  uint8 = iota // a new request arrives at the clients
	outSend                  // a client sends an attempt
	outAtServer              // an attempt reaches the server
	outDepart                // the server finishes an attempt
	outSuccess               // a response reaches its client in time
	outTimeout               // a client gives up waiting for an attempt
	outFailure               // a failure (a hard outage's 503) reaches its client
	outShed                  // with Shed: a shed attempt's 503 reaches its client
	outMaxWait               // with Shed: an attempt waited MaxWait in the queue
)

type outEvent struct {
	kind   uint8
	orphan bool // outAtServer: the client has already timed out
	req    int32
	att    int32 // with Shed: the attempt, in atts
}

// outAttempt is one attempt, with Shed: the server may queue it, and its
// answer may come after its client gave up.
type outAttempt struct {
	req     int32             // its request, in reqs
	n       int               // its number, 1 for the first
	arrived time.Duration     // at the server
	start   time.Duration     // its service started
	w       *admission.Waiter // its place in the queue, nil if never queued
	hint    time.Duration     // a shed answer's Retry-After
	over    bool              // its client is done with it: answered or timed out
	// cancelBefore is when its client's leaving stops being a choice for
	// the server (Core.CancelBefore): its timeout, less a margin.
	cancelBefore time.Time

	// What the server did with it, for the tests that replay it through
	// the middleware: reached (it arrived, outside a hard outage), then
	// fate at decided, and if admitted the service time; gone is when its
	// client gives up (its context ends).
	reached          bool
	fate             admission.Reason
	decided, service time.Duration
	gone             time.Duration
}

type outRequest struct {
	ticket   breaker.Ticket // the breaker's ticket for the attempt in flight
	attempts int
	sentAt   time.Duration
	prev     time.Duration // the last delay, for decorrelated jitter
}

func outageRun(c *Config, s sim.Strategy) Result {
	res, _ := outageAttempts(c, s)
	return res
}

// outageAttempts is outageRun, and with Shed its attempts.
func outageAttempts(c *Config, s sim.Strategy) (Result, []outAttempt) {
	arrivals := sim.Stream(c.Seed, sim.StringID("outage arrivals"))
	r := sim.Stream(c.Seed, sim.StringID("outage"), sim.StringID(string(s)))
	secs := int(c.Duration / time.Second)
	seconds := make([]Second, secs)
	for i := range seconds {
		seconds[i] = Second{Strategy: s, Second: i}
	}
	at := func(t time.Duration) *Second {
		if i := int(t / time.Second); i < secs {
			return &seconds[i]
		}
		return nil
	}
	netMean := float64(c.NetMean)
	net := func() time.Duration { return sim.FromFloat(r.ExpFloat64() * netMean) }
	var (
		q          sim.Queue[outEvent]
		reqs       []outRequest
		inProgress int
		succeeded  int
		budget     retry.TokenBucket
		clock      sim.VirtualClock
		br         *breaker.Breaker
	)
	if s == sim.Breaker {
		br = sim.NewBreaker(&clock, r)
	}
	// With Shed: the attempts, the server's shedder, and its counts.
	var (
		atts             []outAttempt
		core             *admission.Core
		shedAll, started int
		waited           time.Duration
		waits            []float64 // per second: the queue delays' sum, in ms
		begun            []int     // per second: the attempts started
	)
	serve := func(a int32, now time.Duration) {
		t := &atts[a]
		t.start, t.fate, t.decided = now, admission.Admitted, now
		t.service = c.Latency + time.Duration(inProgress)*c.PerRequest
		inProgress++
		q.Push(now+t.service, outEvent{kind: outDepart, att: a})
		started++
		waited += now - t.arrived
		if i := int(now / time.Second); i < secs {
			waits[i] += float64(now-t.arrived) / float64(time.Millisecond)
			begun[i]++
		}
	}
	// shedAnswer answers a shed attempt: a 503 and a Retry-After, unless
	// its client went away (the middleware counts it all the same).
	shedAnswer := func(a int32, now time.Duration, why admission.Reason) {
		shedAll++
		atts[a].fate, atts[a].decided = why, now
		if sec := at(now); sec != nil {
			sec.Shed++
		}
		if why != admission.Canceled {
			atts[a].hint = simshed.Hint(core, &clock)
			q.Push(now+net(), outEvent{kind: outShed, att: a})
		}
	}
	if c.Shed.On() {
		waits, begun = make([]float64, secs), make([]int, secs)
		jitter, probes := shedStreams(c, s)
		core = simshed.New(c.Shed, &clock, jitter, probes,
			func(w *admission.Waiter, why admission.Reason) {
				if why == admission.Admitted {
					serve(int32(w.Tag), clock.At)
				} else {
					shedAnswer(int32(w.Tag), clock.At, why)
				}
			})
	}
	q.Push(nextArrival(0, c, arrivals), outEvent{kind: outArrival})
	for q.Len() > 0 {
		now, e := q.Pop()
		clock.At = now
		if core != nil && e.kind >= outSuccess && e.kind != outMaxWait {
			// An attempt's answer, or its client's timeout: the first of
			// the two counts.
			t := &atts[e.att]
			if t.over {
				continue
			}
			t.over = true
			if e.kind == outTimeout && t.w != nil {
				core.Leave(t.w, admission.Canceled) // the client went away
			}
			e.req = t.req
		}
		switch e.kind {
		case outArrival:
			if now >= c.Duration {
				continue
			}
			at(now).NewRequests++
			reqs = append(reqs, outRequest{})
			q.Push(now, outEvent{kind: outSend, req: int32(len(reqs) - 1)})
			q.Push(nextArrival(now, c, arrivals), outEvent{kind: outArrival})
		case outSend:
			rq := &reqs[e.req]
			rq.attempts++
			if br != nil {
				t, ok, wait := sim.Admit(br)
				if !ok {
					// Rejected: an attempt that never reaches the server.
					// As package retry does with the breaker's hint, wait
					// until the breaker admits calls again, unless that is
					// longer than the client would wait for a response.
					if rq.attempts < c.Attempts && wait <= c.Timeout {
						q.Push(now+wait, outEvent{kind: outSend, req: e.req})
					}
					continue
				}
				rq.ticket = t
			}
			rq.sentAt = now
			if sec := at(now); sec != nil {
				sec.Attempts++
			}
			d := net()
			if core != nil {
				// The client waits Timeout for whatever answer comes.
				atts = append(atts, outAttempt{req: e.req, n: rq.attempts, gone: now + c.Timeout})
				a := int32(len(atts) - 1)
				q.Push(now+c.Timeout, outEvent{kind: outTimeout, req: e.req, att: a})
				q.Push(now+d, outEvent{kind: outAtServer, req: e.req, att: a})
				continue
			}
			orphan := d >= c.Timeout
			if orphan {
				q.Push(now+c.Timeout, outEvent{kind: outTimeout, req: e.req})
			}
			q.Push(now+d, outEvent{kind: outAtServer, req: e.req, orphan: orphan})
		case outAtServer:
			if core != nil {
				outShedArrive(c, core, &q, &atts[e.att], e.att, now, clock.Now(), net, serve, shedAnswer)
				continue
			}
			// A hard outage fails the attempt at once, no work for the
			// server; otherwise the server works on it.
			done, answer := now, outFailure
			if !c.inHard(now) {
				done, answer = now+c.Latency+time.Duration(inProgress)*c.PerRequest, outSuccess
				inProgress++
				q.Push(done, outEvent{kind: outDepart})
			}
			if e.orphan {
				continue
			}
			if back, deadline := done+net(), reqs[e.req].sentAt+c.Timeout; back <= deadline {
				q.Push(back, outEvent{kind: answer, req: e.req})
			} else {
				q.Push(deadline, outEvent{kind: outTimeout, req: e.req})
			}
		case outDepart:
			inProgress--
			if core != nil {
				// As the middleware does, a request whose client went away
				// gives its permit back as abandoned: an overload signal
				// (its clients leave only when they time out).
				if t := &atts[e.att]; t.over {
					core.Abandoned(clock.Now(), t.cancelBefore)
				} else {
					core.Done(clock.Now(), now-t.start)
				}
				q.Push(now+net(), outEvent{kind: outSuccess, att: e.att})
			}
		case outMaxWait:
			core.Leave(atts[e.att].w, admission.Timeout)
		case outSuccess:
			succeeded++
			if sec := at(now); sec != nil {
				sec.Successes++
			}
			switch s {
			case sim.Budget:
				budget.Success()
			case sim.Breaker:
				reqs[e.req].ticket.Record(breaker.Success)
			}
		case outTimeout, outFailure, outShed:
			rq := &reqs[e.req]
			if s == sim.Breaker {
				rq.ticket.Record(breaker.Failure)
			}
			if rq.attempts >= c.Attempts {
				continue
			}
			var wait time.Duration
			switch s {
			case sim.NoRetries:
				continue
			case sim.Budget:
				if !budget.Failure() {
					continue
				}
				fallthrough
			case sim.Backoff, sim.Breaker:
				if e.kind == outShed {
					// The server's Retry-After, as package retry waits it:
					// it replaces one wait, not the schedule.
					wait = simshed.HintFloor(atts[e.att].hint, c.Policy)
					break
				}
				rq.prev = c.Policy.Sample(rq.attempts, rq.prev, r)
				wait = rq.prev
			}
			q.Push(now+wait, outEvent{kind: outSend, req: e.req})
		}
	}
	res := Result{Summary: outageSummary(c, s, seconds, succeeded, len(reqs)), Seconds: seconds}
	if core != nil {
		res.Summary.Shed = shedAll
		if started > 0 {
			res.Summary.QueueDelayMS = float64(waited) / float64(started) / float64(time.Millisecond)
		}
		for i := range seconds {
			if begun[i] > 0 {
				seconds[i].QueueDelayMS = waits[i] / float64(begun[i])
			}
		}
	}
	return res, atts
}

// shedStreams returns the random streams of strategy s's shedding server:
// Retry-After's jitter, and an adaptive limit's probes.
func shedStreams(c *Config, s sim.Strategy) (jitter, probes *rand.Rand) {
	return sim.Stream(c.Seed, sim.StringID("outage shed"), sim.StringID(string(s))),
		sim.Stream(c.Seed, sim.StringID("outage shed probes"), sim.StringID(string(s)))
}

// outShedArrive is an attempt's arrival at a server behind core: a hard
// outage fails it at once; otherwise core admits it (serve), queues it
// until MaxWait, or sheds it (shedAnswer).
func outShedArrive(c *Config, core *admission.Core, q *sim.Queue[outEvent], t *outAttempt, a int32, now time.Duration, nowT time.Time,
	net func() time.Duration, serve func(int32, time.Duration), shedAnswer func(int32, time.Duration, admission.Reason)) {
	if c.inHard(now) {
		q.Push(now+net(), outEvent{kind: outFailure, att: a})
		return
	}
	t.arrived, t.reached = now, true
	w := &admission.Waiter{Tag: int(a)}
	// The client sends its timeout (Again-Timeout-Ms), which the server
	// counts from the attempt's arrival.
	req := admission.Request{Attempt: t.n, Timeout: c.Timeout}
	t.cancelBefore = core.CancelBefore(nowT, req)
	queued, why := core.Arrive(nowT, req, w)
	switch {
	case queued:
		t.w = w
		if t.over {
			// Its client gave up before it arrived: a request whose
			// context has ended leaves the queue at once.
			core.Leave(w, admission.Canceled)
			return
		}
		q.Push(now+core.MaxWait(), outEvent{kind: outMaxWait, att: a})
	case why == admission.Admitted:
		serve(a, now)
	default:
		shedAnswer(a, now, why)
	}
}

// ShedFit is how a fixed Shed.Limit fits the server of an Config:
// the server's latency is Latency + PerRequest × the requests in
// progress, so a limit of N serves at most N ÷ (Latency + N × PerRequest)
// requests a second, and its requests take Latency + N × PerRequest.
type ShedFit struct {
	// Rate is the most requests a second the limit serves.
	Rate float64
	// Least is the smallest limit that serves the demand outside the
	// spike (Rate requests a second), 0 if none does.
	Least int
	// Most is the largest limit whose requests take less than the
	// clients' Timeout (before any network delay or wait in the queue),
	// 0 if none does.
	Most int
}

// Fits reports whether the limit serves the demand outside the spike,
// within the clients' timeout; a limit that does not leaves nothing to
// recover after the spike, whatever the clients do.
func (f ShedFit) Fits(limit int) bool { return f.Least > 0 && limit >= f.Least && limit <= f.Most }

// ShedCapacity returns how c's fixed Shed.Limit fits its server, and
// false without a fixed limit or for an invalid c.
func ShedCapacity(c Config) (ShedFit, bool) {
	c, err := c.withDefaults()
	if err != nil || c.Shed.Adaptive != nil || c.Shed.Limit <= 0 {
		return ShedFit{}, false
	}
	n, lat, per := float64(c.Shed.Limit), c.Latency.Seconds(), c.PerRequest.Seconds()
	f := ShedFit{Rate: n / (lat + n*per)}
	if per*c.Rate < 1 {
		f.Least = int(math.Ceil(c.Rate * lat / (1 - per*c.Rate)))
	}
	if c.Timeout > c.Latency && c.PerRequest > 0 {
		f.Most = int((c.Timeout - c.Latency - 1) / c.PerRequest)
	}
	return f, true
}

// Arrivals returns the times at which the new requests of c arrive,
// in order: the demand every strategy of Run faces, for a run made
// elsewhere (real clients) to face the same one. It returns a *FieldError
// for an invalid c.
func Arrivals(c Config) ([]time.Duration, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	r := sim.Stream(c.Seed, sim.StringID("outage arrivals"))
	var out []time.Duration
	for t := nextArrival(0, &c, r); t < c.Duration; t = nextArrival(t, &c, r) {
		out = append(out, t)
	}
	return out, nil
}

// nextArrival returns the arrival after now of a Poisson process whose rate
// changes at the spike's edges: a gap that crosses an edge is redrawn from
// the edge at the new rate, which memorylessness makes exact.
func nextArrival(now time.Duration, c *Config, r *rand.Rand) time.Duration {
	spikeEnd := c.SpikeStart + c.Spike
	for {
		rate, edge := c.Rate, time.Duration(math.MaxInt64)
		switch {
		case now < c.SpikeStart:
			edge = c.SpikeStart
		case now < spikeEnd:
			rate, edge = c.SpikeRate, spikeEnd
		}
		next := now + sim.FromFloat(r.ExpFloat64()/rate*float64(time.Second))
		if next < now {
			next = math.MaxInt64 // past the end of time: a rate near 0
		}
		if next < edge || edge == math.MaxInt64 {
			return next
		}
		now = edge
	}
}

// Summarize sums up the seconds of one strategy's run of c as
// Run does, for runs made elsewhere (real clients against a real
// server, say) to compare with the model's: succeeded and requests are
// the run's successes and new requests in all, for SuccessRatio. It
// returns a *FieldError for an invalid c.
func Summarize(c Config, s sim.Strategy, seconds []Second, succeeded, requests int) (Summary, error) {
	c, err := c.withDefaults()
	if err != nil {
		return Summary{}, err
	}
	return outageSummary(&c, s, seconds, succeeded, requests), nil
}

func outageSummary(c *Config, s sim.Strategy, seconds []Second, succeeded, requests int) Summary {
	sum := Summary{Strategy: s}
	if requests > 0 {
		sum.SuccessRatio = float64(succeeded) / float64(requests)
	}
	end := c.SpikeStart + c.Spike
	from := min(int((end+time.Second-1)/time.Second), len(seconds))
	to := len(seconds)
	if c.Hard > 0 {
		// The outage's seconds, from the one it starts in to the last one
		// it covers; recovery from its end.
		end = c.hardEnd()
		to = min(int((end+time.Second-1)/time.Second), len(seconds))
		from = min(int(c.HardStart/time.Second), to)
	}
	var attempts, news int
	for _, sec := range seconds[from:to] {
		attempts += sec.Attempts
		news += sec.NewRequests
	}
	if news > 0 {
		sum.Amplification = float64(attempts) / float64(news)
	}
	from = min(int((end+time.Second-1)/time.Second), len(seconds))
	recovery := -1
	for w := from; w+recoveryWindow <= len(seconds); w++ {
		var good, demand int
		for _, sec := range seconds[w : w+recoveryWindow] {
			good += sec.Successes
			demand += sec.NewRequests
		}
		if float64(good) >= 0.9*float64(demand) {
			recovery = w
			break
		}
	}
	if recovery >= 0 {
		sum.Recovered = true
		d := float64(recovery) - end.Seconds()
		sum.RecoveryS = &d
	}
	return sum
}
