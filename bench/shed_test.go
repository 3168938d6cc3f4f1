package bench

import (
	"context"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go/adaptivelimiter"
	"github.com/failsafe-go/failsafe-go/failsafehttp"
	"github.com/go-kratos/aegis/ratelimit"
	"github.com/go-kratos/aegis/ratelimit/bbr"
	"github.com/zeromicro/go-zero/core/load"
	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/stat"

	"github.com/again-go/again/fault/latency"
	"github.com/again-go/again/limiter"
	"github.com/again-go/again/shed"
)

// Server-side shedding under overload (issue 41), on loopback: a server
// of shedWorkers workers (the other requests wait for one, first come
// first served, and are served even after their client gave up, as
// net/http serves them), a lognormal service time from fault/latency, so
// a capacity C of about 100 requests a second; and one client whose
// Poisson load steps through 0.5, 1, 2 and 4 × C, shedStep each, every
// request with a 1 s timeout and no retry. In front of the workers: nothing
// (bare net/http), again's shed (a limit of W only; W with the CoDel queue
// that turns LIFO; Gradient2), go-zero's adaptive shedder, Kratos aegis's
// BBR (each at its defaults, which shed only above a CPU threshold, and
// with the threshold at 0, so that they judge by throughput and latency
// alone), and failsafe-go's handler with its AdaptiveLimiter. Bounded:
// 4 × shedStep per server. Run it with
//
//	cd bench && go test -run TestShedOverload -v -count 1 .
//
// (skipped under -short).

const (
	shedWorkers = 4
	shedStep    = 2 * time.Second
	shedWarmup  = 500 * time.Millisecond // of each step, not counted
	shedTimeout = time.Second
)

// shedLoads are the offered loads, in order, as multiples of C.
var shedLoads = []float64{0.5, 1, 2, 4}

// shedService is the service time: median 35 ms, p99 about 112 ms.
var shedService = latency.Distribution{Name: latency.Lognormal, Median: 35 * time.Millisecond, Sigma: 0.5}

// shedCapacity is the server's requests per second: workers ÷ the mean
// service time.
func shedCapacity() float64 {
	mean := float64(shedService.Median) * math.Exp(shedService.Sigma*shedService.Sigma/2)
	return shedWorkers / (mean / float64(time.Second))
}

// workers returns the server's own handler: a worker slot (FIFO), then
// the service time. Once stop is closed it answers at once, so that the
// backlog of a bare server drains when the run ends.
func workers(stop <-chan struct{}) http.Handler {
	slots := make(chan struct{}, shedWorkers)
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(7, 7))
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		slots <- struct{}{}
		mu.Lock()
		d := shedService.Sample(r)
		mu.Unlock()
		select {
		case <-time.After(d):
		case <-stop:
		}
		<-slots
		io.WriteString(w, "ok")
	})
}

// shedResult is one load step's figures, over its counted part.
type shedResult struct {
	load      float64
	goodput   float64 // successes within the timeout per second ÷ C
	p50, p99  time.Duration
	shedPerS  float64 // answers 429 or 503 per second
	timedOut  int
	n, served int
}

// runShed offers the staircase of shedLoads to url and returns each
// step's figures.
func runShed(url string) []shedResult {
	capacity := shedCapacity()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 2000
	c := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	r := rand.New(rand.NewPCG(1, 2))
	type step struct {
		mu       sync.Mutex
		lat      []time.Duration
		shed, to int
		n        int
	}
	steps := make([]*step, len(shedLoads))
	var wg sync.WaitGroup
	for i, load := range shedLoads {
		s := &step{}
		steps[i] = s
		start := time.Now()
		for now := start; now.Sub(start) < shedStep; now = time.Now() {
			time.Sleep(time.Duration(r.ExpFloat64() / (load * capacity) * float64(time.Second)))
			counted := time.Since(start) >= shedWarmup
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), shedTimeout)
				defer cancel()
				began := time.Now()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				resp, err := c.Do(req)
				status := 0
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					status = resp.StatusCode
				}
				took := time.Since(began)
				if !counted {
					return
				}
				s.mu.Lock()
				defer s.mu.Unlock()
				s.n++
				switch {
				case err == nil && status == http.StatusOK && took <= shedTimeout:
					s.lat = append(s.lat, took)
				case err == nil && (status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests):
					s.shed++
				default:
					s.to++
				}
			})
		}
	}
	wg.Wait()
	window := (shedStep - shedWarmup).Seconds()
	out := make([]shedResult, len(steps))
	for i, s := range steps {
		slices.Sort(s.lat)
		q := func(p float64) time.Duration {
			if len(s.lat) == 0 {
				return 0
			}
			return s.lat[min(len(s.lat)-1, int(math.Ceil(p*float64(len(s.lat))))-1)]
		}
		out[i] = shedResult{load: shedLoads[i], goodput: float64(len(s.lat)) / window / capacity,
			p50: q(0.5), p99: q(0.99), shedPerS: float64(s.shed) / window, timedOut: s.to, n: s.n, served: len(s.lat)}
	}
	return out
}

