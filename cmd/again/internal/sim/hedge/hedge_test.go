package hedge

import (
	"errors"
	"reflect"
	"runtime"
	"testing"

	"github.com/again-go/again/cmd/again/internal/sim"
	"github.com/again-go/again/cmd/again/internal/sim/simtest"
)

// hedgeRow returns the row of rows for q, budget and over.
func hedgeRow(t *testing.T, rows []Row, q float64, budget, over bool) Row {
	t.Helper()
	for _, r := range rows {
		if r.HedgeQuantile == q && r.Budget == budget && r.Overloaded == over {
			return r
		}
	}
	t.Fatalf("no row for quantile %v, budget %v, overloaded %v", q, budget, over)
	return Row{}
}

// checkHedgeShape asserts The Tail at Scale's shape and the storm: at
// normal load, hedging at p95 costs about 5 % extra requests and cuts
// p99.9 at least 5×; overloaded, hedging after a fixed delay without a
// budget collapses (the median latency a hundred times the unhedged one),
// and with the budget it does not (within 2× of it, at most ~10 % extra).
func checkHedgeShape(t *testing.T, c Config) {
	t.Helper()
	rows, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	plain, p95 := hedgeRow(t, rows, 0, false, false), hedgeRow(t, rows, 0.95, false, false)
	if p95.ExtraLoad < 0.03 || p95.ExtraLoad > 0.07 {
		t.Errorf("seed %d: hedging at p95 cost %.3f extra load; want about 0.05", c.Seed, p95.ExtraLoad)
	}
	if cut := plain.P999MS / p95.P999MS; cut < 5 {
		t.Errorf("seed %d: p99.9 %.1f ms → %.1f ms hedged at p95, a cut of %.1f×; want at least 5×", c.Seed, plain.P999MS, p95.P999MS, cut)
	}
	if p95.P50MS > plain.P50MS*1.1 {
		t.Errorf("seed %d: p50 %.1f ms → %.1f ms hedged at p95; want it about unchanged", c.Seed, plain.P50MS, p95.P50MS)
	}
	over := hedgeRow(t, rows, 0, false, true)
	storm, budgeted := hedgeRow(t, rows, 0.95, false, true), hedgeRow(t, rows, 0.95, true, true)
	if storm.P50MS < 100*over.P50MS || storm.ExtraLoad < 0.9 {
		t.Errorf("seed %d, overloaded: p50 %.1f ms unhedged, %.1f ms hedged without a budget at %.2f extra; want a collapse (100× and nearly every request hedged)",
			c.Seed, over.P50MS, storm.P50MS, storm.ExtraLoad)
	}
	if budgeted.P50MS > 2*over.P50MS || budgeted.P999MS > 2*over.P999MS || budgeted.ExtraLoad > 0.11 {
		t.Errorf("seed %d, overloaded with the budget: p50 %.1f ms, p99.9 %.1f ms at %.3f extra (unhedged %.1f, %.1f); want within 2× at most 0.11 extra",
			c.Seed, budgeted.P50MS, budgeted.P999MS, budgeted.ExtraLoad, over.P50MS, over.P999MS)
	}
}

func TestSimHedgeShape(t *testing.T) {
	checkHedgeShape(t, Config{Seed: 1, Requests: 30_000, Quantiles: []float64{0, 0.95}, Runner: simtest.Parallel})
}

// The same shape over seeds, at the default size: long Monte Carlo.
func TestSimHedgeShapeSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("long Monte Carlo; runs without -short")
	}
	for seed := range uint64(3) {
		checkHedgeShape(t, Config{Seed: seed + 2, Quantiles: []float64{0, 0.95}, Runner: simtest.Parallel})
	}
}

func TestSimHedgeLognormal(t *testing.T) {
	rows, err := Run(Config{Seed: 1, Requests: 20_000, Dist: Distribution{Name: Lognormal, Sigma: 1.5}, Quantiles: []float64{0, 0.95}, Runner: simtest.Parallel})
	if err != nil {
		t.Fatal(err)
	}
	plain, p95 := hedgeRow(t, rows, 0, false, false), hedgeRow(t, rows, 0.95, false, false)
	if p95.P999MS >= plain.P999MS/2 || p95.ExtraLoad > 0.07 {
		t.Errorf("lognormal σ 1.5: p99.9 %.1f → %.1f ms at %.3f extra; want at least halved for about 5 %%", plain.P999MS, p95.P999MS, p95.ExtraLoad)
	}
}

func TestSimHedgeRows(t *testing.T) {
	rows, err := Run(Config{Seed: 1, Requests: 1000, Quantiles: []float64{0, 0.9}})
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		q            float64
		budget, over bool
	}
	var got []key
	for _, r := range rows {
		got = append(got, key{r.HedgeQuantile, r.Budget, r.Overloaded})
	}
	want := []key{{0, false, false}, {0.9, false, false}, {0.9, true, false}, {0, false, true}, {0.9, false, true}, {0.9, true, true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows %v; want %v", got, want)
	}
	if rows[0].ExtraLoad != 0 {
		t.Errorf("no hedging, yet extra load %v", rows[0].ExtraLoad)
	}
}

