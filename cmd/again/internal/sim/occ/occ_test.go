package occ

import (
	"bufio"
	"container/heap"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/sim"
	"github.com/again-go/again/cmd/again/internal/sim/simtest"
)

// seq is a backoff.Rand that returns fixed values.
type seq []float64

func (s *seq) Float64() float64 { u := (*s)[0]; *s = (*s)[1:]; return u }

// TestAlgorithmPolicy checks that each algorithm's Policy samples exactly
// the post's formula, so that the model runs the library's code and still
// reproduces the published algorithms.
func TestSimAlgorithmPolicy(t *testing.T) {
	const base, cap = 5 * time.Millisecond, 2000 * time.Millisecond
	expo := func(n int) time.Duration { return min(cap, base*time.Duration(math.Pow(2, float64(n)))) }
	us := []float64{0, 0.25, 0.5, 0.999}
	for n := 1; n <= 12; n++ {
		for _, u := range us {
			v := expo(n)
			for _, c := range []struct {
				a    Algorithm
				want time.Duration
			}{
				{NoBackoff, 0},
				{Exponential, v},
				{FullJitter, time.Duration(u * float64(v))},
				{EqualJitter, v/2 + time.Duration(u*float64(v)/2)},
			} {
				r := seq{u}
				if got := c.a.Policy(base, cap).Sample(n, 0, &r); absDur(got-c.want) > 1 {
					t.Errorf("%s: Sample(%d) with u=%v = %v, want %v", c.a, n, u, got, c.want)
				}
			}
		}
	}
	// Decorrelated: sleep = min(cap, uniform(base, 3·sleep)) from sleep = base.
	p := DecorrelatedJitter.Policy(base, cap)
	sleep, prev := float64(base), time.Duration(0)
	for n := 1; n <= 20; n++ {
		u := us[n%len(us)]
		r := seq{u}
		prev = p.Sample(n, prev, &r)
		sleep = math.Min(float64(cap), float64(base)+u*(3*sleep-float64(base)))
		if absDur(prev-time.Duration(sleep)) > 1 {
			t.Fatalf("decorrelated: Sample(%d) = %v, want %v", n, prev, time.Duration(sleep))
		}
	}
}

func absDur(d time.Duration) time.Duration { return max(d, -d) }

// refOCC is an independent implementation of the original simulator's
// algorithm (aws-samples/aws-arch-backoff-simulator): float milliseconds,
// container/heap, its own formulas for the sleeps instead of backoff.Policy.
// It returns the mean writes and the mean time of the last event.
func refOCC(clients, runs int, alg Algorithm, r *rand.Rand) (calls, ms float64) {
	const base, cap = 5.0, 2000.0
	net := func() float64 { return math.Abs(r.NormFloat64()*2 + 10) }
	for range runs {
		attempt := make([]int, clients)
		sleep := make([]float64, clients)
		h := &refHeap{}
		for c := range clients {
			sleep[c] = base
			heap.Push(h, refMsg{net(), c, 0, 0})
		}
		version, now := 0, 0.0
		for h.Len() > 0 {
			m := heap.Pop(h).(refMsg)
			now = m.at
			switch m.kind {
			case 0: // read at the server
				heap.Push(h, refMsg{now + net(), m.client, 1, version})
			case 1: // version back at the client: write it
				heap.Push(h, refMsg{now + net(), m.client, 2, m.arg})
			case 2: // write at the server
				calls++
				ok := 0
				if m.arg == version {
					version++
					ok = 1
				}
				heap.Push(h, refMsg{now + net(), m.client, 3, ok})
			case 3:
				if m.arg == 1 {
					continue
				}
				attempt[m.client]++
				v := math.Min(cap, math.Pow(2, float64(attempt[m.client]))*base)
				var b float64
				switch alg {
				case Exponential:
					b = v
				case FullJitter:
					b = r.Float64() * v
				case EqualJitter:
					b = v/2 + r.Float64()*v/2
				case DecorrelatedJitter:
					s := &sleep[m.client]
					*s = math.Min(cap, base+r.Float64()*(*s*3-base))
					b = *s
				}
				heap.Push(h, refMsg{now + net() + b, m.client, 0, 0})
			}
		}
		ms += now
	}
	return calls / float64(runs), ms / float64(runs)
}

