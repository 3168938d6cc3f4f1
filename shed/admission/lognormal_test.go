package admission

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// simEvent is one event of simCore's discrete-event run: at is since the
// run's start.
type simEvent struct {
	at   time.Duration
	kind int // 0 arrive, 1 done, 2 client gives up
	i    int // the request
}

type simEvents []simEvent

func (h simEvents) Len() int           { return len(h) }
func (h simEvents) Less(i, j int) bool { return h[i].at < h[j].at }
func (h simEvents) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *simEvents) Push(x any)        { *h = append(*h, x.(simEvent)) }
func (h *simEvents) Pop() any {
	o := *h
	e := o[len(o)-1]
	*h = o[:len(o)-1]
	return e
}

// simResult is a simCore run's figures, over the run but its first
// quarter (simPhases: from its from): goodput (successes within the client's 1 s over capacity ×
// time), the success p99 and the p99 of their wait before service, each
// class's availability and how many of it were lost, by Reason
// (Canceled: the client gave up, waiting or served too late).
type simResult struct {
	goodput float64
	p99     time.Duration
	avail   [CriticalPlus + 1]float64
	reasons [CriticalPlus + 1]map[Reason]int
	offered [CriticalPlus + 1]int
	waitP99 time.Duration
	// classP99 is each class's success p99.
	classP99 [CriticalPlus + 1]time.Duration
	// lastSlough is when CoDel last sloughed a counted request (since the
	// run's start), 0 if never.
	lastSlough time.Duration
}

// simCore runs a Core on a virtual clock: Poisson arrivals at times × C,
// a share critical of them CRITICAL (the rest SHEDDABLE), a lognormal
// service time (median 35 ms, sigma 0.5) on 4 workers, clients that give
// up after 1 s, for run.
func simCore(t *testing.T, cfg Config, times, critical float64, run time.Duration, seed uint64) simResult {
	return simCoreOf(t, 4, cfg, times, critical, run, seed)
}

// simCoreOf is simCore with workers workers (and as many permits, unless
// cfg says otherwise).
func simCoreOf(t *testing.T, workers int, cfg Config, times, critical float64, run time.Duration, seed uint64) simResult {
	return simPhases(t, workers, cfg, []simPhase{{until: run, times: times, critical: critical}}, run/4, seed)
}

// simPhase is a stretch of a simPhases run: until (since the run's
// start) the load is times × C, a share critical of it CRITICAL.
type simPhase struct {
	until           time.Duration
	times, critical float64
}

