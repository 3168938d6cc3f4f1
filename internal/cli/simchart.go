package cli

import (
	"github.com/again-go/again/internal/sim"
	"github.com/again-go/again/internal/sim/chart"
)

// occChart draws the OCC table as the post does: calls and completion time
// against the number of clients, one line per algorithm. Time is on a log
// axis: exponential backoff without jitter takes ten times longer than the
// others, which a linear axis would flatten to nothing.
func occChart(rows []sim.OCCRow) *chart.Figure {
	calls := chart.Panel{Title: "Work: writes per run", XLabel: "clients", YLabel: "calls (mean writes per run)"}
	times := chart.Panel{Title: "Completion time", XLabel: "clients", YLabel: "time until the last write (ms, log scale)", LogY: true}
	index := map[sim.Algorithm]int{}
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
