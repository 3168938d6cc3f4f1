package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
	simmodel "github.com/again-go/again/cmd/again/internal/sim"
	"github.com/again-go/again/cmd/again/internal/sim/outage"
	"github.com/again-go/again/fault"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
)

// outageScenario is `again sim outage`'s scenario shrunk 5 times in time
// (its rates × latencies, the load, kept): 50 requests per second, 100
// during a 4 s spike from 4 s, a server taking 200 ms + 8 ms per request
// in progress, clients waiting 600 ms an attempt, 3 attempts, no network
// delay (loopback).
var outageScenario = outage.Config{
	Rate: 50, SpikeRate: 100, SpikeStart: 4 * time.Second, Spike: 4 * time.Second, Duration: 24 * time.Second,
	Latency: 200 * time.Millisecond, PerRequest: 8 * time.Millisecond, Timeout: 600 * time.Millisecond,
	Attempts: 3, NetMean: 1, // 1 ns: none, as on loopback
	Policy: backoff.Policy{Initial: 100 * time.Millisecond, Max: 2 * time.Second},
	Seed:   1,
}

// BenchmarkOutageAgainstSim runs the outage scenario for real, clients
// through the proxy to a loopback server that slows down as the sim's
// does, and reports each strategy's amplification and recovery beside
// the simulator's. Run it once: -bench OutageAgainstSim -benchtime 1x.
func BenchmarkOutageAgainstSim(b *testing.B) {
	sims, err := outage.Run(outageScenario)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%-10s %12s %12s %14s %14s", "strategy", "sim ampl.", "real ampl.", "sim recovery", "real recovery")
	for _, s := range sims {
		b.Run(string(s.Summary.Strategy), func(b *testing.B) {
			real := realOutage(b, outageScenario, s.Summary.Strategy)
			b.ReportMetric(real.Amplification, "amplification")
			b.ReportMetric(s.Summary.Amplification, "sim-amplification")
			b.Logf("%-10s %12.2f %12.2f %14s %14s", s.Summary.Strategy, s.Summary.Amplification, real.Amplification, recovery(s.Summary.RecoveryS), recovery(real.RecoveryS))
			// The simulator's spread over seeds: one run is one draw of
			// the arrivals (and the breaker's jittered open periods).
			lo, hi, sum := s.Summary.Amplification, s.Summary.Amplification, s.Summary.Amplification
			for seed := uint64(2); seed <= 20; seed++ {
				c := outageScenario
				c.Seed, c.Strategies = seed, []simmodel.Strategy{s.Summary.Strategy}
				r, err := outage.Run(c)
				if err != nil {
					b.Fatal(err)
				}
				a := r[0].Summary.Amplification
				lo, hi, sum = min(lo, a), max(hi, a), sum+a
			}
			b.Logf("%-10s sim amplification over seeds 1 to 20: %.2f to %.2f, mean %.2f", s.Summary.Strategy, lo, hi, sum/20)
		})
	}
}

func recovery(s *float64) string {
	if s == nil {
		return "never"
	}
	return fmt.Sprintf("%.0f s", *s)
}

