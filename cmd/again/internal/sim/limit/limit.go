package limit

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/again-go/again/cmd/again/internal/sim"
	"github.com/again-go/again/fault/latency"
	"github.com/again-go/again/limiter"
)

// Limiting is how the client of the limit model bounds its calls in
// flight.
type Limiting string

// The limitings that Run compares, with package limiter's own code.
const (
	None      Limiting = "none"      // no bound
	Fixed     Limiting = "fixed"     // a fixed limit of Workers
	AIMD      Limiting = "aimd"      // limiter.AIMD{Min: 1}
	Vegas     Limiting = "vegas"     // limiter.Vegas{}
	Gradient2 Limiting = "gradient2" // limiter.Gradient2{Min: 1}
)

// Limitings returns the limitings of Run, in order.
func Limitings() []Limiting {
	return []Limiting{None, Fixed, AIMD, Vegas, Gradient2}
}

// Config configures Run. Zero fields mean the values in brackets:
// Envoy's first published run of its adaptive concurrency filter (issue
// 7789), a server of 8 workers, a service time with p90 50 ms and p99
// 150 ms, clients with a 1 s timeout, the load ramped past the tipping
// point.
type Config struct {
	// Limitings lists what to compare [Limitings()].
	Limitings []Limiting
	// Workers [8] is how many requests the server serves at once; the
	// others wait in its queue, first come first served.
	Workers int
	// Service [lognormal, median 13 ms, σ 1.05: p90 50 ms, p99 150 ms] is
	// a request's service time.
	Service latency.Distribution
	// Timeout [1 s] is the client's: a request unanswered by then fails
	// (a loss for the limit), and the server, which does not know, still
	// serves it.
	Timeout time.Duration
	// From [0.5] and To [3] are the offered load at the start and at the
	// end of the run, as ratios of the server's capacity (Workers ÷ the
	// mean service time), ramped linearly: Poisson arrivals.
	From, To float64
	// Duration [160 s] is the run; Window [10 s] the span of one row.
	Duration, Window time.Duration
	// Seed seeds the random streams; every value, 0 included, is a seed.
	Seed uint64
	// Runner runs the cells; nil runs them one by one.
	Runner sim.Runner
}

// Row is one limiting over one window of the run. Its JSON form is a
// row of `again sim limit --format json`.
type Row struct {
	Limiter Limiting `json:"limiter"`
	// TimeS is the end of the window, in seconds from the start.
	TimeS float64 `json:"time_s"`
	// OfferedRatio is the load offered in the window ÷ capacity.
	OfferedRatio float64 `json:"offered_ratio"`
	// Limit is the limit's mean over the window, seen by each arrival (0
	// without a limit).
	Limit float64 `json:"limit"`
	// GoodputRatio is the requests answered within the timeout per
	// second ÷ capacity.
	GoodputRatio float64 `json:"goodput_ratio"`
	// SuccessP50MS and SuccessP99MS are percentiles of the successful
	// requests' latency, in milliseconds.
	SuccessP50MS float64 `json:"success_p50_ms"`
	SuccessP99MS float64 `json:"success_p99_ms"`
	// Refused is how many requests the limit refused locally, and TimedOut
	// how many timed out.
	Refused  int `json:"refused"`
	TimedOut int `json:"timed_out"`
}

// MaxWorkers bounds Config.Workers.
const MaxWorkers = 1000

// FieldRequests is the Field of the *sim.FieldError for too many requests
// in one cell of Run.
const FieldRequests = "max(From, To) × capacity × Duration"

