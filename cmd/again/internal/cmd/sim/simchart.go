package sim

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/again-go/again/cmd/again/internal/sim/chart"
	"github.com/again-go/again/cmd/again/internal/sim/fleet"
	"github.com/again-go/again/cmd/again/internal/sim/occ"
	"github.com/again-go/again/cmd/again/internal/sim/outage"
	"github.com/again-go/again/cmd/again/internal/sim/simshed"
	"github.com/again-go/again/cmd/again/internal/sim/storm"
)

// occChart draws the OCC table as the post does: calls and completion time
// against the number of clients, one line per algorithm. Time is on a log
// axis: exponential backoff without jitter takes ten times longer than the
// others, which a linear axis would flatten to nothing.
func occChart(rows []occ.Row) *chart.Figure {
	calls := chart.Panel{Title: "Work: writes per run", XLabel: "clients", YLabel: "calls (mean writes per run)"}
	times := chart.Panel{Title: "Completion time", XLabel: "clients", YLabel: "time until the last write (ms, log scale)", LogY: true}
	index := map[occ.Algorithm]int{}
	for _, r := range rows {
		i, ok := index[r.Algorithm]
		if !ok {
			i = len(calls.Series)
			index[r.Algorithm] = i
			calls.Series = append(calls.Series, chart.Series{Name: string(r.Algorithm)})
			times.Series = append(times.Series, chart.Series{Name: string(r.Algorithm)})
		}
		c, t := &calls.Series[i], &times.Series[i]
		c.X, c.Y = append(c.X, float64(r.Clients)), append(c.Y, r.Calls)
		t.X, t.Y = append(t.X, float64(r.Clients)), append(t.Y, r.TimeMS)
	}
	return &chart.Figure{
		Title:   "Optimistic concurrency: clients backing off after failed writes (again sim occ)",
		Note:    "Each client reads a version, then writes it conditionally; base 5 ms, cap 2 s, messages |N(10 ms, 2 ms)| one way.",
		Panels:  []chart.Panel{calls, times},
		Columns: 2,
	}
}

// outageChart draws, for each strategy, the new requests, the attempts
// sent and the successes per second, on one time axis, the spike shaded.
func outageChart(res []outage.Result, shade outageShade, sh simshed.Config) *chart.Figure {
	spike := shade.spike
	title := fmt.Sprintf("A %g s spike", spike.Seconds())
	switch {
	case shade.hard > 0 && spike > 0:
		title = fmt.Sprintf("A %g s spike and a %g s hard outage", spike.Seconds(), shade.hard.Seconds())
	case shade.hard > 0:
		title = fmt.Sprintf("A %g s hard outage", shade.hard.Seconds())
	case spike <= 0:
		title = "No spike"
	}
	f := &chart.Figure{
		Title:   title + ": attempts and goodput per second (again sim outage)",
		Note:    "Poisson demand, server latency 1 s + 10 ms × requests in progress, 3 s timeout, up to 3 attempts.",
		Columns: 1,
	}
	if sh.On() {
		f.Note = strings.TrimSuffix(f.Note, ".") + "; the server sheds with package shed (" + shedNote(sh) + ")."
	}
	if len(res) > 2 {
		f.Columns = 2
	}
	const start = 20 // outage.Config's default SpikeStart, which the CLI keeps
	for _, r := range res {
		p := chart.Panel{Title: string(r.Summary.Strategy), XLabel: "time (s)", YLabel: "per second"}
		if spike > 0 {
			p.Shade, p.ShadeLabel = [][2]float64{{start, start + spike.Seconds()}}, "spike"
		}
		if shade.hard > 0 {
			from := shade.hardStart.Seconds()
			p.Shade, p.ShadeLabel = append(p.Shade, [2]float64{from, from + shade.hard.Seconds()}), "outage"
			if spike > 0 {
				p.ShadeLabel = "spike, outage"
			}
		}
		demand := chart.Series{Name: "new requests"}
		attempts := chart.Series{Name: "attempts"}
		good := chart.Series{Name: "successes (goodput)"}
		shed := chart.Series{Name: "shed by the server"}
		for _, s := range r.Seconds {
			x := float64(s.Second) + 0.5
			demand.X, demand.Y = append(demand.X, x), append(demand.Y, float64(s.NewRequests))
			attempts.X, attempts.Y = append(attempts.X, x), append(attempts.Y, float64(s.Attempts))
			good.X, good.Y = append(good.X, x), append(good.Y, float64(s.Successes))
			shed.X, shed.Y = append(shed.X, x), append(shed.Y, float64(s.Shed))
		}
		p.Series = []chart.Series{attempts, good, demand}
		if sh.On() {
			p.Series = append(p.Series, shed)
		}
		f.Panels = append(f.Panels, p)
	}
	// One y scale for all: the storms must look as large as they are.
	var top float64
	for _, p := range f.Panels {
		for _, s := range p.Series {
			for _, y := range s.Y {
				top = max(top, y)
			}
		}
	}
	for i := range f.Panels {
		f.Panels[i].YMax = top
	}
	return f
}

