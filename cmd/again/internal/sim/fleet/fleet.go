package fleet

import (
	"fmt"
	"math"
	"time"

	"github.com/again-go/again/breaker"
	"github.com/again-go/again/cmd/again/internal/sim"
	"github.com/again-go/again/retry"
)

// Config configures Run. Zero fields mean the values in brackets.
// The table has a cell per client count, failure probability and
// strategy: at most MaxCells, making at most MaxCalls calls in
// all.
type Config struct {
	// Clients lists the fleet sizes [10, 100, 1000], from 1 to MaxClients.
	Clients []int
	// Failures lists the probabilities that an attempt fails, each in
	// [0, 1] [0, 0.1, …, 1].
	Failures []float64
	// Strategies lists the strategies to compare [FleetStrategies()].
	Strategies []sim.Strategy
	// Rate is the calls per second of the whole fleet [1000], spread evenly
	// over its clients, for Duration [10 s].
	Rate     float64
	Duration time.Duration
	// Retries is the most retries per call [3]; negative means none.
	Retries int
	// Seed seeds the random streams; every value, 0 included, is a seed.
	Seed uint64
	// Runner runs the cells; nil runs them one by one.
	Runner sim.Runner
}

// Row is one cell of the fleet table. Its JSON form is a row of
// `again sim fleet --format json`.
type Row struct {
	Clients  int          `json:"clients"`
	Failure  float64      `json:"failure"`
	Strategy sim.Strategy `json:"strategy"`
	// Amplification is the attempts that reached the dependency ÷ the
	// calls: 1 means no retries, Retries+1 every call retried to the end.
	Amplification float64 `json:"amplification"`
	// SuccessRatio is the share of calls that eventually succeeded.
	SuccessRatio float64 `json:"success_ratio"`
}

// Brooker's per-client token bucket (the Bucket strategy).
const (
	bucketCapacity = 5   // tokens; the bucket starts full
	bucketPerCall  = 0.1 // tokens added by every call
)

func (c *Config) withDefaults() (Config, error) {
	d := *c
	if len(d.Clients) == 0 {
		d.Clients = []int{10, 100, 1000}
	}
	if len(d.Failures) == 0 {
		for i := range 11 {
			d.Failures = append(d.Failures, float64(i)/10)
		}
	}
	if len(d.Strategies) == 0 {
		d.Strategies = sim.FleetStrategies()
	}
	if d.Rate == 0 {
		d.Rate = 1000
	}
	if d.Duration == 0 {
		d.Duration = 10 * time.Second
	}
	switch {
	case d.Retries == 0:
		d.Retries = 3
	case d.Retries < 0:
		d.Retries = 0
	}
	for _, n := range d.Clients {
		if err := sim.CheckInt("Clients", n, 1, sim.MaxClients); err != nil {
			return d, err
		}
	}
	for _, p := range d.Failures {
		if !(p >= 0 && p <= 1) {
			return d, &sim.FieldError{Field: "Failures", Value: fmt.Sprint(p), Accepted: "probabilities from 0 to 1"}
		}
	}
	if err := sim.CheckStrategies(d.Strategies, sim.FleetStrategies(), "none, retries, bucket, budget, shared or breaker"); err != nil {
		return d, err
	}
	if !(d.Rate > 0 && d.Rate <= sim.MaxRate) {
		return d, &sim.FieldError{Field: "Rate", Value: fmt.Sprint(d.Rate), Accepted: fmt.Sprintf("a number of calls per second above 0 and up to %d", sim.MaxRate)}
	}
	if d.Duration < 0 || d.Duration > sim.MaxDuration {
		return d, &sim.FieldError{Field: "Duration", Value: d.Duration.String(), Accepted: "a duration from 0 to " + sim.MaxDuration.String()}
	}
	if err := sim.CheckInt("Retries", d.Retries, 0, 100); err != nil {
		return d, err
	}
	// Each list is within its limit, but together they could ask for
	// 10000 × 10000 × 6 cells: a table of gigabytes and days. Bound the
	// cells, and the calls they make in all.
	nc, nf, ns := len(d.Clients), len(d.Failures), len(d.Strategies)
	if nc*nf > MaxCells/ns {
		return d, &sim.FieldError{Field: FieldCells, Value: sim.Product(nc, nf, ns), Accepted: fmt.Sprintf("at most %d cells", MaxCells)}
	}
	if calls := d.calls(); calls > 0 && nc*nf*ns > MaxCalls/calls {
		return d, &sim.FieldError{Field: FieldCalls, Value: sim.Product(nc, nf, ns, calls), Accepted: fmt.Sprintf("at most %d calls", MaxCalls)}
	}
	return d, nil
}

