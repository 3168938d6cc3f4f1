package hedge

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/again-go/again/cmd/again/internal/sim"
	"github.com/again-go/again/hedge"
	"github.com/again-go/again/retry"
)

// Config configures Run. Zero fields mean the values in brackets.
type Config struct {
	// Dist is the latency of a request on an idle server.
	Dist Distribution
	// Quantiles lists the hedge quantiles to compare, each 0 (no hedging)
	// or in (0, 1) [0, 0.5, 0.9, 0.95, 0.99].
	Quantiles []float64
	// Load [0.3] is the server's utilisation in the normal rows, and
	// Overload [0.8] in the overloaded rows, from the requests alone
	// (hedges add to it): the arrival rate is Load ÷ the mean latency.
	Load, Overload float64
	// MaxHedges [1] is the most hedges per request, 1 to 3.
	MaxHedges int
	// BudgetRatio [0.1] is the TokenRatio of the budget rows'
	// retry.TokenBucket: hedges at most about that share of the successes.
	BudgetRatio float64
	// Requests [100,000] is the number of requests per row, 1,000 to
	// MaxRequests.
	Requests int
	// Seed seeds the random streams; every value, 0 included, is a seed.
	Seed uint64
	// Runner runs the rows; nil runs them one by one.
	Runner sim.Runner
}

// MaxRequests bounds Config.Requests.
const MaxRequests = 1_000_000

// FieldAttempts is the Field of the *sim.FieldError for attempts above MaxAttempts.
const FieldAttempts = "len(Quantiles) × Requests × (1 + MaxHedges)"

// MaxAttempts bounds len(Quantiles) × Requests × (1 + MaxHedges)
// (FieldAttempts): the most attempts the table can start, which is
// its work (four rows per quantile), and, per row, its memory (24 bytes an
// attempt, for two rows at once). At the limit, a server near saturation
// (--load and --overload 0.99) and the worst hedge quantile (0.5), the
// table takes about 6 s of CPU and 170 MB (BENCHMARKS.md); each size at
// its own limit (10⁶ requests, 20 quantiles, 3 hedges) took 100 s and
// 327 MB. The defaults are 1,000,000.
const MaxAttempts = 2_500_000

// Row is one row of Run. Its JSON form is a row of
// `again sim hedge --format json`.
type Row struct {
	// HedgeQuantile is the quantile after which a request is hedged; 0
	// means never.
	HedgeQuantile float64 `json:"hedge_quantile"`
	// ExtraLoad is the hedges sent ÷ the requests.
	ExtraLoad float64 `json:"extra_load"`
	// P50MS, P99MS and P999MS are percentiles of the requests' latency, from
	// arrival to the first answer, in milliseconds.
	P50MS  float64 `json:"p50_ms"`
	P99MS  float64 `json:"p99_ms"`
	P999MS float64 `json:"p999_ms"`
	// Budget reports whether hedges spent from a retry.TokenBucket.
	Budget bool `json:"budget"`
	// Overloaded reports whether the server ran at Overload rather than Load.
	Overloaded bool `json:"overloaded"`
}

func (c *Config) withDefaults() (Config, error) {
	d := *c
	if err := distDefaults(&d.Dist); err != nil {
		return d, err
	}
	if d.Quantiles == nil {
		d.Quantiles = []float64{0, 0.5, 0.9, 0.95, 0.99}
	}
	if len(d.Quantiles) == 0 || len(d.Quantiles) > 20 {
		return d, &sim.FieldError{Field: "Quantiles", Value: fmt.Sprint(len(d.Quantiles)), Accepted: "1 to 20 quantiles"}
	}
	for _, q := range d.Quantiles {
		if q != 0 && !(q > 0 && q < 1) {
			return d, &sim.FieldError{Field: "Quantiles", Value: fmt.Sprint(q), Accepted: "0 (no hedging) or a number in (0, 1)"}
		}
	}
	for _, f := range []struct {
		name string
		v    *float64
		def  float64
	}{{"Load", &d.Load, 0.3}, {"Overload", &d.Overload, 0.8}} {
		if *f.v == 0 {
			*f.v = f.def
		}
		if !(*f.v > 0 && *f.v < 1) {
			return d, &sim.FieldError{Field: f.name, Value: fmt.Sprint(*f.v), Accepted: "a utilisation in (0, 1)"}
		}
	}
	if d.MaxHedges == 0 {
		d.MaxHedges = 1
	}
	if err := sim.CheckInt("MaxHedges", d.MaxHedges, 1, 3); err != nil {
		return d, err
	}
	if d.BudgetRatio == 0 {
		d.BudgetRatio = 0.1
	}
	if !(d.BudgetRatio >= 0.001 && d.BudgetRatio <= 1) {
		return d, &sim.FieldError{Field: "BudgetRatio", Value: fmt.Sprint(d.BudgetRatio), Accepted: "a number from 0.001 to 1"}
	}
	if d.Requests == 0 {
		d.Requests = 100_000
	}
	if err := sim.CheckInt("Requests", d.Requests, 1000, MaxRequests); err != nil {
		return d, err
	}
	// Each size is within its limit, but together they could ask for 80
	// rows of 4 M attempts each.
	if nq, per := len(d.Quantiles), d.Requests*(1+d.MaxHedges); nq > MaxAttempts/per {
		return d, &sim.FieldError{Field: FieldAttempts, Value: sim.Product(nq, d.Requests, 1+d.MaxHedges), Accepted: fmt.Sprintf("at most %d attempts", MaxAttempts)}
	}
	return d, nil
}