// The rows are the same whether they run one by one or on every core.
func TestSimHedgeDeterministic(t *testing.T) {
	c := Config{Seed: 7, Requests: 2000}
	serial, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	c.Runner = simtest.Parallel
	par, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(serial, par) {
		t.Errorf("serial and parallel runs differ:\n%v\n%v", serial, par)
	}
}

func TestSimHedgeRejects(t *testing.T) {
	for _, tt := range []struct {
		name  string
		c     Config
		field string
	}{
		{"unknown distribution", Config{Dist: Distribution{Name: "uniform"}}, "Dist"},
		{"alpha 1: no mean", Config{Dist: Distribution{Alpha: 1}}, "Alpha"},
		{"negative sigma", Config{Dist: Distribution{Sigma: -1}}, "Sigma"},
		{"scale too long", Config{Dist: Distribution{Scale: 2e9}}, "Scale"},
		{"quantile 1", Config{Quantiles: []float64{1}}, "Quantiles"},
		{"no quantiles", Config{Quantiles: []float64{}}, "Quantiles"},
		{"load 1", Config{Load: 1}, "Load"},
		{"overload above 1", Config{Overload: 1.5}, "Overload"},
		{"four hedges", Config{MaxHedges: 4}, "MaxHedges"},
		{"budget ratio", Config{BudgetRatio: 2}, "BudgetRatio"},
		{"too few requests", Config{Requests: 10}, "Requests"},
		// Each size within its own limit, together too many: 100 s and
		// 327 MB at the three limits.
		{"every size at its limit", Config{Requests: MaxRequests, MaxHedges: 3, Quantiles: make([]float64, 20)}, FieldAttempts},
		{"the default quantiles with a million requests", Config{Requests: MaxRequests}, FieldAttempts},
		{"one attempt too many", Config{Requests: MaxAttempts/4 + 1, MaxHedges: 3, Quantiles: []float64{0.5}}, FieldAttempts},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(tt.c)
			var fe *sim.FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field || !errors.Is(err, sim.ErrInvalid) {
				t.Errorf("Run = %v; want a *FieldError for %s", err, tt.field)
			}
		})
	}
	// The combined limit states its terms and its result.
	_, err := Run(Config{Requests: MaxRequests, MaxHedges: 3, Quantiles: make([]float64, 20)})
	if want := "sim: len(Quantiles) × Requests × (1 + MaxHedges) must be at most 2500000 attempts, got 20 × 1000000 × 4 = 80000000"; err == nil || err.Error() != want {
		t.Errorf("Run at every limit: %v; want %q", err, want)
	}
	// At the limit itself the configuration is accepted.
	if _, err := (&Config{Requests: MaxAttempts / 4, MaxHedges: 3, Quantiles: []float64{0.5}}).withDefaults(); err != nil {
		t.Errorf("at the limit: %v; want it accepted", err)
	}
}

// TestSimHedgeMemoryPerRequest pins what a row allocates per request where
// it needs the most: overloaded, hedging after a fixed delay without a
// budget and up to 3 times, so that nearly every attempt is still in
// progress at the end. hedgeSpace takes 9 bytes per request and 24 per
// attempt, 105 in all; the model once kept 32-byte requests, 24-byte
// attempts and 24-byte end marks in slices grown by appending, about 900
// bytes allocated per request and 1.07 GB of memory for `again sim hedge
// --requests 1000000 --max-hedges 3`. A second row on the same hedgeSpace
// allocates next to nothing.
func TestSimHedgeMemoryPerRequest(t *testing.T) {
	c, err := (&Config{Seed: 1, Requests: 100_000, MaxHedges: 3}).withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	row := Row{HedgeQuantile: 0.5, Overloaded: true}
	s := new(hedgeSpace)
	perRequest := func() (Row, float64) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		got := hedgeRun(&c, row, s)
		runtime.ReadMemStats(&after)
		return got, float64(after.TotalAlloc-before.TotalAlloc) / float64(c.Requests)
	}
	got, first := perRequest()
	if got.ExtraLoad < 2.9 {
		t.Fatalf("%+v: %.2f hedges per request; want the storm's 3, the case this test is about", got, got.ExtraLoad)
	}
	if first > 128 {
		t.Errorf("one overloaded row of %d requests with 3 hedges allocated %.0f bytes per request; want at most 128 (9 per request and 24 per attempt)", c.Requests, first)
	}
	again, second := perRequest()
	if again != got {
		t.Errorf("the same row on a reused hedgeSpace gave %+v, first %+v", again, got)
	}
	if second > 4 {
		t.Errorf("the same row on a reused hedgeSpace allocated %.1f bytes per request; want at most 4", second)
	}
}
