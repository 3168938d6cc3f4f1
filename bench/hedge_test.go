package bench

import (
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cristalhq/hedgedhttp"
	"github.com/failsafe-go/failsafe-go/failsafehttp"
	"github.com/failsafe-go/failsafe-go/hedgepolicy"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/hedge"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
)

// The long-tailed server of the hedging benchmark: 5 ms for 98 % of
// requests, 1 s for 2 %, each request drawing independently (a fixed seed,
// in arrival order).
const (
	hedgeFast, hedgeSlow = 5 * time.Millisecond, time.Second
	hedgeSlowShare       = 0.02
	// Each operation is hedgeRequests requests, hedgeWorkers at a time:
	// enough for a p99 of 2 % slow requests, few enough that an operation
	// lasts about two seconds.
	hedgeRequests, hedgeWorkers = 1000, 50
)

// tailServer is the long-tailed server; it counts the requests it got, so
// that the hedges sent are what it saw beyond the requests made.
type tailServer struct {
	*httptest.Server
	mu   sync.Mutex
	rand *rand.Rand
	got  atomic.Int64
}

func newTailServer() *tailServer {
	s := &tailServer{rand: rand.New(rand.NewPCG(1, 2))}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.got.Add(1)
		s.mu.Lock()
		d := hedgeFast
		if s.rand.Float64() < hedgeSlowShare {
			d = hedgeSlow
		}
		s.mu.Unlock()
		select {
		case <-time.After(d):
			io.WriteString(w, "ok")
		case <-r.Context().Done(): // a canceled loser
		}
	}))
	return s
}

// hedgeClient is one hedging client, built over its own base transport; p95
// is the plain client's p95, for a client that takes only a fixed delay.
type hedgeClient struct {
	name string
	new  func(base *http.Transport, p95 time.Duration) func(*http.Request) (*http.Response, error)
}

var hedgeClients = []hedgeClient{
	{"nethttp", func(base *http.Transport, _ time.Duration) func(*http.Request) (*http.Response, error) {
		return (&http.Client{Transport: base}).Do
	}},
	{"again", func(base *http.Transport, _ time.Duration) func(*http.Request) (*http.Response, error) {
		tr := &retryhttp.Transport{Base: base, Policy: backoff.Policy{Retries: backoff.NoRetries},
			Hedge: &hedge.Hedger{Quantile: 0.95}}
		return (&http.Client{Transport: tr}).Do
	}},
	{"again-budget", func(base *http.Transport, _ time.Duration) func(*http.Request) (*http.Response, error) {
		// The same, with hedges paid from a budget: at most 6 % of the
		// successful requests, plus a burst of 4, however the latency
		// drifts.
		tr := &retryhttp.Transport{Base: base, Policy: backoff.Policy{Retries: backoff.NoRetries},
			Hedge: &hedge.Hedger{Quantile: 0.95, Budget: &retry.TokenBucket{TokenRatio: 0.06}}}
		return (&http.Client{Transport: tr}).Do
	}},
	{"failsafe-go", func(base *http.Transport, _ time.Duration) func(*http.Request) (*http.Response, error) {
		// The same quantile and warm-up as again's defaults; an age of 200
		// executions, as again's window.
		p := hedgepolicy.NewWithDelayQuantile[*http.Response](0.95, 200, 20)
		return (&http.Client{Transport: failsafehttp.NewRoundTripper(base, p)}).Do
	}},
	{"hedgedhttp", func(base *http.Transport, p95 time.Duration) func(*http.Request) (*http.Response, error) {
		// hedgedhttp takes a fixed delay: the p95 the plain client measured.
		rt, err := hedgedhttp.NewRoundTripper(p95, 2, base)
		if err != nil {
			panic(err)
		}
		return (&http.Client{Transport: rt}).Do
	}},
}