func (c *Config) withDefaults() (Config, error) {
	d := *c
	if len(d.Limitings) == 0 {
		d.Limitings = Limitings()
	}
	for _, l := range d.Limitings {
		if !slices.Contains(Limitings(), l) {
			return d, &sim.FieldError{Field: "Limitings", Value: `"` + string(l) + `"`, Accepted: "none, fixed, aimd, vegas or gradient2"}
		}
	}
	if d.Workers == 0 {
		d.Workers = 8
	}
	if err := sim.CheckInt("Workers", d.Workers, 1, MaxWorkers); err != nil {
		return d, err
	}
	if d.Service == (latency.Distribution{}) {
		d.Service = latency.Distribution{Name: latency.Lognormal, Median: 13 * time.Millisecond, Sigma: 1.05}
	}
	var err error
	if d.Service, err = d.Service.Defaults(); err != nil {
		return d, &sim.FieldError{Field: "Service", Value: d.Service.String(), Accepted: err.Error()}
	}
	for _, f := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{{"Timeout", &d.Timeout, time.Second}, {"Duration", &d.Duration, 160 * time.Second}, {"Window", &d.Window, 10 * time.Second}} {
		if *f.v == 0 {
			*f.v = f.def
		}
		if *f.v <= 0 || *f.v > sim.MaxDuration {
			return d, &sim.FieldError{Field: f.name, Value: f.v.String(), Accepted: "a duration above 0 and up to " + sim.MaxDuration.String()}
		}
	}
	if d.Window > d.Duration {
		return d, &sim.FieldError{Field: "Window", Value: d.Window.String(), Accepted: "at most Duration (" + d.Duration.String() + ")"}
	}
	if d.From == 0 {
		d.From = 0.5
	}
	if d.To == 0 {
		d.To = 3
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"From", d.From}, {"To", d.To}} {
		if !(f.v > 0 && f.v <= sim.MaxDemandRatio) {
			return d, &sim.FieldError{Field: f.name, Value: fmt.Sprint(f.v), Accepted: fmt.Sprintf("a ratio above 0 and up to %d", sim.MaxDemandRatio)}
		}
	}
	if n := max(d.From, d.To) * d.capacity() * d.Duration.Seconds(); n > sim.MaxRequests {
		return d, &sim.FieldError{Field: FieldRequests, Value: fmt.Sprintf("%.0f", n), Accepted: fmt.Sprintf("at most %d requests", sim.MaxRequests)}
	}
	return d, nil
}

// capacity is the requests per second the server serves: Workers ÷ the
// mean service time (a lognormal's mean is its median × e^(σ²/2); a
// Pareto's Scale × α/(α−1)).
func (c *Config) capacity() float64 {
	s := c.Service
	mean := float64(s.Scale) * s.Alpha / (s.Alpha - 1)
	if s.Name == latency.Lognormal {
		mean = float64(s.Median) * math.Exp(s.Sigma*s.Sigma/2)
	}
	return float64(c.Workers) / (mean / float64(time.Second))
}

// Run simulates the concurrency-limit model: one client offers Poisson
// requests, ramped from From to To times the server's capacity, to a
// server of Workers workers and a FIFO queue; a request unanswered after
// Timeout fails (the server still serves it). Before each request the
// client takes a permit of its limiter (package limiter, on the model's
// clock, without waiting): none, a fixed limit of Workers, or an adaptive
// one, which learns each success's RTT and each timeout as a loss. Run
// returns one row per limiting and window, limiting-major, or a
// *FieldError.
func Run(c Config) ([]Row, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	windows := int(math.Ceil(float64(c.Duration) / float64(c.Window)))
	rows := make([]Row, len(c.Limitings)*windows)
	c.Runner.Run(len(c.Limitings), func(i int) {
		copy(rows[i*windows:], limitRun(&c, c.Limitings[i], windows))
	})
	return rows, nil
}

// newLimiter makes the limiting l's Limiter on the model's clock, or nil.
func newLimiter(c *Config, l Limiting, clock limiter.Clock, r limiterRand) *limiter.Limiter {
	cfg := limiter.Config{Clock: clock, Rand: r}
	switch l {
	case None:
		return nil
	case Fixed:
		cfg.Limit = c.Workers
	case AIMD:
		cfg.Algorithm = limiter.AIMD{Min: 1}
	case Vegas:
		cfg.Algorithm = limiter.Vegas{}
	case Gradient2:
		cfg.Algorithm = limiter.Gradient2{Min: 1}
	}
	lim, err := limiter.New(cfg)
	if err != nil {
		panic("sim: " + err.Error())
	}
	return lim
}

