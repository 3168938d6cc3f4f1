package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
// Record on an answer, Drop on a timeout). Bounded: one ramp per
// limiter, 30 s by default (CI runs it under -race), Envoy's 160 s with
// -limit.ramp. Run it with
//
//	go test -run TestLimitEnvoySetup -v -count 1 . [-limit.ramp 160s -timeout 30m] [-limit.envoy] [-limit.out DIR]
//
// (skipped under -short; a ramp longer than go test's -timeout allows is
// refused at the start). With -limit.out it also writes DIR/limit.csv,
// each limiter's limit, goodput and success p99 over time, which
// `go run ./cmd/again/internal/sim/chart/svg -limit` draws (BENCHMARKS.md).

var (
	limitRamp = flag.Duration("limit.ramp", 30*time.Second, "how long TestLimitEnvoySetup ramps the load, per limiter (Envoy's run: 160s)")
	limitOut  = flag.String("limit.out", "", "a directory where TestLimitEnvoySetup writes limit.csv, its time series")
	// limitEnvoy selects Envoy's service time itself, for a run on an
	// idle machine; CI's default is twice as slow (see limitService).
	limitEnvoy = flag.Bool("limit.envoy", false, "TestLimitEnvoySetup serves in Envoy's own times (p90 50 ms, p99 150 ms) rather than twice as slow")
)

const (
	limitWorkers = 8
	limitTimeout = time.Second
)

// limitService returns the service time: the shape of Envoy's run (p99 =
// 3 × p90), by default twice as slow (p90 100 ms, p99 300 ms), so that a
// loaded 2-core machine running the test under -race serves the ramp's
// peak (3 × 177 requests/s); with -limit.envoy, Envoy's own (p90 50 ms,
// p99 150 ms, a peak of 3 × 354 requests/s).
func limitService() latency.Distribution {
	if *limitEnvoy {
		return latency.Distribution{Name: latency.Lognormal, Median: 13 * time.Millisecond, Sigma: 1.05}
	}
	return latency.Distribution{Name: latency.Lognormal, Median: 26 * time.Millisecond, Sigma: 1.05}
}

// limitCapacity is the server's requests per second: workers ÷ the mean
// service time.
func limitCapacity() float64 {
	d := limitService()
	mean := float64(d.Median) * math.Exp(d.Sigma*d.Sigma/2)
	return limitWorkers / (mean / float64(time.Second))
}

// workerServer serves each request after a slot of its workers is free
// (first come, first served), for a service time drawn from limitService.
// It does not notice a client that gave up: it serves it all the same.
func workerServer(t *testing.T) *httptest.Server {
	slots := make(chan struct{}, limitWorkers)
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(7, 7))
	service := limitService()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		slots <- struct{}{}
		mu.Lock()
		d := service.Sample(r)
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
// capacity), and its time series.
type limitResult struct {
	name                 string
	settled              float64 // the limit's mean
	goodput              float64 // successes per second ÷ capacity
	p50, p99             time.Duration
	refused, timedOut, n int
	bins                 []limitBin
}

// limitBin is a window of the ramp: the requests that arrived in it.
type limitBin struct {
	limitSum          float64 // the limit seen by each arrival, summed
	arrived           int
	refused, timedOut int
	lat               []time.Duration // the successes' latencies
}

// limitBins is how many windows a run's time series has.
const limitBins = 80

