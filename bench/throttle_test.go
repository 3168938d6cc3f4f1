package bench

import (
	"context"
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
// per second (a token bucket a tenth of a second deep) and answers 503
// above it, and 64 client goroutines offering 10 × capacity, each request
// through a retryhttp.Transport that retries twice. Compared: no throttle
// and no budget; again's budget only; again's SRE throttle (per host, K 2)
// with the budget; failsafe-go's AdaptiveThrottler at its defaults around
// each request, with the same budget. Each reports the backend's load and
// goodput per capacity, and the p99 of the successful requests, over the
// last seconds of the run, as custom metrics: run it with
//
//	go test -run '^$' -bench Overload -benchtime 1x
//
// The throttles count from the start, so their ratio settles within a
// second or two; the run lasts overloadRun and is measured after
// overloadWarm.

const (
	overloadCapacity = 200
	overloadClients  = 64
	overloadDemand   = 10
	overloadRun      = 8 * time.Second
	overloadWarm     = 3 * time.Second
	// overloadProcesses is the fleet's size in the fleet case.
	overloadProcesses = 8
)

type overloadCase struct {
	name string
	// client returns the function with which client goroutine worker
	// makes one request, and whether it succeeded.
	client func(b *testing.B, base http.RoundTripper) func(worker int, ctx context.Context, url string) bool
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

var overloadCases = []overloadCase{
	{"none", func(_ *testing.B, base http.RoundTripper) func(int, context.Context, string) bool {
		tr := &retryhttp.Transport{Base: base, Policy: retries}
		return func(_ int, ctx context.Context, url string) bool { return getStatus(ctx, tr, url) == 200 }
	}},
	{"again-budget", func(_ *testing.B, base http.RoundTripper) func(int, context.Context, string) bool {
		tr := &retryhttp.Transport{Base: base, Policy: retries, Budget: &retry.TokenBucket{}}
		return func(_ int, ctx context.Context, url string) bool { return getStatus(ctx, tr, url) == 200 }
	}},
	{"again-sre", func(_ *testing.B, base http.RoundTripper) func(int, context.Context, string) bool {
		tr := &retryhttp.Transport{Base: base, Policy: retries, Budget: &retry.TokenBucket{}, Throttles: &throttle.Group{}}
		return func(_ int, ctx context.Context, url string) bool { return getStatus(ctx, tr, url) == 200 }
	}},
	{"again-sre-fleet-8", func(b *testing.B, base http.RoundTripper) func(int, context.Context, string) bool {
		// Eight processes of 8 goroutines each, played by 8 Transports in
		// this one, each with its own fleet.Throttle (and budget) on one
		// local redis-server: the fleet's counts decide.
		s := fleettest.Start(b)
		trs := make([]*retryhttp.Transport, overloadProcesses)
		for i := range trs {
			c := redis.NewClient(&redis.Options{Addr: s.Addr(), ContextTimeoutEnabled: true})
			b.Cleanup(func() { c.Close() })
			th, err := fleet.NewThrottle(fleet.ThrottleConfig{Client: c, Key: "overload"})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { th.Close() })
			trs[i] = &retryhttp.Transport{Base: base, Policy: retries, Budget: &retry.TokenBucket{},
				Throttles: &throttle.Group{New: func(string) (retry.Admitter, error) { return th, nil }}}
		}
		return func(worker int, ctx context.Context, url string) bool {
			return getStatus(ctx, trs[worker%overloadProcesses], url) == 200
		}
	}},
	{"failsafe-adaptivethrottler", func(_ *testing.B, base http.RoundTripper) func(int, context.Context, string) bool {
		tr := &retryhttp.Transport{Base: base, Policy: retries, Budget: &retry.TokenBucket{}}
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
			return code == 200
		}
	}},
}

// capacityServer answers 200 up to its capacity per second and 503 above,
// counting what it received and accepted while counting is on.
type capacityServer struct {
	mu       sync.Mutex
	tokens   float64
	last     time.Time
	counting atomic.Bool
	received atomic.Int64
	accepted atomic.Int64
}

func (s *capacityServer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	now := time.Now()
	s.mu.Lock()
	s.tokens = min(overloadCapacity/10, s.tokens+now.Sub(s.last).Seconds()*overloadCapacity)
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

func BenchmarkOverload(b *testing.B) {
	if testing.Short() {
		b.Skip("runs for seconds per case")
	}
	for _, c := range overloadCases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				load, goodput, p99 := runOverload(b, c)
				b.ReportMetric(load, "load/capacity")
				b.ReportMetric(goodput, "goodput/capacity")
				b.ReportMetric(p99, "p99-ms")
			}
		})
	}
}

func runOverload(b *testing.B, c overloadCase) (load, goodput, p99ms float64) {
	srv := &capacityServer{last: time.Now()}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	base := &http.Transport{MaxIdleConnsPerHost: overloadClients}
	defer base.CloseIdleConnections()
	send := c.client(b, base)
	ctx, cancel := context.WithTimeout(context.Background(), overloadRun)
	defer cancel()
	interval := time.Duration(float64(time.Second) * overloadClients / (overloadDemand * overloadCapacity))
	var mu sync.Mutex
	var lat []float64
	var wg sync.WaitGroup
	start := time.Now()
	time.AfterFunc(overloadWarm, func() { srv.counting.Store(true) })
	for i := range overloadClients {
		wg.Go(func() {
			next := start.Add(interval * time.Duration(i) / overloadClients)
			for ctx.Err() == nil {
				time.Sleep(time.Until(next))
				next = next.Add(interval)
				t0 := time.Now()
				if send(i, ctx, ts.URL) && srv.counting.Load() {
					mu.Lock()
					lat = append(lat, float64(time.Since(t0))/float64(time.Millisecond))
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	span := (overloadRun - overloadWarm).Seconds() * overloadCapacity
	slices.Sort(lat)
	if n := len(lat); n > 0 {
		p99ms = lat[min(n-1, n*99/100)]
	}
	return float64(srv.received.Load()) / span, float64(srv.accepted.Load()) / span, p99ms
}
