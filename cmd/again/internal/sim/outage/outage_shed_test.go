package outage

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/sim"
	"github.com/again-go/again/cmd/again/internal/sim/simshed"
	"github.com/again-go/again/cmd/again/internal/sim/simtest"
	"github.com/again-go/again/limiter"
	"github.com/again-go/again/shed"
)

// The simulated server sheds as the middleware does: every attempt that
// reached the server in a run of the model is replayed through
// shed.Shedder.Wrap on synctest's clock, arriving when it arrived, with
// the headers retryhttp.Transport sends (Again-Attempt, Again-Timeout-Ms),
// its context ending when its client gave up, its handler taking the
// service time the model gave it; and the middleware admits each attempt
// when the model did, or sheds it when the model did and for the same
// reason.
func TestShedIsTheMiddlewares(t *testing.T) {
	for _, sh := range []simshed.Config{{Limit: 30}, {Limit: 100}, {Adaptive: cmdutil.ShedAdaptiveLimit()}} {
		for _, s := range []sim.Strategy{sim.NoRetries, sim.Immediate, sim.Backoff} {
			c := Config{Seed: 3, Policy: backoff.Default(), Shed: sh, Duration: 45 * time.Second, Strategies: []sim.Strategy{s}}
			c, err := c.withDefaults()
			if err != nil {
				t.Fatal(err)
			}
			_, atts := outageAttempts(&c, s)
			name := fmt.Sprintf("--shed %s, %s", shedName(sh), s)
			got := replay(t, &c, s, atts)
			var reached, bad, shedCount int
			for i, a := range atts {
				if !a.reached {
					continue
				}
				reached++
				if a.fate != shed.Admitted {
					shedCount++
				}
				if want := fmt.Sprintf("%v@%v", a.fate, a.decided); got[i] != want {
					if bad++; bad <= 5 {
						t.Errorf("%s: attempt %d (number %d, arrived %v): the middleware %s, the model %s", name, i, a.n, a.arrived, got[i], want)
					}
				}
			}
			if bad > 0 {
				t.Errorf("%s: %d of %d attempts decided otherwise", name, bad, reached)
			}
			if shedCount == 0 {
				t.Errorf("%s: nothing shed in %d attempts: the test compares nothing", name, reached)
			}
		}
	}
}

func shedName(sh simshed.Config) string {
	if sh.Adaptive != nil {
		return "adaptive"
	}
	return strconv.Itoa(sh.Limit)
}

// replay sends the attempts that reached the server through the
// middleware, and returns how it decided each: "admitted@T" with T the
// time its handler started, or "REASON@T" when it was shed.
func replay(t *testing.T, c *Config, s sim.Strategy, atts []outAttempt) []string {
	got := make([]string, len(atts))
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		cfg := shed.Config{Limit: c.Shed.Limit}
		if c.Shed.Adaptive != nil {
			// The model's limiter's probes, drawn from the same stream.
			_, probes := shedStreams(c, s)
			l, err := limiter.New(limiter.Config{Algorithm: c.Shed.Adaptive, Rand: probes})
			if err != nil {
				t.Fatal(err)
			}
			cfg.Adaptive = l
		}
		sh, err := shed.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		h := sh.Wrap(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			i, _ := strconv.Atoi(r.Header.Get("X-Attempt"))
			mu.Lock()
			got[i] = fmt.Sprintf("admitted@%v", time.Since(start))
			mu.Unlock()
			time.Sleep(atts[i].service)
		}))
		var wg sync.WaitGroup
		for i, a := range atts {
			if !a.reached {
				continue
			}
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), a.gone)
				defer cancel()
				time.Sleep(a.arrived)
				r := httptest.NewRequestWithContext(ctx, "GET", "/", nil)
				r.Header.Set(shed.HeaderAttempt, strconv.Itoa(a.n))
				r.Header.Set(shed.HeaderTimeout, strconv.FormatInt(c.Timeout.Milliseconds(), 10))
				r.Header.Set("X-Attempt", strconv.Itoa(i))
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					mu.Lock()
					got[i] = fmt.Sprintf("%s@%v", strings.TrimSpace(strings.TrimPrefix(w.Body.String(), "shed: ")), time.Since(start))
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	})
	return got
}

