package bench

import (
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go/adaptivelimiter"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/fault/latency"
	"github.com/again-go/again/limiter"
	"github.com/again-go/again/retryhttp"
)

// Concurrency limits in Envoy's setup (its issue 7789), on loopback: a
// server of 8 workers (a FIFO of the others), a lognormal service time,
// and one client whose Poisson load is ramped from 0.5 to 3 × the server's
// capacity, each request with a 1 s timeout. Compared: no limit, again's
// fixed limit of 8, again's adaptive limits (through
// retryhttp.Transport.Limits, per host) and failsafe-go v0.9.8's
// AdaptiveLimiter at its defaults (TryAcquirePermit around each request,
// Record on an answer, Drop on a timeout). Bounded: limitRamp per
// limiter. Run it with
//
//	go test -run TestLimitEnvoySetup -v -count 1 .
//
// (skipped under -short).

const (
	limitWorkers = 8
	limitRamp    = 30 * time.Second
	limitTimeout = time.Second
)

// limitService is the service time: the shape of Envoy's run (p99 = 3 ×
// p90), twice as slow (p90 100 ms, p99 300 ms), so that the loaded
// 2-core machine serves the ramp's peak (3 × 177 requests/s).
var limitService = latency.Distribution{Name: latency.Lognormal, Median: 26 * time.Millisecond, Sigma: 1.05}

// limitCapacity is the server's requests per second: workers ÷ the mean
// service time.
func limitCapacity() float64 {
	mean := float64(limitService.Median) * math.Exp(limitService.Sigma*limitService.Sigma/2)
	return limitWorkers / (mean / float64(time.Second))
}

// workerServer serves each request after a slot of its workers is free
// (first come, first served), for a service time drawn from limitService.
// It does not notice a client that gave up: it serves it all the same.
func workerServer(t *testing.T) *httptest.Server {
	slots := make(chan struct{}, limitWorkers)
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(7, 7))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		slots <- struct{}{}
		mu.Lock()
		d := limitService.Sample(r)
		mu.Unlock()
		time.Sleep(d)
		<-slots
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// limitClient sends one request and reports its latency and whether it
// succeeded within the timeout, or that it was refused locally.
type limitClient interface {
	do(ctx context.Context, url string) (ok, refused bool)
	limit() float64 // the limit now, or 0 without one
}

type plainClient struct{ c *http.Client }

func (p plainClient) do(ctx context.Context, url string) (bool, bool) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := p.c.Do(req)
	if err != nil {
		return false, false
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return err == nil && resp.StatusCode == http.StatusOK, false
}

func (plainClient) limit() float64 { return 0 }

// againClient sends through a retryhttp.Transport with Limits, no retry.
type againClient struct {
	plainClient
	g *limiter.Group
}

func (a againClient) do(ctx context.Context, url string) (bool, bool) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := a.c.Do(req)
	if err != nil {
		return false, isLimited(err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return err == nil && resp.StatusCode == http.StatusOK, false
}

func (a againClient) limit() float64 {
	n := 0.0
	a.g.Range(func(_ string, l *limiter.Limiter) bool { n = float64(l.Limit()); return false })
	return n
}

func isLimited(err error) bool { return errors.Is(err, limiter.ErrLimited) }

// failsafeClient wraps each request in failsafe-go's AdaptiveLimiter.
type failsafeClient struct {
	plainClient
	l adaptivelimiter.AdaptiveLimiter[any]
}

func (f failsafeClient) do(ctx context.Context, url string) (bool, bool) {
	p, ok := f.l.TryAcquirePermit()
	if !ok {
		return false, true
	}
	ok, _ = f.plainClient.do(ctx, url)
	if ok {
		p.Record()
	} else {
		p.Drop()
	}
	return ok, false
}

func (f failsafeClient) limit() float64 { return float64(f.l.Limit()) }

// limitResult is one limiter's run, over its last third (2.2 to 3 ×
// capacity).
type limitResult struct {
	name                 string
	settled              float64 // the limit's mean
	goodput              float64 // successes per second ÷ capacity
	p50, p99             time.Duration
	refused, timedOut, n int
}

func runLimit(t *testing.T, name string, url string, c limitClient) limitResult {
	capacity := limitCapacity()
	r := rand.New(rand.NewPCG(1, 2))
	start := time.Now()
	tail := start.Add(limitRamp * 2 / 3)
	var mu sync.Mutex
	res := limitResult{name: name}
	var lat []time.Duration
	var limits []float64
	var wg sync.WaitGroup
	var inflight atomic.Int64
	for now := time.Now(); now.Sub(start) < limitRamp; now = time.Now() {
		ratio := 0.5 + 2.5*float64(now.Sub(start))/float64(limitRamp)
		gap := time.Duration(r.ExpFloat64() / (ratio * capacity) * float64(time.Second))
		time.Sleep(gap)
		counted := time.Now().After(tail)
		if counted {
			limits = append(limits, c.limit())
		}
		inflight.Add(1)
		wg.Go(func() {
			defer inflight.Add(-1)
			ctx, cancel := context.WithTimeout(context.Background(), limitTimeout)
			defer cancel()
			began := time.Now()
			ok, refused := c.do(ctx, url)
			took := time.Since(began)
			if !counted {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			res.n++
			switch {
			case refused:
				res.refused++
			case ok:
				lat = append(lat, took)
			default:
				res.timedOut++
			}
		})
	}
	wg.Wait()
	slices.Sort(lat)
	q := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(math.Ceil(p*float64(len(lat))))-1)]
	}
	res.p50, res.p99 = q(0.5), q(0.99)
	res.goodput = float64(len(lat)) / (limitRamp.Seconds() / 3) / capacity
	for _, l := range limits {
		res.settled += l / float64(len(limits))
	}
	return res
}