func runLimit(t *testing.T, name string, url string, c limitClient) limitResult {
	capacity := limitCapacity()
	ramp := *limitRamp
	r := rand.New(rand.NewPCG(1, 2))
	start := time.Now()
	tail := start.Add(ramp * 2 / 3)
	var mu sync.Mutex
	res := limitResult{name: name, bins: make([]limitBin, limitBins)}
	var lat []time.Duration
	var limits []float64
	var wg sync.WaitGroup
	var inflight atomic.Int64
	// The arrivals follow a schedule of their own, each one's gap from
	// the last one's planned time: a loop that slept each gap from when
	// it woke would fall behind by each sleep's overshoot (a few
	// milliseconds on a loaded machine, as long as the gap at the peak),
	// and offer about 2 × capacity at the end, not 3 ×.
	for next := start; next.Sub(start) < ramp; {
		ratio := 0.5 + 2.5*float64(next.Sub(start))/float64(ramp)
		next = next.Add(time.Duration(r.ExpFloat64() / (ratio * capacity) * float64(time.Second)))
		time.Sleep(time.Until(next))
		arrival := time.Now()
		counted := arrival.After(tail)
		bin := &res.bins[min(limitBins-1, int(arrival.Sub(start)*limitBins/ramp))]
		l := c.limit()
		if counted {
			limits = append(limits, l)
		}
		mu.Lock()
		bin.arrived++
		bin.limitSum += l
		mu.Unlock()
		inflight.Add(1)
		wg.Go(func() {
			defer inflight.Add(-1)
			ctx, cancel := context.WithTimeout(context.Background(), limitTimeout)
			defer cancel()
			began := time.Now()
			ok, refused := c.do(ctx, url)
			took := time.Since(began)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case refused:
				bin.refused++
			case ok:
				bin.lat = append(bin.lat, took)
			default:
				bin.timedOut++
			}
			if !counted {
				return
			}
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
	res.p50, res.p99 = quantile(lat, 0.5), quantile(lat, 0.99)
	res.goodput = float64(len(lat)) / (ramp.Seconds() / 3) / capacity
	for _, l := range limits {
		res.settled += l / float64(len(limits))
	}
	return res
}

// quantile is the p quantile of lat (sorted in place), 0 when it is empty.
func quantile(lat []time.Duration, p float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	slices.Sort(lat)
	return lat[min(len(lat)-1, int(math.Ceil(p*float64(len(lat))))-1)]
}

// writeLimitSeries writes each run's windows to dir/limit.csv, with the
// columns of `again sim limit --format csv`: the window's end in seconds,
// the load offered and the goodput ÷ capacity, the limit's mean (0 without
// one), the successes' p50 and p99 and the refused and timed-out requests,
// each over the requests that arrived in the window.
func writeLimitSeries(dir string, runs []limitResult) error {
	var b strings.Builder
	b.WriteString("limiter,time_s,offered_ratio,limit,goodput_ratio,success_p50_ms,success_p99_ms,refused,timed_out\n")
	width := limitRamp.Seconds() / limitBins
	capacity := limitCapacity()
	for _, r := range runs {
		for i, bin := range r.bins {
			l := 0.0
			if bin.arrived > 0 {
				l = bin.limitSum / float64(bin.arrived)
			}
			fmt.Fprintf(&b, "%s,%.3f,%.4f,%.2f,%.4f,%.1f,%.1f,%d,%d\n", r.name, float64(i+1)*width,
				float64(bin.arrived)/width/capacity, l, float64(len(bin.lat))/width/capacity,
				ms(quantile(bin.lat, 0.5)), ms(quantile(bin.lat, 0.99)), bin.refused, bin.timedOut)
		}
	}
	return os.WriteFile(filepath.Join(dir, "limit.csv"), []byte(b.String()), 0o644)
}

func TestLimitEnvoySetup(t *testing.T) {
	if testing.Short() {
		t.Skip("a real ramp of 30 s (-limit.ramp) per limiter")
	}
	// Each limiter's ramp, then its last requests' timeout, and a margin
	// for the servers' and clients' setup.
	need := time.Duration(6) * (*limitRamp + 2*limitTimeout)
	if d, ok := t.Deadline(); ok && time.Until(d) < need {
		t.Fatalf("-limit.ramp %v needs about %v for its 6 limiters, more than go test's -timeout leaves (%v): raise -timeout", *limitRamp, need, time.Until(d).Round(time.Second))
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
	var runs []limitResult
	for _, c := range clients {
		srv := workerServer(t)
		cl := c.make()
		res := runLimit(t, c.name, srv.URL, cl)
		results[c.name] = res
		runs = append(runs, res)
		t.Logf("%-28s limit %6.1f  goodput %.2f  p50 %6.1fms  p99 %7.1fms  refused %5d  timed out %5d  of %d",
			res.name, res.settled, res.goodput, ms(res.p50), ms(res.p99), res.refused, res.timedOut, res.n)
	}
	if *limitOut != "" {
		if err := writeLimitSeries(*limitOut, runs); err != nil {
			t.Error(err)
		}
	}
	service := limitService()
	unloadedP99 := service.Quantile(0.99)
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