// simPhases is simCoreOf with the load in phases, the last one's end the
// run's; its figures are over the requests that arrived from from to the
// end of the run.
func simPhases(t *testing.T, workers int, cfg Config, load []simPhase, from time.Duration, seed uint64) simResult {
	median, sigma := 35*time.Millisecond, 0.5
	capacity := float64(workers) / (median.Seconds() * math.Exp(sigma*sigma/2))
	r := rand.New(rand.NewPCG(seed, 2))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type req struct {
		class   Criticality
		at      time.Duration
		started time.Duration
		w       Waiter
		fate    Reason
		decided bool
		ok      bool
		took    time.Duration
		// decidedAt is when the Core decided the request.
		decidedAt time.Duration
	}
	var reqs []*req
	var ev simEvents
	var now time.Duration
	serve := func(i int) {
		q := reqs[i]
		q.started = now
		d := time.Duration(float64(median) * math.Exp(sigma*r.NormFloat64()))
		heap.Push(&ev, simEvent{at: now + d, kind: 1, i: i})
	}
	c, err := NewCore(cfg, t0, func(w *Waiter, why Reason) {
		q := reqs[w.Tag]
		q.decided, q.fate, q.decidedAt = true, why, now
		if why == Admitted {
			serve(w.Tag)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, at := 0, time.Duration(0); i < len(load); {
		p := load[i]
		gap := time.Duration(r.ExpFloat64() / (p.times * capacity) * float64(time.Second))
		if at+gap >= p.until {
			// Poisson arrivals forget: the next phase draws afresh from its start.
			at, i = p.until, i+1
			continue
		}
		at += gap
		k := Sheddable
		if r.Float64() < p.critical {
			k = Critical
		}
		reqs = append(reqs, &req{class: k, at: at})
		heap.Push(&ev, simEvent{at: at, kind: 0, i: len(reqs) - 1})
	}
	for ev.Len() > 0 {
		e := heap.Pop(&ev).(simEvent)
		now = e.at
		q := reqs[e.i]
		switch e.kind {
		case 0:
			q.w.Tag = e.i
			queued, why := c.Arrive(t0.Add(now), Request{Criticality: q.class, Timeout: time.Second}, &q.w)
			if !queued {
				q.decided, q.fate = true, why
				if why == Admitted {
					serve(e.i)
				}
			} else {
				heap.Push(&ev, simEvent{at: now + time.Second, kind: 2, i: e.i})
			}
		case 1:
			q.ok = now-q.at <= time.Second
			q.took = now - q.at
			c.Done(t0.Add(now), now-q.started)
		case 2:
			c.Leave(&q.w, Canceled)
			if !q.decided {
				q.decided, q.fate = true, Canceled
			}
		}
	}
	var res simResult
	var lat, wait []time.Duration
	var ok [CriticalPlus + 1]int
	var classLat [CriticalPlus + 1][]time.Duration
	for _, q := range reqs {
		if q.at < from {
			continue
		}
		if q.decided && q.fate == Overload {
			res.lastSlough = max(res.lastSlough, q.decidedAt)
		}
		res.offered[q.class]++
		if res.reasons[q.class] == nil {
			res.reasons[q.class] = map[Reason]int{}
		}
		if q.ok {
			ok[q.class]++
			lat = append(lat, q.took)
			classLat[q.class] = append(classLat[q.class], q.took)
			wait = append(wait, q.started-q.at)
		} else if q.fate == Admitted {
			res.reasons[q.class][Canceled]++ // served too late
		} else {
			res.reasons[q.class][q.fate]++
		}
	}
	slices.Sort(lat)
	slices.Sort(wait)
	if len(lat) > 0 {
		res.waitP99 = wait[len(wait)*99/100]
		res.p99 = lat[len(lat)*99/100]
	}
	total := 0
	for k := range ok {
		if l := classLat[k]; len(l) > 0 {
			slices.Sort(l)
			res.classP99[k] = l[len(l)*99/100]
		}
		total += ok[k]
		if res.offered[k] > 0 {
			res.avail[k] = float64(ok[k]) / float64(res.offered[k])
		}
	}
	res.goodput = float64(total) / (capacity * (load[len(load)-1].until - from).Seconds())
	return res
}

// TestCoreLognormalOverload is the bench's server (TestShedOverload in
// the bench module: 4 permits, a lognormal service time of median 35 ms,
// clients that wait 1 s) on a virtual clock, where a permit frees every
// 10 ms or so, twice Target: the queue's head waits about that long
// whenever every permit is busy.
func TestCoreLognormalOverload(t *testing.T) {
	const run = 20 * time.Second
	cases := []struct {
		name        string
		times, crit float64
		minCrit     float64       // the critical class's availability, at least
		maxShed     float64       // the sheddable class's, at most
		maxWait     time.Duration // the p99 of the wait before service of those served in time
		minGoodput  float64
	}{
		// Sloughing by age alone dropped a critical request next in line
		// for one turnover of the permits: 0.976 available at 0.5×; 0.989
		// while a request admitted at once did not count as a delay of 0
		// (0.995 now).
		{"one class at 0.5x", 0.5, 1, 0.99, 0, time.Second, 0.45},
		// An interval whose minimum dipped below Target after a slough
		// ended the overload, and the queue served FIFO requests that
		// had waited up to 100 ms: a p99 wait of 90 ms.
		{"one class at 4x", 4, 1, 0, 0, 20 * time.Millisecond, 0.95},
		// Critical requests were sloughed for one turnover (0.854
		// available), or served newest first behind the sheddable queue's
		// overload (a p99 wait of 237 ms); sloughed by the sweep that had
		// just sloughed the sheddable ones below them (0.990). Over seeds:
		// TestCoreLognormalClasses.
		{"20% critical at 4x", 4, 0.2, 0.995, 0.15, 120 * time.Millisecond, 0.95},
	}
	for _, c := range cases {
		res := simCore(t, Config{Limit: 4}, c.times, c.crit, run, 1)
		t.Logf("%s: goodput %.3f, success p99 %v, wait p99 %v; critical %.4f available (lost: %v), sheddable %.4f (lost: %v)",
			c.name, res.goodput, res.p99.Round(time.Millisecond), res.waitP99.Round(time.Millisecond),
			res.avail[Critical], res.reasons[Critical], res.avail[Sheddable], res.reasons[Sheddable])
		if res.goodput < c.minGoodput {
			t.Errorf("%s: goodput %.3f of capacity, want at least %.2f", c.name, res.goodput, c.minGoodput)
		}
		if res.waitP99 > c.maxWait {
			t.Errorf("%s: p99 of the wait before service %v, want at most %v", c.name, res.waitP99, c.maxWait)
		}
		if res.avail[Critical] < c.minCrit {
			t.Errorf("%s: critical class %.4f available (lost: %v), want at least %.3f", c.name, res.avail[Critical], res.reasons[Critical], c.minCrit)
		}
		if c.crit < 1 && res.avail[Sheddable] > c.maxShed {
			t.Errorf("%s: sheddable class %.4f available, want at most %.2f: shed first", c.name, res.avail[Sheddable], c.maxShed)
		}
	}
}

// simSeeds is how many seeds the tables over seeds run: each is a
// different draw of arrivals and service times.
const simSeeds = 20

// overSeeds runs simCoreOf for seeds 1 to n and returns each run.
func overSeeds(t *testing.T, n, workers int, cfg Config, times, critical float64, run time.Duration) []simResult {
	out := make([]simResult, n)
	for i := range out {
		out[i] = simCoreOf(t, workers, cfg, times, critical, run, uint64(i+1))
	}
	return out
}

// medianOf returns the median of f over runs.
func medianOf(runs []simResult, f func(simResult) time.Duration) time.Duration {
	d := make([]time.Duration, len(runs))
	for i, r := range runs {
		d[i] = f(r)
	}
	slices.Sort(d)
	return d[len(d)/2]
}

// inOrder is a queue that CoDel never judges overloaded (its Target
// near the clients' timeout): nothing is shed, every request is served in
// arrival order, as a plain queue would.
var inOrder = Config{Target: 990 * time.Millisecond, Interval: time.Second, MaxQueue: 1 << 20}

// TestCoreLognormalClasses is the goal with two classes at 4 × C
// on the bench's server (4 permits), on a virtual clock, over seeds: in
// both mixes of the bench's TestShedOverload the critical class stays
// above 99 % available on every seed while the sheddable class is shed,
// and goodput stays above 0.9 of C.
//
// The success p99 is judged against what the critical class's own load
// costs. With a fifth of the requests critical, the critical class alone
// offers 0.8 × C, more than the unloaded step's whole load (0.5 × C):
// served in order and never shed, on 4 permits, its p99 is itself
// about 50 ms above the unloaded p99 (M/G/4 at 80 %: most requests find
// every permit busy), so the goal of + 10 ms cannot be met without
// shedding critical requests; what shedding the sheddable class owes is
// to add little to it (7 ms, median over seeds). With 0.5 × C of critical requests, the unloaded
// load, and the spike sheddable (Netflix's case), the p99 is the
// unloaded one plus the wait for a permit that a sheddable request holds
// (about one turnover, ~10 ms): the median over seeds is held to + 15 ms.
// Only a permit kept idle for the critical class would remove that wait,
// and with 4 permits one permit is a quarter of the capacity (a reserve
// of one permit for the critical class, tried: p99 + 5 ms, but goodput
// down to 0.85 of C).
func TestCoreLognormalClasses(t *testing.T) {
	if testing.Short() {
		t.Skip("160 runs of 20 s on the virtual clock: 15 s under -race")
	}
	const run = 20 * time.Second
	cfg := Config{Limit: 4}
	p99 := func(r simResult) time.Duration { return r.p99 }
	critP99 := func(r simResult) time.Duration { return r.classP99[Critical] }
	unloaded := medianOf(overSeeds(t, simSeeds, 4, cfg, 0.5, 1, run), p99)
	in := inOrder
	in.Limit = 4
	alone := medianOf(overSeeds(t, simSeeds, 4, in, 0.8, 1, run), p99)
	t.Logf("median over seeds of the success p99: %v unloaded (0.5 x C), %v of 0.8 x C served in order and never shed", unloaded.Round(time.Millisecond), alone.Round(time.Millisecond))
	cases := []struct {
		name    string
		crit    float64 // of the requests at 4 × C
		maxShed float64 // the sheddable class's availability, at most: what the critical class leaves
		// maxP99 is the most the median over seeds of the p99 may be, of
		// the critical class (fifth) or of every success (steady).
		what   string
		p99    func(simResult) time.Duration
		maxP99 time.Duration
	}{
		{"a fifth critical (0.8 x C)", 0.2, 0.1, "the critical class's p99, its own load alone in order + 10ms", critP99, alone + 10*time.Millisecond},
		{"critical 0.5 x C, the spike sheddable", 0.125, 0.2, "the success p99, the unloaded + 15ms", p99, unloaded + 15*time.Millisecond},
	}
	for _, c := range cases {
		runs := overSeeds(t, simSeeds, 4, cfg, 4, c.crit, run)
		for i, r := range runs {
			if r.avail[Critical] <= 0.99 || r.avail[Sheddable] > c.maxShed || r.goodput < 0.9 {
				t.Errorf("%s, seed %d: critical %.4f available (lost: %v), sheddable %.3f, goodput %.3f; want the critical above 0.99, the sheddable at most %.2f, goodput at least 0.9",
					c.name, i+1, r.avail[Critical], r.reasons[Critical], r.avail[Sheddable], r.goodput, c.maxShed)
			}
		}
		got := medianOf(runs, c.p99)
		logSeeds(t, c.name, runs, unloaded)
		if got > c.maxP99 {
			t.Errorf("%s: median over seeds of %s: %v, want at most %v", c.name, c.what, got, c.maxP99)
		}
	}
	// Below 4 × C the critical class in the steady mix meets a queue that
	// stands now and then, with the sheddable one often served at once:
	// it must not be sloughed for that (0.945 at 1 × C when it was).
	for _, times := range []float64{1, 2} {
		for i, r := range overSeeds(t, simSeeds, 4, cfg, times, 0.5/times, run) {
			if r.avail[Critical] <= 0.99 {
				t.Errorf("critical 0.5 x C at %gx, seed %d: critical %.4f available (lost: %v), want above 0.99",
					times, i+1, r.avail[Critical], r.reasons[Critical])
			}
		}
	}
}

// logSeeds logs the worst seed's critical availability and goodput over
// runs, and the median of the success p99 and of the critical class's.
func logSeeds(t *testing.T, name string, runs []simResult, unloaded time.Duration) {
	t.Helper()
	crit := slices.MinFunc(runs, func(a, b simResult) int { return cmpFloat(a.avail[Critical], b.avail[Critical]) })
	good := slices.MinFunc(runs, func(a, b simResult) int { return cmpFloat(a.goodput, b.goodput) })
	t.Logf("%s, %d seeds: critical at least %.4f available, goodput at least %.3f; median success p99 %v (unloaded %v), critical p99 %v",
		name, len(runs), crit.avail[Critical], good.goodput,
		medianOf(runs, func(r simResult) time.Duration { return r.p99 }).Round(time.Millisecond), unloaded.Round(time.Millisecond),
		medianOf(runs, func(r simResult) time.Duration { return r.classP99[Critical] }).Round(time.Millisecond))
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestCoreLognormalWorkers: the same service time on 16 permits and
// workers, at four times the capacity. The critical class's own queueing
// shrinks as the workers grow (M/G/16 at 80 % queues far less than
// M/G/4), and so does the excess of the p99 that it makes: with the
// spike sheddable (critical 0.5 × C) the goal holds, a success p99
// within the unloaded + 10 ms (median over seeds); with a fifth critical
// (0.8 × C) the excess is about 10 ms, from about 45 ms on 4 permits,
// held to 20 ms. In both, goodput at least 0.9 and the critical class
// above 99 % available on every seed. (A reserve of permits for the
// critical class, tried there too: 1 of 16 took at most 4 ms off the
// p99 and 0.03 off the goodput.)
func TestCoreLognormalWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("24 runs of 10 s at 16 permits on the virtual clock: 10 s under -race")
	}
	const run, workers, seeds = 10 * time.Second, 16, 8
	cfg := Config{Limit: workers}
	p99 := func(r simResult) time.Duration { return r.p99 }
	unloaded := medianOf(overSeeds(t, seeds, workers, cfg, 0.5, 1, run), p99)
	for _, c := range []struct {
		name   string
		crit   float64
		excess time.Duration // over the unloaded p99, at most
	}{
		{"a fifth critical (0.8 x C)", 0.2, 20 * time.Millisecond},
		{"critical 0.5 x C, the spike sheddable", 0.125, 10 * time.Millisecond},
	} {
		runs := overSeeds(t, seeds, workers, cfg, 4, c.crit, run)
		for i, r := range runs {
			if r.avail[Critical] <= 0.99 || r.goodput < 0.9 {
				t.Errorf("%s at 4x, seed %d: critical %.4f available (lost: %v), goodput %.3f; want above 0.99 and at least 0.9",
					c.name, i+1, r.avail[Critical], r.reasons[Critical], r.goodput)
			}
		}
		got := medianOf(runs, p99)
		logSeeds(t, c.name+" on 16 permits", runs, unloaded)
		if got > unloaded+c.excess {
			t.Errorf("%s at 4x on %d permits: median success p99 %v, want at most the unloaded %v + %v", c.name, workers, got, unloaded, c.excess)
		}
	}
}

// TestCoreLognormalStepBack: after the load steps from 4 × C back to
// 0.5 × C, a server that has recovered stops shedding, for one class and
// for both mixes of the bench (a fifth critical at every step; critical
// 0.5 × C at every step, so that after the step only critical requests
// come). What arrives in the step's first two Intervals meets the queue
// of the overload and may be sloughed with it; what arrives later must
// be served, on all seeds but one per mix at most. An interval that
// sloughed stayed overloaded even when requests were admitted without
// waiting in it, and at 0.5 × C, where a request waits one turnover of
// the permits (10 ms) now and then, each slough kept the overload one
// more interval, and an interval whose few waiting requests waited over
// Target was judged a standing queue though others were admitted at
// once: after the first two Intervals, 3 to 5 seeds of 20 per mix lost
// requests (16 in all). The one seed left (12) is folly's rule itself,
// 1.9 s after the step: a burst in which every request of an Interval
// waited 11 ms or more, none admitted at once, then 2 requests that
// waited over 20 ms sloughed.
func TestCoreLognormalStepBack(t *testing.T) {
	if testing.Short() {
		t.Skip("120 runs of 7 s on the virtual clock")
	}
	const step, after = 5 * time.Second, 2 * time.Second
	settle := step + 2*DefaultInterval
	for _, c := range []struct {
		name         string
		crit, critAt float64 // the critical share at 4 × C, after the step
	}{
		{"one class", 1, 1},
		{"a fifth critical", 0.2, 0.2},
		{"critical 0.5 x C, the spike sheddable", 0.125, 1},
	} {
		load := []simPhase{{until: step, times: 4, critical: c.crit}, {until: step + after, times: 0.5, critical: c.critAt}}
		var offered, lost, lateOffered, lateLost [CriticalPlus + 1]int
		hit := 0 // seeds that lost a request arriving after settle
		for seed := uint64(1); seed <= simSeeds; seed++ {
			all := simPhases(t, 4, Config{Limit: 4}, load, step, seed)
			late := simPhases(t, 4, Config{Limit: 4}, load, settle, seed)
			n := 0
			for _, k := range []Criticality{Sheddable, Critical} {
				offered[k] += all.offered[k]
				lost[k] += all.offered[k] - int(math.Round(all.avail[k]*float64(all.offered[k])))
				lateOffered[k] += late.offered[k]
				l := late.offered[k] - int(math.Round(late.avail[k]*float64(late.offered[k])))
				lateLost[k] += l
				n += l
			}
			if n > 0 {
				hit++
			}
			if n > 2 {
				t.Errorf("%s, seed %d: %d requests arriving from %v after the step lost (critical: %v; sheddable: %v), want at most 2",
					c.name, seed, n, settle-step, late.reasons[Critical], late.reasons[Sheddable])
			}
		}
		if hit > 1 {
			t.Errorf("%s: %d seeds of %d lost a request arriving from %v after the step, want at most 1", c.name, hit, simSeeds, settle-step)
		}
		t.Logf("%s, %d seeds: over the %v after the step lost %d of %d critical, %d of %d sheddable; from %v after it, %d of %d and %d of %d, on %d seeds",
			c.name, simSeeds, after, lost[Critical], offered[Critical], lost[Sheddable], offered[Sheddable],
			settle-step, lateLost[Critical], lateOffered[Critical], lateLost[Sheddable], lateOffered[Sheddable], hit)
	}
}