// fleetChart draws the amplification against the failure probability, one
// panel per fleet size and one line per strategy.
func fleetChart(rows []fleet.Row) *chart.Figure {
	f := &chart.Figure{
		Title:   "Retry amplification across a fleet (again sim fleet)",
		Note:    "1000 calls/s shared by the fleet for 10 s, each attempt failing with the given probability, up to 3 retries.",
		Columns: 3,
	}
	panel := map[int]int{}
	for _, r := range rows {
		i, ok := panel[r.Clients]
		if !ok {
			i = len(f.Panels)
			panel[r.Clients] = i
			f.Panels = append(f.Panels, chart.Panel{
				Title: strconv.Itoa(r.Clients) + " clients", XLabel: "probability that an attempt fails", YLabel: "attempts ÷ calls",
			})
		}
		p := &f.Panels[i]
		j := -1
		for k, s := range p.Series {
			if s.Name == string(r.Strategy) {
				j = k
			}
		}
		if j < 0 {
			j = len(p.Series)
			p.Series = append(p.Series, chart.Series{Name: string(r.Strategy)})
		}
		s := &p.Series[j]
		s.X, s.Y = append(s.X, r.Failure), append(s.Y, r.Amplification)
	}
	f.Columns = min(max(len(f.Panels), 1), 3)
	return f
}

// stormChart draws the attempts per bucket with and without jitter.
func stormChart(rows []storm.Row, jitter string, c storm.Config) *chart.Figure {
	p := chart.Panel{
		Title:  strconv.Itoa(c.Clients) + " clients failing at t = 0, attempts per " + c.Bucket.String(),
		XLabel: "time since the failure (s)", YLabel: "attempts starting",
	}
	with := chart.Series{Name: jitter + " jitter"}
	without := chart.Series{Name: "no jitter"}
	w := c.Bucket.Seconds()
	for _, r := range rows {
		// Steps: each bucket's count holds across its width.
		x := r.StartMS / 1000
		with.X, with.Y = append(with.X, x, x+w), append(with.Y, float64(r.Attempts), float64(r.Attempts))
		without.X, without.Y = append(without.X, x, x+w), append(without.Y, float64(r.NoJitter), float64(r.NoJitter))
	}
	p.Series = []chart.Series{without, with}
	return &chart.Figure{
		Title:  "Clients failing together (again sim storm)",
		Note:   "Every attempt fails; each client retries until its retries run out.",
		Panels: []chart.Panel{p},
	}
}

// shedNote says how sh sheds, for a chart's note.
func shedNote(sh simshed.Config) string {
	if sh.Adaptive != nil {
		return "--shed adaptive"
	}
	return fmt.Sprintf("--shed %d", sh.Limit)
}
