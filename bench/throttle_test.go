package bench

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go/adaptivethrottler"
	"github.com/redis/go-redis/v9"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/fleet"
	"github.com/again-go/again/fleet/fleettest"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
	"github.com/again-go/again/throttle"
)

// Overload, measured: a loopback server that accepts capacity requests
// per second (a token bucket a tenth of a second deep, full at the start)
// and answers 503 above it, and 64 client goroutines offering 10 ×
// capacity, each request through a retryhttp.Transport that retries
// twice. Compared: no throttle and no budget; again's budget only; again's
// SRE throttle (per host, K 2) with the budget; the same shared through
// Redis by a fleet of 8, played by 8 Transports in this process and by 8
// processes (this test binary re-executed, see
// overload_processes_test.go); failsafe-go's AdaptiveThrottler at its
// defaults around each request, with the same budget. Each reports, over
// the last seconds of the run, the backend's load, goodput and the demand
// the clients managed to offer per capacity, and the p99 latency of the
// successful requests and of all, as custom metrics: run it with
//
//	go test -run '^$' -bench Overload -benchtime 1x
//
// The throttles count from the start, so their ratio settles within a
// second; each case lasts overloadBench.run and is measured after
// overloadBench.warm. TestOverloadFakeClock runs the same clients on a
// fake clock, in memory, and asserts the shape of the results.
//
// The server's bucket starts full, as a server that was idle: one whose
// very first answers are 503s can hold an SRE throttler (which counts its
// own rejections as requests) near p = 1 for many seconds, its accepts
// growing only with the square of the time, and that cold start is not
// what this run compares.

// overloadConfig is the shape of one overload run.
type overloadConfig struct {
	capacity int // requests per second the server accepts
	clients  int // client goroutines
	demand   int // what the clients offer, in capacities
	run      time.Duration
	warm     time.Duration // counting starts after it
}

// interval is the time between two requests of one client goroutine.
func (c overloadConfig) interval() time.Duration {
	return time.Duration(float64(time.Second) * float64(c.clients) / float64(c.demand*c.capacity))
}

// span is what the server could accept while counting.
func (c overloadConfig) span() float64 {
	return (c.run - c.warm).Seconds() * float64(c.capacity)
}

// overloadBench is the benchmark's run: 5 cases of 5 s and one of 8
// processes, about 35 s in all.
var overloadBench = overloadConfig{capacity: 200, clients: 64, demand: 10, run: 5 * time.Second, warm: 2 * time.Second}

// overloadProcesses is the fleet's size in the fleet cases.
const overloadProcesses = 8

// sendFunc makes the request of client goroutine worker (of
// overloadConfig.clients) and reports whether it succeeded.
type sendFunc func(worker int, ctx context.Context, url string) bool

type overloadCase struct {
	name string
	// fleet, when true, marks a case that needs a redis-server, in
	// overloadEnv.redis.
	fleet  bool
	client func(tb testing.TB, env overloadEnv) sendFunc
}

// overloadEnv is what a case's clients are made with.
type overloadEnv struct {
	base  http.RoundTripper // sends the requests
	redis string            // a redis-server's address, for the fleet cases
	// fallbacks counts the times a fleet.Throttle stopped using Redis
	// (its warnings): under a loaded machine its 50 ms timeout can pass.
	fallbacks *atomic.Int64
}

var retries = backoff.Policy{Initial: 10 * time.Millisecond, Retries: 2}

func getStatus(ctx context.Context, rt http.RoundTripper, url string) int {
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// transportSend sends every request through tr.
func transportSend(tr http.RoundTripper) sendFunc {
	return func(_ int, ctx context.Context, url string) bool { return getStatus(ctx, tr, url) == http.StatusOK }
}

// fleetTransport is one fleet member's Transport: its own fleet.Throttle
// (and budget) on the redis-server at env.redis, all members on one key,
// its warnings counted in env.fallbacks. close
// releases the Throttle and the Redis client.
func fleetTransport(env overloadEnv) (tr *retryhttp.Transport, th *fleet.Throttle, close func(), err error) {
	c := redis.NewClient(&redis.Options{Addr: env.redis, ContextTimeoutEnabled: true})
	th, err = fleet.NewThrottle(fleet.ThrottleConfig{Client: c, Key: "overload",
		Logger: slog.New(warnCounter{env.fallbacks})})
	if err != nil {
		c.Close()
		return nil, nil, nil, err
	}
	tr = &retryhttp.Transport{Base: env.base, Policy: retries, Budget: &retry.TokenBucket{},
		Throttles: &throttle.Group{New: func(string) (retry.Admitter, error) { return th, nil }}}
	return tr, th, func() { th.Close(); c.Close() }, nil
}

// warnCounter is a slog.Handler that counts the records of level Warn and
// above, and drops every record.
type warnCounter struct{ n *atomic.Int64 }

func (h warnCounter) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (h warnCounter) Handle(context.Context, slog.Record) error    { h.n.Add(1); return nil }
func (h warnCounter) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h warnCounter) WithGroup(string) slog.Handler                { return h }

