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
// quarter: goodput (successes within the client's 1 s over capacity ×
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
}

// simCore runs a Core on a virtual clock: Poisson arrivals at times × C,
// a share critical of them CRITICAL (the rest SHEDDABLE), a lognormal
// service time (median 35 ms, sigma 0.5) on 4 workers, clients that give
// up after 1 s, for run.
func simCore(t *testing.T, cfg Config, times, critical float64, run time.Duration, seed uint64) simResult {
	const workers = 4
	median, sigma := 35*time.Millisecond, 0.5
	capacity := workers / (median.Seconds() * math.Exp(sigma*sigma/2))
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
		q.decided, q.fate = true, why
		if why == Admitted {
			serve(w.Tag)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for at := time.Duration(0); ; {
		at += time.Duration(r.ExpFloat64() / (times * capacity) * float64(time.Second))
		if at >= run {
			break
		}
		k := Sheddable
		if r.Float64() < critical {
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
	warm := run / 4
	for _, q := range reqs {
		if q.at < warm {
			continue
		}
		res.offered[q.class]++
		if res.reasons[q.class] == nil {
			res.reasons[q.class] = map[Reason]int{}
		}
		if q.ok {
			ok[q.class]++
			lat = append(lat, q.took)
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
		total += ok[k]
		if res.offered[k] > 0 {
			res.avail[k] = float64(ok[k]) / float64(res.offered[k])
		}
	}
	res.goodput = float64(total) / (capacity * (run - warm).Seconds())
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
		// for one turnover of the permits: 0.976 available at 0.5×.
		{"one class at 0.5x", 0.5, 1, 0.985, 0, time.Second, 0.45},
		// An interval whose minimum dipped below Target after a slough
		// ended the overload, and the queue served FIFO requests that
		// had waited up to 100 ms: a p99 wait of 90 ms.
		{"one class at 4x", 4, 1, 0, 0, 20 * time.Millisecond, 0.95},
		// Critical requests were sloughed for one turnover (0.854
		// available), or served newest first behind the sheddable queue's
		// overload (a p99 wait of 237 ms).
		{"20% critical at 4x", 4, 0.2, 0.985, 0.15, 120 * time.Millisecond, 0.95},
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