type refMsg struct {
	at                float64
	client, kind, arg int
}

type refHeap []refMsg

func (h refHeap) Len() int           { return len(h) }
func (h refHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h refHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *refHeap) Push(x any)        { *h = append(*h, x.(refMsg)) }
func (h *refHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// within reports whether got is within frac of want.
func within(got, want, frac float64) bool { return math.Abs(got-want) <= frac*math.Abs(want) }

// TestOCCMatchesReference compares the model with the reference
// implementation of the original algorithm: every cell within 10 %.
func TestSimOCCMatchesReference(t *testing.T) {
	if testing.Short() {
		t.Skip("long Monte Carlo comparison; runs without -short")
	}
	const runs = 200
	clients := []int{10, 40, 100}
	rows, err := Run(Config{Clients: clients, Runs: runs, Seed: 7, Runner: simtest.Parallel})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		r := rand.New(rand.NewPCG(99, uint64(row.Clients)))
		calls, ms := refOCC(row.Clients, runs, row.Algorithm, r)
		if !within(row.Calls, calls, 0.1) || !within(row.TimeMS, ms, 0.1) {
			t.Errorf("%d clients, %s: calls %.1f, time %.0f ms; reference %.1f, %.0f ms (more than 10%% apart)",
				row.Clients, row.Algorithm, row.Calls, row.TimeMS, calls, ms)
		}
	}
}

// TestOCCMatchesOriginal compares the default table with the original
// Python simulator's output (testdata/aws-original.csv): every cell within
// 10 %.
func TestSimOCCMatchesOriginal(t *testing.T) {
	if testing.Short() {
		t.Skip("the full default table; runs without -short")
	}
	want := readOriginal(t)
	rows, err := Run(Config{Seed: 1, Runner: simtest.Parallel})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(want) {
		t.Fatalf("Run returned %d rows, the original %d", len(rows), len(want))
	}
	for _, row := range rows {
		w, ok := want[occKey{row.Clients, row.Algorithm}]
		if !ok {
			t.Fatalf("no original row for %d clients, %s", row.Clients, row.Algorithm)
		}
		if !within(row.Calls, w.Calls, 0.1) || !within(row.TimeMS, w.TimeMS, 0.1) {
			t.Errorf("%d clients, %s: calls %.1f, time %.0f ms; original %.1f, %.0f ms (more than 10%% apart)",
				row.Clients, row.Algorithm, row.Calls, row.TimeMS, w.Calls, w.TimeMS)
		}
	}
}

type occKey struct {
	clients int
	alg     Algorithm
}

func readOriginal(t *testing.T) map[occKey]Row {
	t.Helper()
	f, err := os.Open("testdata/aws-original.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[occKey]Row{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "clients,") {
			continue
		}
		p := strings.Split(line, ",")
		n, err1 := strconv.Atoi(p[0])
		ms, err2 := strconv.ParseFloat(p[2], 64)
		calls, err3 := strconv.ParseFloat(p[3], 64)
		if len(p) != 4 || err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("bad line %q", line)
		}
		m[occKey{n, Algorithm(p[1])}] = Row{Clients: n, Algorithm: Algorithm(p[1]), Calls: calls, TimeMS: ms}
	}
	return m
}