var overloadCases = []overloadCase{
	{name: "none", client: func(_ testing.TB, env overloadEnv) sendFunc {
		return transportSend(&retryhttp.Transport{Base: env.base, Policy: retries})
	}},
	{name: "again-budget", client: func(_ testing.TB, env overloadEnv) sendFunc {
		return transportSend(&retryhttp.Transport{Base: env.base, Policy: retries, Budget: &retry.TokenBucket{}})
	}},
	{name: "again-sre", client: func(_ testing.TB, env overloadEnv) sendFunc {
		return transportSend(&retryhttp.Transport{Base: env.base, Policy: retries, Budget: &retry.TokenBucket{}, Throttles: &throttle.Group{}})
	}},
	{name: "again-sre-fleet-8", fleet: true, client: func(tb testing.TB, env overloadEnv) sendFunc {
		// Eight processes of 8 goroutines each, played by 8 Transports in
		// this one, each with its own fleet.Throttle (and budget) on one
		// local redis-server: the fleet's counts decide.
		trs := make([]*retryhttp.Transport, overloadProcesses)
		for i := range trs {
			tr, _, closeFn, err := fleetTransport(env)
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(closeFn)
			trs[i] = tr
		}
		return func(worker int, ctx context.Context, url string) bool {
			return getStatus(ctx, trs[worker%overloadProcesses], url) == http.StatusOK
		}
	}},
	{name: "failsafe-adaptivethrottler", client: func(_ testing.TB, env overloadEnv) sendFunc {
		tr := &retryhttp.Transport{Base: env.base, Policy: retries, Budget: &retry.TokenBucket{}}
		at := adaptivethrottler.NewWithDefaults[any]()
		return func(_ int, ctx context.Context, url string) bool {
			if !at.TryAcquirePermit() {
				return false
			}
			code := getStatus(ctx, tr, url)
			if code == http.StatusServiceUnavailable || code == 0 {
				at.RecordFailure()
			} else {
				at.RecordSuccess()
			}
			return code == http.StatusOK
		}
	}},
}

// capacityServer answers 200 up to capacity requests per second and 503
// above, counting what it received and accepted while counting is on.
type capacityServer struct {
	capacity float64

	mu       sync.Mutex
	tokens   float64
	last     time.Time
	counting atomic.Bool
	received atomic.Int64
	accepted atomic.Int64
}

func newCapacityServer(capacity int) *capacityServer {
	return &capacityServer{capacity: float64(capacity), tokens: float64(capacity) / 10, last: time.Now()}
}

func (s *capacityServer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	now := time.Now()
	s.mu.Lock()
	s.tokens = min(s.capacity/10, s.tokens+now.Sub(s.last).Seconds()*s.capacity)
	s.last = now
	ok := s.tokens >= 1
	if ok {
		s.tokens--
	}
	s.mu.Unlock()
	counting := s.counting.Load()
	if counting {
		s.received.Add(1)
	}
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	if counting {
		s.accepted.Add(1)
	}
}

// overloadResult is what one run measured, per capacity, over the
// counting span.
type overloadResult struct {
	load, goodput, offered float64 // per capacity
	p99ms, p99AllMs        float64 // of the successful requests, of all
	fallbacks              int64   // see overloadEnv
}

func (r overloadResult) String() string {
	s := fmt.Sprintf("load %.2f, goodput %.3f, offered %.2f, p99 %.1f ms (all: %.1f ms)",
		r.load, r.goodput, r.offered, r.p99ms, r.p99AllMs)
	if r.fallbacks > 0 {
		s += fmt.Sprintf(", %d Redis fallbacks", r.fallbacks)
	}
	return s
}