// Run simulates the hedging model: requests arrive as a Poisson process at a
// server that shares itself equally among the attempts in progress
// (processor sharing), so that an attempt whose latency on an idle server
// would be S takes S × the attempts in progress over its lifetime: the
// slowdown grows with the load, hedges included. A request is hedged (up
// to MaxHedges copies, each drawing its own latency) once it has waited
// the hedge delay; the first copy to finish answers it and the others are
// canceled, which frees their share at once.
//
// The delay: in the normal rows, the HedgeQuantile of the latencies of
// recent successful attempts, by the library's hedge.Hedger (a window of
// 1000, a warm-up of 100); in the overloaded rows, a fixed delay, the
// quantile of Dist on an idle server, as a client tuned in good times
// would have set it. A quantile delay follows the slowdown and keeps
// hedging near 1 − q of requests; a fixed one hedges nearly every request
// once the server is slower than it, which adds load, which slows the
// server further: the hedge storm. The budget rows spend from a
// retry.TokenBucket (TokenRatio BudgetRatio), which stops the storm.
//
// Rows come in the order: normal then overloaded; for each, the quantiles
// in order, each without then with the budget (the no-hedging quantile 0
// only without). It returns a *FieldError for an invalid c.
func Run(c Config) ([]Row, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, over := range []bool{false, true} {
		for _, q := range c.Quantiles {
			for _, budget := range []bool{false, true} {
				if budget && q == 0 {
					continue
				}
				rows = append(rows, Row{HedgeQuantile: q, Budget: budget, Overloaded: over})
			}
		}
	}
	// Each goroutine hands its row's arrays on to its next row: a new set
	// per row would leave the collector a set per row, of up to 100 MB.
	var (
		mu     sync.Mutex
		spaces []*hedgeSpace
	)
	c.Runner.Run(len(rows), func(i int) {
		mu.Lock()
		s := new(hedgeSpace)
		if n := len(spaces); n > 0 {
			s, spaces = spaces[n-1], spaces[:n-1]
		}
		mu.Unlock()
		rows[i] = hedgeRun(&c, rows[i], s)
		mu.Lock()
		spaces = append(spaces, s)
		mu.Unlock()
	})
	return rows, nil
}

// hedgeSpace is the state of one run of the hedge model, in parallel
// arrays of the narrowest types that keep the run exact: 9 bytes per
// request and 24 per attempt, its end mark included. An overloaded row
// without a budget keeps nearly all of its attempts in progress to the end
// (4 M of them at MaxRequests and 3 hedges), so that the width of
// these arrays is the model's memory. reset sizes them for the most
// attempts a run can start, so that no run copies them to grow them (the
// old and the new array, both live for a moment); Run reuses one per
// goroutine from row to row.
type hedgeSpace struct {
	// Per request, in the order they arrive.
	arrival []time.Duration // when it arrived; once answered, its latency
	state   []uint8         // its attempts, those in their work phase, hedgeDone
	// Per attempt, in the order they start, which is its id.
	req   []int32         // the request
	stall []time.Duration // the latency beyond the work
	ps    psServer
}

// The fields of hedgeSpace.state: the attempts started, up to 4, in the
// low 3 bits; those of them in their work phase, on the server, in the next
// 3; and whether the request was answered, which cancels the attempts
// still running.
const (
	hedgeAttempts uint8 = 0x07
	hedgeWorking  uint8 = 0x08 // one attempt in its work phase
	hedgeDone     uint8 = 0x80
)

// reset empties s for a run of requests requests and at most attempts
// attempts, allocating only when s is too small.
func (s *hedgeSpace) reset(requests, attempts int) {
	s.arrival, s.state = fit(s.arrival, requests), fit(s.state, requests)
	s.req, s.stall = fit(s.req, attempts), fit(s.stall, attempts)
	s.ps = psServer{marks: marks{at: fit(s.ps.marks.at, attempts), id: fit(s.ps.marks.id, attempts)}}
}