// TestOCCConclusions asserts the post's conclusions on the model's table.
// Of the algorithms that back off, decorrelated finishes soonest up to 130
// clients in the original simulator, 140 here; beyond, full jitter catches
// up. TestSimOCCREADME checks docs/cli.md's account of the whole table.
func TestSimOCCConclusions(t *testing.T) {
	if testing.Short() {
		t.Skip("Monte Carlo; runs without -short")
	}
	rows, err := Run(Config{Clients: []int{20, 50, 100}, Seed: 1, Runner: simtest.Parallel})
	if err != nil {
		t.Fatal(err)
	}
	byN := map[int]map[Algorithm]Row{}
	for _, r := range rows {
		if byN[r.Clients] == nil {
			byN[r.Clients] = map[Algorithm]Row{}
		}
		byN[r.Clients][r.Algorithm] = r
	}
	for n, m := range byN {
		for _, a := range []Algorithm{NoBackoff, FullJitter, EqualJitter, DecorrelatedJitter} {
			if m[Exponential].TimeMS < 5*m[a].TimeMS {
				t.Errorf("%d clients: exponential takes %.0f ms, not 5 times %s's %.0f ms", n, m[Exponential].TimeMS, a, m[a].TimeMS)
			}
		}
		for _, a := range []Algorithm{FullJitter, EqualJitter} {
			if m[DecorrelatedJitter].TimeMS >= m[a].TimeMS {
				t.Errorf("%d clients: decorrelated takes %.0f ms, not less than %s's %.0f ms", n, m[DecorrelatedJitter].TimeMS, a, m[a].TimeMS)
			}
			if n < 50 {
				continue
			}
			for _, b := range []Algorithm{NoBackoff, Exponential, DecorrelatedJitter} {
				if m[a].Calls >= m[b].Calls {
					t.Errorf("%d clients: %s makes %.0f calls, not fewer than %s's %.0f", n, a, m[a].Calls, b, m[b].Calls)
				}
			}
		}
	}
}

// TestSimOCCREADME checks what docs/cli.md says of `again sim occ`'s
// table, the default one with seed 1: no backoff finishes first at every
// client count with the most calls, 1.3 times full jitter's at 10 clients
// and 4.5 times at 190; exponential takes the longest; of the algorithms
// that back off, decorrelated finishes soonest up to 140 clients and full
// jitter from 150; from 40 clients on, full and equal jitter make the
// fewest calls; and every cell is within 6 % of the original simulator's.
func TestSimOCCREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("the full default table; runs without -short")
	}
	rows, err := Run(Config{Seed: 1, Runner: simtest.Parallel})
	if err != nil {
		t.Fatal(err)
	}
	original := readOriginal(t)
	byN := map[int]map[Algorithm]Row{}
	for _, r := range rows {
		if byN[r.Clients] == nil {
			byN[r.Clients] = map[Algorithm]Row{}
		}
		byN[r.Clients][r.Algorithm] = r
		o := original[occKey{r.Clients, r.Algorithm}]
		if !within(r.Calls, o.Calls, 0.06) || !within(r.TimeMS, o.TimeMS, 0.06) {
			t.Errorf("%d clients, %s: calls %.1f, time %.0f ms; original %.1f, %.0f ms (more than 6 %% apart)", r.Clients, r.Algorithm, r.Calls, r.TimeMS, o.Calls, o.TimeMS)
		}
	}
	backingOff := []Algorithm{Exponential, FullJitter, EqualJitter, DecorrelatedJitter}
	soonest := func(m map[Algorithm]Row, algs []Algorithm) Algorithm {
		best := algs[0]
		for _, a := range algs[1:] {
			if m[a].TimeMS < m[best].TimeMS {
				best = a
			}
		}
		return best
	}
	for n := 10; n <= 190; n += 10 {
		m := byN[n]
		if len(m) != 5 {
			t.Fatalf("%d clients: %d rows, want 5", n, len(m))
		}
		if a := soonest(m, Algorithms()); a != NoBackoff {
			t.Errorf("%d clients: %s finishes first, not none", n, a)
		}
		for _, a := range backingOff {
			if m[a].Calls >= m[NoBackoff].Calls {
				t.Errorf("%d clients: %s makes %.1f calls, none %.1f; want none to make the most", n, a, m[a].Calls, m[NoBackoff].Calls)
			}
			if a != Exponential && m[a].TimeMS >= m[Exponential].TimeMS {
				t.Errorf("%d clients: %s takes %.0f ms, exponential %.0f; want exponential the longest", n, a, m[a].TimeMS, m[Exponential].TimeMS)
			}
		}
		want := DecorrelatedJitter
		if n >= 150 {
			want = FullJitter
		}
		if a := soonest(m, backingOff); a != want {
			t.Errorf("%d clients: of those that back off, %s finishes soonest, want %s", n, a, want)
		}
		if n >= 40 {
			for _, a := range []Algorithm{NoBackoff, Exponential, DecorrelatedJitter} {
				if m[a].Calls <= max(m[FullJitter].Calls, m[EqualJitter].Calls) {
					t.Errorf("%d clients: %s makes %.1f calls, not more than full's %.1f and equal's %.1f", n, a, m[a].Calls, m[FullJitter].Calls, m[EqualJitter].Calls)
				}
			}
		}
	}
	for n, want := range map[int]string{10: "1.3", 190: "4.5"} {
		if got := strconv.FormatFloat(byN[n][NoBackoff].Calls/byN[n][FullJitter].Calls, 'f', 1, 64); got != want {
			t.Errorf("%d clients: none makes %s times full jitter's calls, docs/cli.md says %s", n, got, want)
		}
	}
	// The original simulator: decorrelated soonest up to 130, full from 140.
	for n := 130; n <= 140; n += 10 {
		m := map[Algorithm]Row{}
		for _, a := range backingOff {
			m[a] = original[occKey{n, a}]
		}
		want := map[int]Algorithm{130: DecorrelatedJitter, 140: FullJitter}[n]
		if a := soonest(m, backingOff); a != want {
			t.Errorf("original simulator, %d clients: %s finishes soonest of those that back off, want %s", n, a, want)
		}
	}
}