// clientStats is what client goroutines counted while the server counts:
// the requests they started, and the latencies of the successful ones.
type clientStats struct {
	Asked int64 `json:"asked"`
	// Lat and LatAll are the latencies, in milliseconds, of the
	// successful requests and of all.
	Lat    []float64 `json:"lat_ms"`
	LatAll []float64 `json:"lat_all_ms"`
	// Fallbacks is a child process's overloadEnv.fallbacks.
	Fallbacks int64 `json:"fallbacks"`
}

// offer runs the client goroutines first to first+n−1 (of cfg.clients)
// from start until ctx ends, each starting a request every
// cfg.interval(), at phases spread over the interval so that the whole
// fleet's requests are evenly spaced; what starts after from is counted.
// A goroutine that falls behind catches up in a burst, as the callers of a
// slow client would.
func offer(ctx context.Context, cfg overloadConfig, first, n int, start, from time.Time, url string, send sendFunc) clientStats {
	interval := cfg.interval()
	var mu sync.Mutex
	var st clientStats
	var wg sync.WaitGroup
	for i := first; i < first+n; i++ {
		wg.Go(func() {
			next := start.Add(interval * time.Duration(i) / time.Duration(cfg.clients))
			for ctx.Err() == nil {
				time.Sleep(time.Until(next))
				next = next.Add(interval)
				t0 := time.Now()
				ok := send(i, ctx, url)
				if t0.Before(from) || ctx.Err() != nil {
					continue
				}
				ms := float64(time.Since(t0)) / float64(time.Millisecond)
				mu.Lock()
				st.Asked++
				st.LatAll = append(st.LatAll, ms)
				if ok {
					st.Lat = append(st.Lat, ms)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return st
}

// result turns the server's counts and the clients' into an
// overloadResult.
func (s *capacityServer) result(cfg overloadConfig, st clientStats) overloadResult {
	span := cfg.span()
	r := overloadResult{
		load:      float64(s.received.Load()) / span,
		goodput:   float64(s.accepted.Load()) / span,
		offered:   float64(st.Asked) / span,
		fallbacks: st.Fallbacks,
	}
	r.p99ms, r.p99AllMs = p99(st.Lat), p99(st.LatAll)
	return r
}

// p99 returns the 99th percentile of lat, which it sorts, or 0.
func p99(lat []float64) float64 {
	slices.Sort(lat)
	if n := len(lat); n > 0 {
		return lat[min(n-1, n*99/100)]
	}
	return 0
}

// runOverload runs the clients of send against srv, reached through url,
// for cfg.run, and measures after cfg.warm.
func runOverload(cfg overloadConfig, srv *capacityServer, url string, send sendFunc) overloadResult {
	ctx, cancel := context.WithTimeout(context.Background(), cfg.run)
	defer cancel()
	start := time.Now()
	time.AfterFunc(cfg.warm, func() { srv.counting.Store(true) })
	st := offer(ctx, cfg, 0, cfg.clients, start, start.Add(cfg.warm), url, send)
	return srv.result(cfg, st)
}

func BenchmarkOverload(b *testing.B) {
	if testing.Short() {
		b.Skip("runs for seconds per case")
	}
	cfg := overloadBench
	report := func(b *testing.B, r overloadResult) {
		b.ReportMetric(0, "ns/op") // an operation is a whole run: its time says nothing
		b.ReportMetric(r.load, "load/capacity")
		b.ReportMetric(r.goodput, "goodput/capacity")
		b.ReportMetric(r.offered, "offered/capacity")
		b.ReportMetric(r.p99ms, "p99-ms")
		b.ReportMetric(r.p99AllMs, "p99-all-ms")
		if r.fallbacks > 0 {
			b.ReportMetric(float64(r.fallbacks), "redis-fallbacks")
		}
	}
	for _, c := range overloadCases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				base := &http.Transport{MaxIdleConnsPerHost: cfg.clients}
				env := overloadEnv{base: base, fallbacks: new(atomic.Int64)}
				if c.fleet {
					env.redis = fleettest.Start(b).Addr()
				}
				srv := newCapacityServer(cfg.capacity)
				ts := httptest.NewServer(srv)
				r := runOverload(cfg, srv, ts.URL, c.client(b, env))
				r.fallbacks = env.fallbacks.Load()
				base.CloseIdleConnections()
				ts.Close()
				report(b, r)
			}
		})
	}
	b.Run("again-sre-fleet-8-processes", func(b *testing.B) {
		for b.Loop() {
			report(b, runOverloadProcesses(b, cfg))
		}
	})
}