type limiterRand interface{ Float64() float64 }

// limEvent is an event of the limit model: a request's arrival, its
// service's end, or its client's timeout.
type limEvent struct {
	kind uint8
	req  int32
}

const (
	limArrival uint8 = iota
	limServed
	limTimeout
)

type limRequest struct {
	arrived time.Duration
	permit  limiter.Permit
	ended   bool // answered or timed out: the client is done with it
}

func limitRun(c *Config, l Limiting, windows int) []Row {
	arrivals := sim.Stream(c.Seed, sim.StringID("limit arrivals"))
	service := sim.Stream(c.Seed, sim.StringID("limit service"))
	r := sim.Stream(c.Seed, sim.StringID("limit"), sim.StringID(string(l)))
	var clock sim.VirtualClock
	lim := newLimiter(c, l, &clock, r)
	capacity := c.capacity()
	rows := make([]Row, windows)
	limits := make([]float64, windows)
	counts := make([]int, windows)
	lat := make([][]float64, windows)
	for i := range rows {
		rows[i] = Row{Limiter: l, TimeS: (time.Duration(i+1) * c.Window).Seconds()}
	}
	win := func(at time.Duration) int { return min(int(at/c.Window), windows-1) }
	// The offered rate at t: linear from From to To × capacity.
	rate := func(t time.Duration) float64 {
		return capacity * (c.From + (c.To-c.From)*float64(t)/float64(c.Duration))
	}
	var (
		q     sim.Queue[limEvent]
		reqs  []limRequest
		wait  []int32 // the server's queue
		busy  int
		start = func(now time.Duration, i int32) {
			busy++
			q.Push(now+c.Service.Sample(service), limEvent{limServed, i})
		}
	)
	q.Push(sim.FromFloat(arrivals.ExpFloat64()/rate(0)*float64(time.Second)), limEvent{kind: limArrival})
	for q.Len() > 0 {
		now, e := q.Pop()
		clock.At = now
		w := win(now)
		switch e.kind {
		case limArrival:
			if now >= c.Duration {
				continue
			}
			q.Push(now+sim.FromFloat(arrivals.ExpFloat64()/rate(now)*float64(time.Second)), limEvent{kind: limArrival})
			rows[w].OfferedRatio++
			if lim != nil {
				limits[w] += float64(lim.Limit())
				counts[w]++
			}
			rq := limRequest{arrived: now}
			if lim != nil {
				p, ok := lim.TryAcquire()
				if !ok {
					rows[w].Refused++
					continue
				}
				rq.permit = p
			}
			reqs = append(reqs, rq)
			i := int32(len(reqs) - 1)
			q.Push(now+c.Timeout, limEvent{limTimeout, i})
			if busy < c.Workers {
				start(now, i)
			} else {
				wait = append(wait, i)
			}
		case limServed:
			busy--
			if len(wait) > 0 {
				next := wait[0]
				wait = wait[1:]
				start(now, next)
			}
			rq := &reqs[e.req]
			if rq.ended {
				continue
			}
			rq.ended = true
			rq.permit.Done(limiter.Success)
			rows[w].GoodputRatio++
			lat[w] = append(lat[w], float64(now-rq.arrived)/float64(time.Millisecond))
		case limTimeout:
			rq := &reqs[e.req]
			if rq.ended {
				continue
			}
			rq.ended = true
			rq.permit.Done(limiter.Dropped)
			rows[w].TimedOut++
		}
	}
	for i := range rows {
		span := c.Window.Seconds()
		if i == windows-1 {
			span = (c.Duration - time.Duration(i)*c.Window).Seconds()
		}
		rows[i].OfferedRatio /= span * capacity
		rows[i].GoodputRatio /= span * capacity
		if counts[i] > 0 {
			rows[i].Limit = limits[i] / float64(counts[i])
		}
		slices.Sort(lat[i])
		rows[i].SuccessP50MS, rows[i].SuccessP99MS = sim.Percentile(lat[i], 0.5), sim.Percentile(lat[i], 0.99)
	}
	return rows
}