func TestLimitEnvoySetup(t *testing.T) {
	if testing.Short() {
		t.Skip("a real ramp of 30 s per limiter")
	}
	newTransport := func() *http.Transport {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 2000
		return tr
	}
	clients := []struct {
		name string
		make func() limitClient
	}{
		{"none", func() limitClient { return plainClient{&http.Client{Transport: newTransport()}} }},
		{"again fixed 8", againLimits(newTransport, limiter.Config{Limit: limitWorkers})},
		{"again AIMD{Min: 1}", againLimits(newTransport, limiter.Config{Algorithm: limiter.AIMD{Min: 1}})},
		{"again Vegas{}", againLimits(newTransport, limiter.Config{Algorithm: limiter.Vegas{}})},
		{"again Gradient2{Min: 1}", againLimits(newTransport, limiter.Config{Algorithm: limiter.Gradient2{Min: 1}})},
		{"failsafe-go AdaptiveLimiter", func() limitClient {
			return failsafeClient{plainClient{&http.Client{Transport: newTransport()}}, adaptivelimiter.NewWithDefaults[any]()}
		}},
	}
	results := map[string]limitResult{}
	for _, c := range clients {
		srv := workerServer(t)
		cl := c.make()
		res := runLimit(t, c.name, srv.URL, cl)
		results[c.name] = res
		t.Logf("%-28s limit %6.1f  goodput %.2f  p50 %6.1fms  p99 %7.1fms  refused %5d  timed out %5d  of %d",
			res.name, res.settled, res.goodput, ms(res.p50), ms(res.p99), res.refused, res.timedOut, res.n)
	}
	unloadedP99 := limitService.Quantile(0.99)
	if g2 := results["again Gradient2{Min: 1}"]; g2.settled < 6 || g2.settled > 10 || g2.p99 > unloadedP99*3/2 {
		t.Errorf("again's Gradient2 settled at %.1f with p99 %v; want within 25 %% of %d and p99 within 1.5 × the unloaded %v",
			g2.settled, g2.p99, limitWorkers, unloadedP99)
	}
	if none := results["none"]; none.p99 < limitTimeout*9/10 && none.timedOut < none.n/2 {
		t.Errorf("no limit: p99 %v, %d of %d timed out; want the p99 at the timeout or most requests timed out", none.p99, none.timedOut, none.n)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// againLimits makes a client through retryhttp.Transport with a Group of
// cfg, no retry.
func againLimits(newTransport func() *http.Transport, cfg limiter.Config) func() limitClient {
	return func() limitClient {
		g := &limiter.Group{Config: cfg}
		tr := &retryhttp.Transport{Base: newTransport(), Limits: g, Policy: backoff.Policy{Retries: backoff.NoRetries}}
		return againClient{plainClient{&http.Client{Transport: tr}}, g}
	}
}