// hedgeCopy is a hedge in progress: its attempt and when it started.
type hedgeCopy struct {
	id    int32
	start time.Duration
}

// fit returns s emptied if it can hold n elements, else a new slice that
// can.
func fit[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, 0, n)
	}
	return s[:0]
}

// The events of the hedge model besides completions.
const (
	hedgeArrival uint8 = iota // the next request arrives
	hedgeTimer                // a request's hedge delay passed
	hedgeStalled              // an attempt's stall ended: it answers
)

type hedgeEvent struct {
	kind uint8
	req  int32 // the request; the attempt for hedgeStalled
}

func hedgeRun(c *Config, row Row, s *hedgeSpace) Row {
	budgetID := uint64(0)
	if row.Budget {
		budgetID = 1
	}
	overID := uint64(0)
	load := c.Load
	if row.Overloaded {
		overID, load = 1, c.Overload
	}
	r := sim.Stream(c.Seed, sim.StringID("hedge"), sim.FloatID(row.HedgeQuantile), budgetID, overID)
	cost := float64(c.Dist.Quantile(0.5))
	meanGap := meanWork(&c.Dist, cost) / load // ns between arrivals

	var h *hedge.Hedger
	var fixed time.Duration
	if row.HedgeQuantile > 0 {
		if row.Overloaded {
			fixed = c.Dist.Quantile(row.HedgeQuantile)
		} else {
			h = &hedge.Hedger{Quantile: row.HedgeQuantile, Window: 1000, Warmup: 100, MaxHedges: c.MaxHedges}
		}
	}
	var bucket *retry.TokenBucket
	if row.Budget {
		bucket = &retry.TokenBucket{TokenRatio: c.BudgetRatio}
	}
	delay := func() (time.Duration, bool) {
		switch {
		case row.HedgeQuantile == 0:
			return 0, false
		case h != nil:
			return h.Delay("")
		}
		return fixed, true
	}

	s.reset(c.Requests, c.Requests*(1+c.MaxHedges))
	var (
		events sim.Queue[hedgeEvent]
		ps     = &s.ps
		now    time.Duration
		hedges int
		// With a Hedger, the hedges of the requests in progress, which it
		// observes when the request is answered. A request's first
		// attempt started when it arrived.
		hedged map[int32][3]hedgeCopy
	)
	if h != nil {
		hedged = map[int32][3]hedgeCopy{}
	}
	start := func(req int32) {
		id := int32(len(s.req))
		s.req = append(s.req, req)
		if k := s.state[req] & hedgeAttempts; h != nil && k > 0 {
			copies := hedged[req]
			copies[k-1] = hedgeCopy{id, now}
			hedged[req] = copies
		}
		s.state[req] += 1 + hedgeWorking
		l := float64(c.Dist.Sample(r))
		work := math.Min(l, cost)
		s.stall = append(s.stall, time.Duration(l-work))
		ps.add(id, work)
	}
	finish := func(id int32) {
		req := s.req[id]
		st := s.state[req]
		s.state[req] = st | hedgeDone
		arrival := s.arrival[req]
		s.arrival[req] = now - arrival
		// The request's other attempts are canceled, which frees the
		// share of those in their work phase at once (the one that
		// answers has left its own).
		ps.n -= int(st/hedgeWorking) & 7
		if h != nil {
			// As hedge.Attempt does: a loser that began first ran longer
			// than the winner, a lower bound of its latency. Observe them
			// in the order they began, then the winner.
			copies := hedged[req]
			delete(hedged, req)
			won := 0
			for k := 1; k < int(st&hedgeAttempts); k++ {
				if copies[k-1].id == id {
					won = k
				}
			}
			start := arrival
			for k := 0; ; k++ {
				if k > 0 {
					start = copies[k-1].start
				}
				h.Observe("", now-start)
				if k == won {
					break
				}
			}
		}
		if bucket != nil {
			bucket.Success()
		}
	}

	events.Push(time.Duration(r.ExpFloat64()*meanGap), hedgeEvent{kind: hedgeArrival})
	for {
		next, ok := events.Peek()
		id, at, busy := ps.next(now, s)
		if !ok && !busy {
			break
		}
		if busy && (!ok || at < next) {
			ps.advance(at - now)
			now = at
			ps.pop()
			s.state[s.req[id]] -= hedgeWorking
			if stall := s.stall[id]; stall > 0 {
				events.Push(now+stall, hedgeEvent{kind: hedgeStalled, req: id})
			} else {
				finish(id)
			}
			continue
		}
		ps.advance(next - now)
		now = next
		_, e := events.Pop()
		switch e.kind {
		case hedgeArrival:
			req := int32(len(s.arrival))
			s.arrival, s.state = append(s.arrival, now), append(s.state, 0)
			start(req)
			if d, on := delay(); on {
				events.Push(now+d, hedgeEvent{kind: hedgeTimer, req: req})
			}
			if len(s.arrival) < c.Requests {
				events.Push(now+time.Duration(r.ExpFloat64()*meanGap), hedgeEvent{kind: hedgeArrival})
			}
		case hedgeStalled:
			if s.state[s.req[e.req]]&hedgeDone == 0 { // else canceled
				finish(e.req)
			}
		case hedgeTimer:
			if st := s.state[e.req]; st&hedgeDone != 0 || int(st&hedgeAttempts) > c.MaxHedges || bucket != nil && !bucket.Take() {
				continue
			}
			hedges++
			start(e.req)
			if int(s.state[e.req]&hedgeAttempts) <= c.MaxHedges {
				d, _ := delay()
				events.Push(now+d, hedgeEvent{kind: hedgeTimer, req: e.req})
			}
		}
	}
	// Every request was answered: an unanswered one has an attempt in
	// progress or stalled, which keeps the loop going.
	latencies := s.arrival
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(latencies)))) - 1
		return float64(latencies[max(0, i)]) / float64(time.Millisecond)
	}
	row.ExtraLoad = float64(hedges) / float64(c.Requests)
	row.P50MS, row.P99MS, row.P999MS = pct(0.5), pct(0.99), pct(0.999)
	return row
}