// realOutage runs c for strategy s with real clients, proxy and server,
// and sums it up as the simulator does.
func realOutage(b *testing.B, c outage.Config, s simmodel.Strategy) outage.Summary {
	secs := int(c.Duration / time.Second)
	var newReqs, attempts, successes = make([]atomic.Int64, secs), make([]atomic.Int64, secs), make([]atomic.Int64, secs)
	start := time.Now()
	at := func(counts []atomic.Int64) {
		if i := int(time.Since(start) / time.Second); i < secs {
			counts[i].Add(1)
		}
	}
	var inProgress atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at(attempts)
		// The sim's server: it works on every request at once, each
		// taking longer the more are in progress, whether or not its
		// client is still waiting.
		d := c.Latency + time.Duration(inProgress.Add(1)-1)*c.PerRequest
		time.Sleep(d)
		inProgress.Add(-1)
		io.WriteString(w, "ok")
	}))
	defer func() { up.CloseClientConnections(); up.Close() }()
	to, _ := url.Parse(up.URL)
	p, err := New(Config{To: to})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(p)
	defer func() { srv.CloseClientConnections(); srv.Close() }()
	tr := &http.Transport{MaxIdleConnsPerHost: 1000}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	var (
		budget retry.TokenBucket
		br     *breaker.Breaker
		mu     sync.Mutex // r
		r      = rand.New(rand.NewPCG(c.Seed, 2))
	)
	if s == simmodel.Breaker {
		br, _ = breaker.New(breaker.Config{})
	}
	attempt := func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), c.Timeout)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return err == nil && resp.StatusCode == 200
	}
	request := func() {
		var prev time.Duration
		for n := 1; n <= c.Attempts; n++ {
			var ticket breaker.Ticket
			if br != nil {
				t, err := br.Allow(context.Background())
				if err != nil {
					var hint interface{ RetryAfter() time.Duration }
					wait := time.Duration(0)
					if errors.As(err, &hint) {
						wait = hint.RetryAfter()
					}
					if n == c.Attempts || wait > c.Timeout {
						return
					}
					time.Sleep(wait)
					continue
				}
				ticket = t
			}
			ok := attempt()
			if br != nil {
				if ok {
					ticket.Record(breaker.Success)
				} else {
					ticket.Record(breaker.Failure)
				}
			}
			if ok {
				at(successes)
				if s == simmodel.Budget {
					budget.Success()
				}
				return
			}
			if n == c.Attempts || s == simmodel.NoRetries || s == simmodel.Budget && !budget.Failure() {
				return
			}
			if s != simmodel.Immediate {
				mu.Lock()
				prev = c.Policy.Sample(n, prev, r)
				mu.Unlock()
				time.Sleep(prev)
			}
		}
	}
	arrivals := rand.New(rand.NewPCG(c.Seed, 1))
	var wg sync.WaitGroup
	spikeEnd := c.SpikeStart + c.Spike
	for next := time.Duration(0); next < c.Duration; {
		rate := c.Rate
		if next >= c.SpikeStart && next < spikeEnd {
			rate = c.SpikeRate
		}
		next += time.Duration(arrivals.ExpFloat64() / rate * float64(time.Second))
		time.Sleep(time.Until(start.Add(next)))
		at(newReqs)
		wg.Go(request)
	}
	wg.Wait()
	// The server is still at work on requests whose clients gave up; the
	// summary counts only what the clients saw.

	// The simulator's summary: amplification from the spike's end, and
	// the first 5 s window after it whose successes reach 90 % of demand.
	sum := outage.Summary{Strategy: s}
	from := int((spikeEnd + time.Second - 1) / time.Second)
	var att, news int64
	for i := from; i < secs; i++ {
		att += attempts[i].Load()
		news += newReqs[i].Load()
	}
	sum.Amplification = float64(att) / float64(news)
	for w := from; w+5 <= secs; w++ {
		var good, demand int64
		for i := w; i < w+5; i++ {
			good += successes[i].Load()
			demand += newReqs[i].Load()
		}
		if float64(good) >= 0.9*float64(demand) {
			d := float64(w) - spikeEnd.Seconds()
			sum.Recovered, sum.RecoveryS = true, &d
			break
		}
	}
	return sum
}

// hardOutageScenario is the scenario: a fast loopback server
// behind `again proxy --outage 3s@2s`, 100 new requests per second for 14 s,
// clients waiting 600 ms an attempt, 3 attempts, no network delay
// (loopback). It is `again sim outage --outage 3s@2s` with these rates.
var hardOutageScenario = outage.Config{
	Rate: 100, SpikeRate: 100, SpikeStart: 2 * time.Second, Spike: outage.NoSpike,
	HardStart: 2 * time.Second, Hard: 3 * time.Second, Duration: 14 * time.Second,
	Latency: time.Millisecond, PerRequest: 1, // 1 ns: a server that load does not slow
	Timeout: 600 * time.Millisecond, Attempts: 3, NetMean: 1, // 1 ns: none, as on loopback
	Policy: backoff.Policy{Initial: 100 * time.Millisecond, Max: 2 * time.Second},
	Seed:   1,
}

// BenchmarkHardOutageAgainstSim runs the hard outage for real, every
// strategy at once (each its own clients, proxy and server, so that the
// whole takes the scenario's 14 s): retryhttp.Transport clients
// configured per strategy, through the proxy with the outage fault, to a
// loopback server answering at once. It reports each strategy's
// amplification and recovery beside the simulator's (seed 1, and its
// spread over seeds 1 to 20). Run it once: -bench HardOutageAgainstSim
// -benchtime 1x.
func BenchmarkHardOutageAgainstSim(b *testing.B) {
	c := hardOutageScenario
	sims, err := outage.Run(c)
	if err != nil {
		b.Fatal(err)
	}
	reals := make([]outage.Summary, len(sims))
	var wg sync.WaitGroup
	for i, s := range sims {
		wg.Go(func() { reals[i] = realHardOutage(b, c, s.Summary.Strategy) })
	}
	wg.Wait()
	b.Logf("%-10s %10s %18s %10s %13s %13s", "strategy", "sim ampl.", "sim seeds 1-20", "real ampl.", "sim recovery", "real recovery")
	for i, s := range sims {
		lo, hi, mean := simSpread(b, c, s.Summary.Strategy)
		real := reals[i]
		b.ReportMetric(real.Amplification, string(s.Summary.Strategy)+"-amplification")
		b.ReportMetric(mean, string(s.Summary.Strategy)+"-sim-amplification")
		b.Logf("%-10s %10.2f %18s %10.2f %13s %13s", s.Summary.Strategy, s.Summary.Amplification,
			fmt.Sprintf("%.2f–%.2f (%.2f)", lo, hi, mean), real.Amplification, recovery(s.Summary.RecoveryS), recovery(real.RecoveryS))
	}
}

