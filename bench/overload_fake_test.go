package bench

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"
)

// handlerTransport serves each request with a handler in memory, on the
// caller's goroutine: on synctest's fake clock the server then answers
// at once, and the run's timing is the clients' schedule and retry waits
// alone, whatever the machine's load.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	return rec.Result(), nil
}

// TestOverloadFakeClock runs BenchmarkOverload's clients (but the fleet's,
// which need a redis-server) at 10 × capacity on a fake clock, against the
// capacity server in memory, and checks what the model predicts:
// without a throttle every request is sent three times, a budget stops
// the retries but not the first attempts, again's SRE throttle holds the
// load near K = 2 times what is accepted, and failsafe-go's
// AdaptiveThrottler, which counts only the requests it sends, lets through
// more (√(10/0.9) ≈ 3.3 times). The bounds are wide: the draws are
// random, and the fake clock is what keeps the machine's load out.
func TestOverloadFakeClock(t *testing.T) {
	cfg := overloadConfig{capacity: 100, clients: 64, demand: 10, run: 6 * time.Second, warm: 2 * time.Second}
	want := map[string]loadBounds{
		"none":                       {20, 31},
		"again-budget":               {8, 13},
		"again-sre":                  {1.5, 2.7},
		"failsafe-adaptivethrottler": {2.7, 4.5},
	}
	got := map[string]overloadResult{}
	for _, c := range overloadCases {
		if c.fleet {
			continue
		}
		// A subtest each: synctest.Test ends the test that calls it when
		// its bubble fails.
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { got[c.name] = checkOverload(t, cfg, c, want[c.name]) })
		})
	}
	if sre, fs := got["again-sre"], got["failsafe-adaptivethrottler"]; sre.load*1.2 > fs.load {
		t.Errorf("again's SRE throttle sent %.2f × capacity and failsafe-go's %.2f: want the SRE's well below", sre.load, fs.load)
	}
}

// loadBounds is the range of backend load, per capacity, a case must keep.
type loadBounds struct{ min, max float64 }

// checkOverload runs case c on cfg in memory, in synctest's bubble, and
// checks its backend load against w, its goodput and what it offered.
func checkOverload(t *testing.T, cfg overloadConfig, c overloadCase, w loadBounds) overloadResult {
	srv := newCapacityServer(cfg.capacity)
	r := runOverload(cfg, srv, "http://backend.test/", c.client(t, overloadEnv{base: handlerTransport{srv}}))
	t.Logf("%s: %v", c.name, r)
	if r.load < w.min || r.load > w.max {
		t.Errorf("%s: backend load %.2f × capacity, want %.1f to %.1f", c.name, r.load, w.min, w.max)
	}
	// The server is saturated in every case: throttling costs no
	// goodput.
	if r.goodput < 0.9 || r.goodput > 1.1 {
		t.Errorf("%s: goodput %.3f × capacity, want 0.9 to 1.1", c.name, r.goodput)
	}
	if d := float64(cfg.demand); r.offered < 0.9*d || r.offered > 1.1*d {
		t.Errorf("%s: offered %.2f × capacity, want %d", c.name, r.offered, cfg.demand)
	}
	return r
}

// TestOverloadFakeClockDemand sweeps the demand (3, 10 and 30 times
// capacity) for again's SRE throttle and failsafe-go's AdaptiveThrottler
// on the fake clock: the SRE's backend load stays near K = 2 times
// capacity whatever the demand, while failsafe-go's, which counts only
// the requests it sends, grows with it (the model: 1.8, 3.3 and 5.8 times).
func TestOverloadFakeClockDemand(t *testing.T) {
	cases := map[string]overloadCase{}
	for _, c := range overloadCases {
		cases[c.name] = c
	}
	load := map[string]map[int]float64{"again-sre": {}, "failsafe-adaptivethrottler": {}}
	for _, demand := range []int{3, 10, 30} {
		cfg := overloadConfig{capacity: 100, clients: 64, demand: demand, run: 6 * time.Second, warm: 2 * time.Second}
		for name, w := range map[string]loadBounds{
			"again-sre":                  {1.5, 2.7},
			"failsafe-adaptivethrottler": {1.3, 8},
		} {
			t.Run(fmt.Sprintf("%s/demand=%d", name, demand), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) { load[name][demand] = checkOverload(t, cfg, cases[name], w).load })
			})
		}
	}
	fs := load["failsafe-adaptivethrottler"]
	if !(fs[3] < fs[10] && fs[10] < fs[30] && fs[30] > 2*fs[3]) {
		t.Errorf("failsafe-go's backend load at 3, 10 and 30 times capacity: %.2f, %.2f, %.2f: want it growing with demand", fs[3], fs[10], fs[30])
	}
	// How much more failsafe-go sends than the SRE throttle, at least: the
	// model says 1.7 and 2.9 times; in 65 runs it was 1.3 at the least, at 10.
	for d, ratio := range map[int]float64{10: 1.2, 30: 2} {
		if sre := load["again-sre"][d]; sre*ratio > fs[d] {
			t.Errorf("at %d times capacity again's SRE throttle sent %.2f × capacity and failsafe-go's %.2f: want the SRE's %.1f times less at least", d, sre, fs[d], ratio)
		}
	}
}