// TestOCCDeterministic checks that a seed gives the same table whatever the
// Runner and whatever other rows are computed alongside.
func TestSimOCCDeterministic(t *testing.T) {
	c := Config{Clients: []int{5, 30}, Runs: 20, Seed: 3}
	serial, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	c.Runner = simtest.Parallel
	par, _ := Run(c)
	alone, _ := Run(Config{Clients: []int{30}, Algorithms: []Algorithm{FullJitter}, Runs: 20, Seed: 3})
	for i := range serial {
		if serial[i] != par[i] {
			t.Errorf("row %d: serial %+v, parallel %+v", i, serial[i], par[i])
		}
	}
	if alone[0] != serial[len(serial)/2+2] {
		t.Errorf("30 clients, full alone: %+v; among others: %+v", alone[0], serial[len(serial)/2+2])
	}
	other, _ := Run(Config{Clients: []int{30}, Algorithms: []Algorithm{FullJitter}, Runs: 20, Seed: 4})
	if other[0] == alone[0] {
		t.Errorf("seeds 3 and 4 give the same row %+v", other[0])
	}
}

func TestSimOCCGolden(t *testing.T) {
	rows, err := Run(Config{Clients: []int{10}, Runs: 10, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(strconv.Itoa(r.Clients) + "," + string(r.Algorithm) + "," + strconv.FormatFloat(r.Calls, 'f', 1, 64) + "," + strconv.FormatFloat(r.TimeMS, 'f', 3, 64) + "\n")
	}
	simtest.Golden(t, "occ-10-clients.csv", b.String())
}

func TestSimOCCRejects(t *testing.T) {
	for _, c := range []Config{
		{Clients: []int{0}},
		{Clients: []int{sim.MaxClients + 1}},
		{Runs: -1},
		{Algorithms: []Algorithm{"fast"}},
		{Base: -time.Second},
		// Each within its limit, together hours of work.
		{Clients: []int{sim.MaxClients}, Runs: 1},
		{Clients: []int{190}, Runs: MaxRuns},
	} {
		if _, err := Run(c); err == nil {
			t.Errorf("Run(%+v) returned no error", c)
		}
	}
}

// TestSimOCCWorkLimit checks that the default table is well within the
// bound on the OCC table's work, and that the bound is exact.
func TestSimOCCWorkLimit(t *testing.T) {
	if _, err := (&Config{Runs: 4 * 100}).withDefaults(); err != nil {
		t.Errorf("the default clients with 400 runs (98.8 M): %v", err)
	}
	if _, err := (&Config{Clients: []int{10_000}, Runs: 1}).withDefaults(); err != nil {
		t.Errorf("10000 clients, 1 run (exactly the bound): %v", err)
	}
	if _, err := (&Config{Clients: []int{10_000, 1}, Runs: 1}).withDefaults(); !errors.Is(err, sim.ErrInvalid) {
		t.Errorf("one clients² over the bound: got %v, want an error matching ErrInvalid", err)
	}
}