// simSpread returns the least, the largest and the mean amplification of
// strategy s in c over seeds 1 to 20.
func simSpread(b *testing.B, c outage.Config, s simmodel.Strategy) (lo, hi, mean float64) {
	c.Strategies = []simmodel.Strategy{s}
	var sum float64
	for seed := uint64(1); seed <= 20; seed++ {
		c.Seed = seed
		r, err := outage.Run(c)
		if err != nil {
			b.Fatal(err)
		}
		a := r[0].Summary.Amplification
		if seed == 1 {
			lo, hi = a, a
		}
		lo, hi, sum = min(lo, a), max(hi, a), sum+a
	}
	return lo, hi, sum / 20
}

// strategyTransport returns the retryhttp.Transport of strategy s, as the
// simulator's clients retry: up to c.Attempts attempts of c.Timeout each,
// at once (immediate) or after c.Policy's delays, with one
// retry.TokenBucket (budget) or one breaker per host with its defaults,
// waiting for it as long as an attempt would (breaker).
func strategyTransport(c outage.Config, s simmodel.Strategy, base http.RoundTripper) *retryhttp.Transport {
	t := &retryhttp.Transport{Base: base, AttemptTimeout: c.Timeout, Policy: c.Policy}
	t.Policy.Retries = c.Attempts - 1
	switch s {
	case simmodel.NoRetries:
		t.Policy.Retries = backoff.NoRetries
	case simmodel.Immediate:
		t.Policy.Initial = -1 // no wait
	case simmodel.Budget:
		t.Budget = &retry.TokenBucket{}
	case simmodel.Breaker:
		t.Breakers, t.BreakerWait = &breaker.Group{}, c.Timeout
	}
	return t
}

// realHardOutage runs c for strategy s with real clients, proxy and
// server, and sums it up with the simulator's outage.Summarize.
func realHardOutage(b *testing.B, c outage.Config, s simmodel.Strategy) outage.Summary {
	secs := int(c.Duration / time.Second)
	var newReqs, attempts, successes = make([]atomic.Int64, secs), make([]atomic.Int64, secs), make([]atomic.Int64, secs)
	var start time.Time
	at := func(counts []atomic.Int64) {
		if i := int(time.Since(start) / time.Second); i < secs {
			counts[i].Add(1)
		}
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(c.Latency)
		io.WriteString(w, "ok")
	}))
	defer func() { up.CloseClientConnections(); up.Close() }()
	to, _ := url.Parse(up.URL)
	// --outage Hard@HardStart, its timeline starting with the proxy.
	faults, err := (&Flags{Outage: []string{c.Hard.String() + "@" + c.HardStart.String()}}).Faults()
	if err != nil {
		b.Fatal(err)
	}
	if len(faults) != 1 || faults[0].Kind != fault.Outage {
		b.Fatalf("--outage made %+v", faults)
	}
	start = time.Now()
	p, err := New(Config{To: to, Faults: faults, Now: func() time.Time { return time.Now() }})
	if err != nil {
		b.Fatal(err)
	}
	// The attempts are counted as they reach the proxy: the outage's 503s
	// never reach the server.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at(attempts)
		p.ServeHTTP(w, r)
	}))
	defer func() { srv.CloseClientConnections(); srv.Close() }()
	base := &http.Transport{MaxIdleConnsPerHost: 1000}
	defer base.CloseIdleConnections()
	client := &http.Client{Transport: strategyTransport(c, s, base)}

	var succeeded, requests atomic.Int64
	request := func() {
		resp, err := client.Get(srv.URL)
		if err != nil {
			return
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode == http.StatusOK {
			at(successes)
			succeeded.Add(1)
		}
	}
	// The simulator's own arrivals: the same demand, request for request.
	arrivals, err := outage.Arrivals(c)
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, next := range arrivals {
		time.Sleep(time.Until(start.Add(next)))
		at(newReqs)
		requests.Add(1)
		wg.Go(request)
	}
	wg.Wait()
	seconds := make([]outage.Second, secs)
	for i := range seconds {
		seconds[i] = outage.Second{Strategy: s, Second: i,
			NewRequests: int(newReqs[i].Load()), Attempts: int(attempts[i].Load()), Successes: int(successes[i].Load())}
	}
	sum, err := outage.Summarize(c, s, seconds, int(succeeded.Load()), int(requests.Load()))
	if err != nil {
		b.Fatal(err)
	}
	return sum
}
