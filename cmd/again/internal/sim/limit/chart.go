package limit

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/again-go/again/cmd/again/internal/sim/chart"
)

// Chart draws rows against time, in three panels: each limiter's limit
// (none for a limiter without one), its goodput beside the load offered
// (the mean over the limiters' runs, which draw the same ramp) and its
// success p99. It is the chart of `again sim limit --svg` and of the
// bench module's TestLimitEnvoySetup (cmd/again/internal/sim/chart/svg
// -limit), so that the two read alike.
func Chart(rows []Row, title, note string) *chart.Figure {
	lim := chart.Panel{Title: "Limit", XLabel: "time (s)", YLabel: "calls in flight allowed (log scale)", LogY: true}
	good := chart.Panel{Title: "Goodput", XLabel: "time (s)", YLabel: "successes per second ÷ capacity"}
	p99 := chart.Panel{Title: "Success p99", XLabel: "time (s)", YLabel: "ms (log scale)", LogY: true}
	offered := chart.Series{Name: "load offered (mean)"}
	var offeredN []float64 // how many runs offered.Y[j] sums
	index := map[Limiting]int{}
	for _, r := range rows {
		i, ok := index[r.Limiter]
		if !ok {
			i = len(good.Series)
			index[r.Limiter] = i
			for _, p := range []*chart.Panel{&lim, &good, &p99} {
				p.Series = append(p.Series, chart.Series{Name: string(r.Limiter)})
			}
		}
		t := r.TimeS
		if j, ok := slices.BinarySearch(offered.X, t); ok {
			offered.Y[j] += r.OfferedRatio
			offeredN[j]++
		} else {
			offered.X, offered.Y, offeredN = slices.Insert(offered.X, j, t), slices.Insert(offered.Y, j, r.OfferedRatio), slices.Insert(offeredN, j, 1)
		}
		if r.Limit > 0 {
			s := &lim.Series[i]
			s.X, s.Y = append(s.X, t), append(s.Y, r.Limit)
		}
		g := &good.Series[i]
		g.X, g.Y = append(g.X, t), append(g.Y, r.GoodputRatio)
		if r.SuccessP99MS > 0 {
			s := &p99.Series[i]
			s.X, s.Y = append(s.X, t), append(s.Y, r.SuccessP99MS)
		}
	}
	for j := range offered.Y {
		offered.Y[j] /= offeredN[j]
	}
	good.Series = append(good.Series, offered)
	return &chart.Figure{Title: title, Note: note, Panels: []chart.Panel{lim, good, p99}, Columns: 3}
}

// ReadCSV reads rows in the CSV of `again sim limit --format csv`: a
// header of Row's JSON names, in order, then at least one row whose
// numbers are 0 or more, up to 2^53 (Refused and TimedOut whole). The bench module's
// TestLimitEnvoySetup writes the same columns with -limit.out, naming its
// limiters in its own words, which ReadCSV takes as they are.
func ReadCSV(r io.Reader) ([]Row, error) {
	recs, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	cols := csvColumns()
	if len(recs) < 2 || !slices.Equal(recs[0], cols) {
		return nil, errors.New("want a header of " + strings.Join(cols, ",") + " and at least one row")
	}
	rows := make([]Row, 0, len(recs)-1)
	for n, rec := range recs[1:] {
		v := make([]float64, len(rec))
		for i := 1; i < len(rec); i++ {
			count := i >= len(rec)-2 // refused, timed_out
			f, err := strconv.ParseFloat(rec[i], 64)
			if err != nil || !(f >= 0 && f <= 1<<53) || count && f != math.Trunc(f) {
				what := "a number of 0 or more"
				if count {
					what = "a whole number of 0 or more"
				}
				return nil, fmt.Errorf("line %d: %s %q is not %s", n+2, cols[i], rec[i], what)
			}
			v[i] = f
		}
		rows = append(rows, Row{Limiter: Limiting(rec[0]), TimeS: v[1], OfferedRatio: v[2], Limit: v[3],
			GoodputRatio: v[4], SuccessP50MS: v[5], SuccessP99MS: v[6], Refused: int(v[7]), TimedOut: int(v[8])})
	}
	return rows, nil
}

// csvColumns returns Row's JSON names, the CSV's header: read from
// the struct, so that the reader cannot drift from the rows it reads.
func csvColumns() []string {
	t := reflect.TypeFor[Row]()
	cols := make([]string, t.NumField())
	for i := range cols {
		cols[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return cols
}
