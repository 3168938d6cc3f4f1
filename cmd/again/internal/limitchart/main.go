// Command limitchart draws the bench module's TestLimitEnvoySetup.
//
// It draws each limiter's limit, goodput and success p99 over the ramp,
// from the limit.csv that the test writes with -limit.out.
// BENCHMARKS.md reports the run (issue 40). It is a program in the
// cmd/again module because it draws with sim's chart package, internal to
// this module, which the bench module cannot import. No package imports it
// and the again binary does not contain it. Run from the repository:
//
//	(cd bench && go test -run TestLimitEnvoySetup -v -count 1 . -limit.ramp 160s -limit.out /tmp/limit)
//	go run ./cmd/again/internal/limitchart -csv /tmp/limit/limit.csv -svg docs/bench-limit.svg
package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/again-go/again/cmd/again/internal/sim/chart"
)

func main() {
	in := flag.String("csv", "", "the limit.csv that TestLimitEnvoySetup wrote with -limit.out (required)")
	svg := flag.String("svg", "", "the SVG file to write (required)")
	note := flag.String("note", "", "a line under the title: the service time (p90, p99), the date, the machine's load")
	flag.Parse()
	if *in == "" || *svg == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: limitchart -csv FILE -svg FILE [-note TEXT]")
		os.Exit(2)
	}
	if err := run(*in, *svg, *note); err != nil {
		fmt.Fprintln(os.Stderr, "limitchart:", err)
		os.Exit(1)
	}
}

func run(in, svg, note string) error {
	r, err := os.Open(in)
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := draw(r, note)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	var b bytes.Buffer
	if err := f.Render(&b); err != nil {
		return err
	}
	return os.WriteFile(svg, b.Bytes(), 0o644)
}

// columns are limit.csv's, in order.
var columns = []string{"limiter", "time_s", "offered_ratio", "limit", "goodput_ratio", "success_p50_ms", "success_p99_ms", "refused", "timed_out"}

// draw reads limit.csv and draws, against time, each limiter's limit (none
// for a limiter without one), its goodput beside the load offered (the
// mean over the limiters' runs: each run draws the same Poisson ramp) and
// its success p99.
func draw(r io.Reader, note string) (*chart.Figure, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) < 2 || !slices.Equal(rows[0], columns) {
		return nil, errors.New("want a header of " + fmt.Sprint(columns) + " and at least one row")
	}
	lim := chart.Panel{Title: "Limit", XLabel: "time (s)", YLabel: "calls in flight allowed (log scale)", LogY: true}
	good := chart.Panel{Title: "Goodput", XLabel: "time (s)", YLabel: "successes per second ÷ capacity"}
	p99 := chart.Panel{Title: "Success p99", XLabel: "time (s)", YLabel: "ms (log scale)", LogY: true}
	offered := chart.Series{Name: "load offered (mean)"}
	var offeredN []float64 // how many runs offered.Y[j] sums
	index := map[string]int{}
	ramp := 0.0
	for n, row := range rows[1:] {
		v := make([]float64, len(row))
		for i := 1; i < len(row); i++ {
			if v[i], err = strconv.ParseFloat(row[i], 64); err != nil || math.IsNaN(v[i]) || v[i] < 0 {
				return nil, fmt.Errorf("line %d: %s %q is not a number of 0 or more", n+2, columns[i], row[i])
			}
		}
		name, t := row[0], v[1]
		ramp = max(ramp, t)
		i, ok := index[name]
		if !ok {
			i = len(good.Series)
			index[name] = i
			for _, p := range []*chart.Panel{&lim, &good, &p99} {
				p.Series = append(p.Series, chart.Series{Name: name})
			}
		}
		if j, ok := slices.BinarySearch(offered.X, t); ok {
			offered.Y[j] += v[2]
			offeredN[j]++
		} else {
			offered.X, offered.Y, offeredN = slices.Insert(offered.X, j, t), slices.Insert(offered.Y, j, v[2]), slices.Insert(offeredN, j, 1)
		}
		if v[3] > 0 {
			s := &lim.Series[i]
			s.X, s.Y = append(s.X, t), append(s.Y, v[3])
		}
		g := &good.Series[i]
		g.X, g.Y = append(g.X, t), append(g.Y, v[4])
		if v[6] > 0 {
			s := &p99.Series[i]
			s.X, s.Y = append(s.X, t), append(s.Y, v[6])
		}
	}
	for j := range offered.Y {
		offered.Y[j] /= offeredN[j]
	}
	good.Series = append(good.Series, offered)
	if note == "" {
		note = "bench module, TestLimitEnvoySetup on loopback"
	}
	return &chart.Figure{
		Title:   fmt.Sprintf("Concurrency limits in Envoy's setup, beside failsafe-go: load ramped from 0.5 to 3 × capacity over %.0f s", ramp),
		Note:    "A server of 8 workers and a FIFO queue, a lognormal service time, a 1 s client timeout, no retry; " + note,
		Panels:  []chart.Panel{lim, good, p99},
		Columns: 3,
	}, nil
}
