// Command svg draws the bench module's charts as SVG.
//
// It is how a harness that cannot import the chart package (the bench
// module's tests, which cmd/again's internal packages are closed to)
// draws its chart with it. It reads the file named by its argument, or
// standard input without one, and writes the SVG to standard output or to
// -o. The input is one of:
//
//   - a chart.Figure in JSON, its fields by name (Title, Note, Columns,
//     Panels with Title, XLabel, YLabel, Series of Name, X and Y, and
//     optionally LogY, YMax, Shade, ShadeLabel); a field it does not know
//     is an error, so that a misspelt one is not silently dropped. The
//     shedding bench writes its chart so.
//   - with -limit, the limit.csv that the bench's TestLimitEnvoySetup
//     writes with -limit.out (the columns of `again sim limit --format
//     csv`), drawn with `again sim limit`'s chart: each limiter's limit,
//     goodput beside the load offered and success p99 over the ramp.
//     -note adds what the CSV does not say (the service time, the date,
//     the machine's load) under the title.
//
// Run from the repository (BENCHMARKS.md reports the runs):
//
//	(cd bench && go test -run TestShedOverload -count 1 . -shed.chart=/tmp/shed.json)
//	go run ./cmd/again/internal/sim/chart/svg -o docs/shed-overload.svg /tmp/shed.json
//	(cd bench && go test -run TestLimitEnvoySetup -v -count 1 . -limit.ramp 160s -limit.out /tmp/limit)
//	go run ./cmd/again/internal/sim/chart/svg -limit -note '…' -o docs/limit-envoy.svg /tmp/limit/limit.csv
//
// No package imports it and the again binary does not contain it. Usage
// errors exit 2, an input that is not what it should be exits 1.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/again-go/again/cmd/again/internal/sim/chart"
	"github.com/again-go/again/cmd/again/internal/sim/limit"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("svg", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "write the SVG to this file (default: standard output)")
	limitCSV := fs.Bool("limit", false, "the input is TestLimitEnvoySetup's limit.csv, not a chart.Figure in JSON")
	note := fs.String("note", "", "with -limit, a line under the title: the service time (p90, p99), the date, the machine's load")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: svg [-o file.svg] [figure.json]\n       svg -limit [-note text] [-o file.svg] [limit.csv]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 1 {
		fmt.Fprintf(stderr, "svg: %d arguments; want at most one, the input file\n", fs.NArg())
		return 2
	}
	if *note != "" && !*limitCSV {
		fmt.Fprintln(stderr, "svg: -note needs -limit; a chart.Figure's JSON has its own Note")
		return 2
	}
	in, name := stdin, "standard input"
	if fs.NArg() == 1 {
		name = fs.Arg(0)
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(stderr, "svg:", err)
			return 2
		}
		defer f.Close()
		in = f
	}
	var fig *chart.Figure
	if *limitCSV {
		rows, err := limit.ReadCSV(in)
		if err != nil {
			fmt.Fprintf(stderr, "svg: %s: %v\n", name, err)
			return 1
		}
		fig = limitFigure(rows, *note)
	} else {
		dec := json.NewDecoder(in)
		dec.DisallowUnknownFields()
		fig = new(chart.Figure)
		if err := dec.Decode(fig); err != nil {
			fmt.Fprintf(stderr, "svg: %s is not a chart.Figure in JSON: %v\n", name, err)
			return 1
		}
	}
	var b bytes.Buffer
	err := fig.Render(&b)
	if err == nil && *out == "" {
		_, err = stdout.Write(b.Bytes())
	} else if err == nil {
		err = os.WriteFile(*out, b.Bytes(), 0o644)
	}
	if err != nil {
		fmt.Fprintln(stderr, "svg:", err)
		return 1
	}
	return 0
}

// limitFigure is limit.Chart under the bench's title, which gives the
// ramp's length (the last window's end), and a note on its setup.
func limitFigure(rows []limit.Row, note string) *chart.Figure {
	ramp := 0.0
	for _, r := range rows {
		ramp = max(ramp, r.TimeS)
	}
	if note == "" {
		note = "bench module, TestLimitEnvoySetup on loopback"
	}
	return limit.Chart(rows,
		fmt.Sprintf("Concurrency limits in Envoy's setup, beside failsafe-go: load ramped from 0.5 to 3 × capacity over %.0f s", ramp),
		"A server of 8 workers and a FIFO queue, a lognormal service time, a 1 s client timeout, no retry; "+note)
}