// BenchmarkHTTPHedge sends, per operation, 1000 GETs to a loopback server
// whose latency is 5 ms for 98 % of requests and 1 s for 2 %, 50 at a time,
// and reports the client's p50, p99 and max latency and the extra requests
// the server saw, without hedging (nethttp) and hedged after the p95 by
// each library (again twice: with and without a hedge budget).
func BenchmarkHTTPHedge(b *testing.B) {
	p95 := 6 * time.Millisecond // until the plain client has measured it
	for _, c := range hedgeClients {
		b.Run(c.name, func(b *testing.B) {
			srv := newTailServer()
			defer srv.Close()
			base := &http.Transport{MaxIdleConnsPerHost: hedgeWorkers * 2, IdleConnTimeout: time.Minute}
			defer base.CloseIdleConnections()
			do := c.new(base, p95)
			var lat []time.Duration
			for b.Loop() {
				lat = append(lat, hedgeBatch(b, do, srv.URL)...)
			}
			slices.Sort(lat)
			q := func(p float64) float64 {
				return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / float64(time.Millisecond)
			}
			if c.name == "nethttp" {
				p95 = time.Duration(q(0.95) * float64(time.Millisecond))
			}
			b.ReportMetric(0, "ns/op") // an operation is a batch: its time says nothing
			b.ReportMetric(q(0.5), "p50-ms")
			b.ReportMetric(q(0.99), "p99-ms")
			b.ReportMetric(q(1), "max-ms")
			b.ReportMetric(100*(float64(srv.got.Load())/float64(len(lat))-1), "extra-%")
		})
	}
}

// hedgeBatch sends hedgeRequests GETs with do, hedgeWorkers at a time, and
// returns their latencies.
func hedgeBatch(b *testing.B, do func(*http.Request) (*http.Response, error), url string) []time.Duration {
	lat := make([]time.Duration, hedgeRequests)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range hedgeWorkers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= hedgeRequests {
					return
				}
				req, _ := http.NewRequest("GET", url, nil)
				start := time.Now()
				resp, err := do(req)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				lat[i] = time.Since(start)
			}
		})
	}
	wg.Wait()
	return lat
}

// BenchmarkHTTPHedgeArmed is the cost of being ready to hedge: a GET to a
// loopback server that answers at once, through each hedging client with
// a fixed hedge delay of a second, so that no hedge is ever sent. What a
// client allocates beyond nethttp's is the price of hedging's bookkeeping
// on the path almost every request takes.
func BenchmarkHTTPHedgeArmed(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	const delay = time.Second
	clients := []struct {
		name string
		new  func(base *http.Transport) http.RoundTripper
	}{
		{"nethttp", func(base *http.Transport) http.RoundTripper { return base }},
		// The same Transport without Hedge: the armed path's cost is the
		// difference between the two.
		{"again-unhedged", func(base *http.Transport) http.RoundTripper {
			return &retryhttp.Transport{Base: base, Policy: backoff.Policy{Retries: backoff.NoRetries}}
		}},
		{"again", func(base *http.Transport) http.RoundTripper {
			return &retryhttp.Transport{Base: base, Policy: backoff.Policy{Retries: backoff.NoRetries},
				Hedge: &hedge.Hedger{After: delay}}
		}},
		{"failsafe-go", func(base *http.Transport) http.RoundTripper {
			return failsafehttp.NewRoundTripper(base, hedgepolicy.NewWithDelay[*http.Response](delay))
		}},
		{"hedgedhttp", func(base *http.Transport) http.RoundTripper {
			rt, err := hedgedhttp.NewRoundTripper(delay, 2, base)
			if err != nil {
				panic(err)
			}
			return rt
		}},
	}
	for _, c := range clients {
		b.Run(c.name, func(b *testing.B) {
			base := newBase()
			defer base.CloseIdleConnections()
			do := (&http.Client{Transport: c.new(base)}).Do
			req, _ := http.NewRequest("GET", srv.URL, nil)
			b.ReportAllocs()
			// Each request's own latency, for its median: a burst of load
			// from other processes moves the mean of a run, much less its
			// median.
			took := make([]time.Duration, 0, 1<<16)
			cpu := cpuTime()
			for b.Loop() {
				start := time.Now()
				consume(b, do, req, http.StatusOK)
				if len(took) < cap(took) {
					took = append(took, time.Since(start))
				}
			}
			// The process's CPU time per request (client and server, the
			// same work for every client but its own): on shared cores
			// the wall time varies by a third from run to run, the CPU
			// time far less, so it is what tells the clients apart.
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2]), "p50-ns")
		})
	}
}

// cpuTime returns the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