// calls returns the calls of one cell: Rate × Duration.
func (c *Config) calls() int { return int(math.Round(c.Rate * c.Duration.Seconds())) }

// FieldCells is the Field of the *sim.FieldError for cells above MaxCells.
const FieldCells = "len(Clients) × len(Failures) × len(Strategies)"

// FieldCalls is the Field of the *sim.FieldError for calls above MaxCalls.
const FieldCalls = "len(Clients) × len(Failures) × len(Strategies) × Rate × Duration"

// Limits of the fleet model.
const (
	// MaxCells bounds a table's cells: client counts × failure
	// probabilities × strategies. The default table has 198.
	MaxCells = 100_000
	// MaxCalls bounds a table's calls, its cells × Rate × Duration:
	// about 50 s of CPU. The default table makes 1,980,000, and
	// MaxCells cells of the default 10,000 calls make it exactly.
	MaxCalls = 1_000_000_000
)

// Run simulates the model of Marc Brooker's "Fixing retries with token buckets
// and circuit breakers" (2022): a fleet of clients shares Rate calls per
// second for Duration, spread evenly and in turn over the clients; each
// attempt fails independently with a fixed probability; a failed attempt is
// retried at once, up to Retries times, as the strategy allows:
//
//   - none: never; retries: always.
//   - bucket: Brooker's per-client token bucket, which every call fills by
//     0.1 token up to 5 (it starts full) and a retry empties by 1.
//   - budget: a retry.TokenBucket per client; shared: one for the fleet.
//   - breaker: a circuit breaker per client (attempts it rejects never reach
//     the dependency).
//
// Small clients are the point: a per-client bucket or budget starts full,
// and a client that makes few calls spends its initial tokens on retries
// before it has earned any, so the fleet's amplification grows with its size
// while a shared budget's does not.
//
// Run returns one row per client count, failure probability and strategy,
// in that order, or a *FieldError.
func Run(c Config) ([]Row, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	nf, ns := len(c.Failures), len(c.Strategies)
	rows := make([]Row, len(c.Clients)*nf*ns)
	c.Runner.Run(len(rows), func(i int) {
		n, p, s := c.Clients[i/(nf*ns)], c.Failures[i/ns%nf], c.Strategies[i%ns]
		rows[i] = fleetRun(&c, n, p, s)
	})
	return rows, nil
}

// fleetRun runs one cell. The failures come from a stream shared by every
// strategy of the cell, so that the strategies face the same luck.
func fleetRun(c *Config, n int, p float64, s sim.Strategy) Row {
	r := sim.Stream(c.Seed, sim.StringID("fleet"), uint64(n), sim.FloatID(p))
	calls := c.calls()
	var (
		tokens  []float64           // bucket
		budgets []retry.TokenBucket // budget
		shared  retry.TokenBucket
		clock   sim.VirtualClock
		gates   []*breaker.Breaker // breaker
	)
	switch s {
	case sim.Bucket:
		tokens = make([]float64, n)
		for i := range tokens {
			tokens[i] = bucketCapacity
		}
	case sim.Budget:
		budgets = make([]retry.TokenBucket, n)
	case sim.Breaker:
		gates = make([]*breaker.Breaker, n)
		for i := range gates {
			gates[i] = sim.NewBreaker(&clock, r)
		}
	}
	var attempts, succeeded int
	for j := range calls {
		client := j % n
		clock.At = sim.FromFloat(float64(j) / c.Rate * float64(time.Second))
		if s == sim.Bucket {
			tokens[client] = min(bucketCapacity, tokens[client]+bucketPerCall)
		}
		for try := 0; ; try++ {
			var ticket breaker.Ticket
			if s == sim.Breaker {
				t, ok, _ := sim.Admit(gates[client])
				if !ok {
					break // rejected: the dependency never sees it, and no wait is worth it here
				}
				ticket = t
			}
			attempts++
			ok := r.Float64() >= p
			var b retry.Budget
			switch s {
			case sim.Budget:
				b = &budgets[client]
			case sim.Shared:
				b = &shared
			case sim.Breaker:
				ticket.Record(sim.Outcome(ok))
			}
			if ok {
				if b != nil {
					b.Success()
				}
				succeeded++
				break
			}
			if try >= c.Retries {
				break
			}
			retryOK := true
			switch s {
			case sim.NoRetries:
				retryOK = false
			case sim.Bucket:
				if retryOK = tokens[client] >= 1; retryOK {
					tokens[client]--
				}
			case sim.Budget, sim.Shared:
				retryOK = b.Failure()
			}
			if !retryOK {
				break
			}
		}
	}
	return Row{
		Clients:       n,
		Failure:       p,
		Strategy:      s,
		Amplification: float64(attempts) / float64(calls),
		SuccessRatio:  float64(succeeded) / float64(calls),
	}
}