// The servers compared: each wraps the workers' handler.
var shedServers = []struct {
	name string
	wrap func(t *testing.T, h http.Handler) http.Handler
}{
	{"bare net/http", func(_ *testing.T, h http.Handler) http.Handler { return h }},
	{"again shed, limit 4 only", func(t *testing.T, h http.Handler) http.Handler {
		return againShed(t, shed.Config{Limit: shedWorkers, MaxQueue: -1}, h)
	}},
	{"again shed, limit 4 + CoDel/LIFO", func(t *testing.T, h http.Handler) http.Handler {
		return againShed(t, shed.Config{Limit: shedWorkers}, h)
	}},
	{"again shed, Gradient2 + CoDel/LIFO", func(t *testing.T, h http.Handler) http.Handler {
		l, err := limiter.New(limiter.Config{Algorithm: limiter.Gradient2{Min: 1}})
		if err != nil {
			t.Fatal(err)
		}
		return againShed(t, shed.Config{Adaptive: l}, h)
	}},
	{"go-zero shedder, defaults", func(_ *testing.T, h http.Handler) http.Handler {
		return goZero(load.NewAdaptiveShedder(), h)
	}},
	{"go-zero shedder, CPU threshold 0", func(_ *testing.T, h http.Handler) http.Handler {
		return goZero(load.NewAdaptiveShedder(load.WithCpuThreshold(0)), h)
	}},
	{"aegis BBR, defaults", func(_ *testing.T, h http.Handler) http.Handler {
		return aegis(bbr.NewLimiter(), h)
	}},
	{"aegis BBR, CPU threshold 0", func(_ *testing.T, h http.Handler) http.Handler {
		return aegis(bbr.NewLimiter(bbr.WithCPUThreshold(0)), h)
	}},
	{"failsafe-go AdaptiveLimiter", func(_ *testing.T, h http.Handler) http.Handler {
		return failsafehttp.NewHandler(h, adaptivelimiter.NewWithDefaults[*http.Response]())
	}},
}

func againShed(t *testing.T, cfg shed.Config, h http.Handler) http.Handler {
	s, err := shed.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s.Wrap(h)
}

// goZero is go-zero's rest server's shedding middleware (its
// ShedderHandler): 503 when the shedder drops, Pass for an answer below
// 500, Fail otherwise.
func goZero(s load.Shedder, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.Allow()
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		defer func() {
			if sw.code >= 500 {
				p.Fail()
			} else {
				p.Pass()
			}
		}()
		h.ServeHTTP(sw, r)
	})
}

// aegis is Kratos's BBR middleware on HTTP: 503 when the limiter drops,
// Done after the handler.
func aegis(l *bbr.BBR, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		done, err := l.Allow()
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
		done(ratelimit.DoneInfo{})
	})
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) {
	s.code = code
	s.ResponseWriter.WriteHeader(code)
}

func TestShedOverload(t *testing.T) {
	if testing.Short() {
		t.Skip("a real staircase of 4 × 2 s per server")
	}
	logx.Disable() // go-zero logs every request it drops
	t.Logf("capacity C = %.1f requests/s (%d workers, %s); the unloaded success p99 is about %v",
		shedCapacity(), shedWorkers, shedService, shedService.Quantile(0.99).Round(time.Millisecond))
	at4 := map[string]shedResult{}
	for _, s := range shedServers {
		stop := make(chan struct{})
		srv := httptest.NewServer(s.wrap(t, workers(stop)))
		res := runShed(srv.URL)
		close(stop)
		srv.Close()
		// go-zero's and aegis's defaults shed only above a CPU
		// threshold (90 %, 80 %), of the machine as they read it.
		t.Logf("%-36s CPU as go-zero reads it: %d ‰", s.name, stat.CpuUsage())
		for _, r := range res {
			t.Logf("%-36s %.1fx  goodput %.2f  p50 %6.1fms  p99 %7.1fms  shed %6.1f/s  timed out %4d  of %d",
				s.name, r.load, r.goodput, ms(r.p50), ms(r.p99), r.shedPerS, r.timedOut, r.n)
		}
		at4[s.name] = res[len(res)-1]
	}
	bare, again := at4["bare net/http"], at4["again shed, limit 4 + CoDel/LIFO"]
	if again.goodput <= bare.goodput {
		t.Errorf("at 4 × C: goodput behind again's shed %.2f of C, bare net/http %.2f; want again's above", again.goodput, bare.goodput)
	}
}