// psServer is a processor-sharing server: each of the n attempts in
// progress advances at 1/n of full speed. It runs on virtual work: work
// grows at 1/n per nanosecond, and an attempt of latency S that began at
// work w ends when work reaches w + S, so that one heap of end marks
// serves however n changes. Canceled attempts leave their marks in the
// heap until they come up (they no longer count in n).
type psServer struct {
	work  float64
	n     int
	marks marks // end marks, as whole nanoseconds of work
}

func (s *psServer) add(id int32, latency float64) {
	s.n++
	s.marks.push(time.Duration(math.Ceil(s.work+latency)), id)
}

// advance moves the clock d forward.
func (s *psServer) advance(d time.Duration) {
	if s.n > 0 {
		s.work += float64(d) / float64(s.n)
	}
}

// next returns the next attempt to end and when, dropping the marks of
// canceled attempts, those of answered requests; busy is false when none
// is in progress.
func (s *psServer) next(now time.Duration, sp *hedgeSpace) (id int32, at time.Duration, busy bool) {
	for len(s.marks.at) > 0 {
		mark, id := s.marks.at[0], s.marks.id[0]
		if sp.state[sp.req[id]]&hedgeDone != 0 {
			s.marks.pop()
			continue
		}
		left := max(float64(mark)-s.work, 0)
		return id, now + time.Duration(math.Ceil(left*float64(s.n))), true
	}
	return 0, 0, false
}

func (s *psServer) pop() {
	s.marks.pop()
	s.n--
}

// marks is psServer's heap of end marks, as queue is but in two parallel
// arrays, 12 bytes a mark rather than queue's 24: an overloaded row holds
// millions. Ties go to the attempt that started first, as queue's go to
// the event pushed first: an attempt pushes its one mark when it starts,
// so that the ids are in the order of the pushes.
type marks struct {
	at []time.Duration
	id []int32
}

func (m *marks) before(i, j int) bool {
	return m.at[i] < m.at[j] || m.at[i] == m.at[j] && m.id[i] < m.id[j]
}

// push adds the mark at for the attempt id.
func (m *marks) push(at time.Duration, id int32) {
	at = sim.EndOfTime(at)
	m.at, m.id = append(m.at, at), append(m.id, id)
	i := len(m.at) - 1
	for i > 0 {
		p := (i - 1) / 4
		if m.at[p] < at || m.at[p] == at && m.id[p] < id {
			break
		}
		m.at[i], m.id[i] = m.at[p], m.id[p]
		i = p
	}
	m.at[i], m.id[i] = at, id
}

// pop removes the earliest mark. The heap must not be empty.
func (m *marks) pop() {
	n := len(m.at) - 1
	at, id := m.at[n], m.id[n]
	m.at, m.id = m.at[:n], m.id[:n]
	if n == 0 {
		return
	}
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		k := c
		for j := c + 1; j < min(c+4, n); j++ {
			if m.before(j, k) {
				k = j
			}
		}
		if m.at[k] > at || m.at[k] == at && m.id[k] > id {
			break
		}
		m.at[i], m.id[i] = m.at[k], m.id[k]
		i = k
	}
	m.at[i], m.id[i] = at, id
}