// With a shedding server, a spike leaves no collapse: every strategy
// recovers, the server sheds, its queue delay stays near CoDel's target,
// and backoff, which obeys the Retry-After, succeeds more often than
// without it.
func TestSimOutageShedConclusions(t *testing.T) {
	plain, err := Run(Config{Seed: 1, Policy: backoff.Default(), Strategies: []sim.Strategy{sim.Backoff}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(Config{Seed: 1, Policy: backoff.Default(), Shed: simshed.Config{Limit: 100}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		s := r.Summary
		if !s.Recovered || s.Shed == 0 || s.QueueDelayMS > 20 {
			t.Errorf("--shed 100, %s: recovered %v, shed %d, queue delay %.1f ms; want recovered, some shed, at most 20 ms", s.Strategy, s.Recovered, s.Shed, s.QueueDelayMS)
		}
		if s.Strategy == sim.Backoff && s.SuccessRatio < plain[0].Summary.SuccessRatio+0.5 {
			t.Errorf("backoff's success ratio %.3f with --shed 100, %.3f without; want at least 0.5 more", s.SuccessRatio, plain[0].Summary.SuccessRatio)
		}
	}
	if _, err := Run(Config{Policy: backoff.Default(), Shed: simshed.Config{Limit: -1}}); err == nil || !strings.Contains(err.Error(), "Shed.Limit") {
		t.Errorf("Run with Shed.Limit -1 = %v, want an error naming Shed.Limit", err)
	}
}

// --shed adaptive protects the server about as well as a good fixed
// limit: every strategy recovers after the spike and stays recovered (no
// 5 s after the recovery serve less than half their demand), and
// succeeds at least as often as against the unprotected server. Its
// limit once stayed where the server's latency reached the clients'
// timeout, learning nothing from the requests they gave up on, then
// collapsed in a burst of drops, and its minimum-RTT probe held it at 1
// for 50 s (0.22 to 0.39 of the requests served, where the unprotected
// server serves 0.19 to 0.80).
func TestSimOutageShedAdaptive(t *testing.T) {
	plain, err := Run(Config{Seed: 1, Policy: backoff.Default()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(Config{Seed: 1, Policy: backoff.Default(), Shed: simshed.Config{Adaptive: cmdutil.ShedAdaptiveLimit()}})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		s, p := r.Summary, plain[i].Summary
		if !s.Recovered || s.SuccessRatio < p.SuccessRatio {
			t.Errorf("--shed adaptive, %s: recovered %v, success ratio %.3f; want recovered, and at least the unprotected server's %.3f",
				s.Strategy, s.Recovered, s.SuccessRatio, p.SuccessRatio)
			continue
		}
		from := int(*s.RecoveryS + 40) // the spike ends at 40 s
		for w := from; w+recoveryWindow <= len(r.Seconds); w++ {
			var good, demand int
			for _, sec := range r.Seconds[w : w+recoveryWindow] {
				good += sec.Successes
				demand += sec.NewRequests
			}
			if 2*good < demand {
				t.Errorf("--shed adaptive, %s: %d successes for %d new requests in the %d s from %d s, after the recovery at %d s; want at least half",
					s.Strategy, good, demand, recoveryWindow, w, from)
				break
			}
		}
	}
}

func TestSimOutageShedGolden(t *testing.T) {
	var b strings.Builder
	for _, sh := range []simshed.Config{{Limit: 100}, {Adaptive: cmdutil.ShedAdaptiveLimit()}} {
		c := Config{Seed: 1, Policy: backoff.Default(), Shed: sh}
		serial, err := Run(c)
		if err != nil {
			t.Fatal(err)
		}
		c.Runner = simtest.Parallel
		par, _ := Run(c)
		for i, r := range serial {
			s := r.Summary
			fmt.Fprintf(&b, "--shed %s %s amplification=%.4f recovered=%v recovery_s=%s success_ratio=%.4f shed=%d queue_delay_ms=%.3f\n",
				shedName(sh), s.Strategy, s.Amplification, s.Recovered, fmtPtr(s.RecoveryS), s.SuccessRatio, s.Shed, s.QueueDelayMS)
			if !reflect.DeepEqual(par[i], r) {
				t.Errorf("--shed %s, %s: the parallel run differs from the serial one", shedName(sh), s.Strategy)
			}
		}
	}
	simtest.Golden(t, "outage-shed-seed-1.txt", b.String())
}

// A fixed limit fits the server when it carries the demand outside the
// spike (N ÷ (1 s + N × 10 ms) ≥ 40 a second: N ≥ 67) and its requests
// end before the clients' 3 s timeout (1 s + N × 10 ms < 3 s: N ≤ 199).
func TestShedCapacity(t *testing.T) {
	f, ok := ShedCapacity(Config{Policy: backoff.Default(), Shed: simshed.Config{Limit: 30}})
	if !ok || math.Abs(f.Rate-30/1.3) > 1e-9 || f.Least != 67 || f.Most != 199 {
		t.Errorf("ShedCapacity(--shed 30) = %+v, %v; want a rate of 30/1.3 = 23.1, from 67 to 199, true", f, ok)
	}
	for n, want := range map[int]bool{30: false, 66: false, 67: true, 199: true, 200: false} {
		if got := f.Fits(n); got != want {
			t.Errorf("Fits(%d) = %v, want %v", n, got, want)
		}
	}
	if f, ok := ShedCapacity(Config{Policy: backoff.Default(), Rate: 120, Shed: simshed.Config{Limit: 30}}); !ok || f.Least != 0 || f.Fits(100) {
		t.Errorf("ShedCapacity at 120 a second = %+v, %v; want no limit that fits (the server serves at most 100)", f, ok)
	}
	if _, ok := ShedCapacity(Config{Policy: backoff.Default(), Shed: simshed.Config{Adaptive: cmdutil.ShedAdaptiveLimit()}}); ok {
		t.Error("ShedCapacity(--shed adaptive) ok = true, want false")
	}
}
