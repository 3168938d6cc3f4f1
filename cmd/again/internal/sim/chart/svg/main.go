// Command svg draws a chart.Figure given as JSON as an SVG.
//
// It is how a harness that cannot import the chart package (the bench
// module's tests, which cmd/again's internal packages are closed to)
// draws its chart with it.
//
// The JSON is a chart.Figure, its fields by name (Title, Note, Columns,
// Panels with Title, XLabel, YLabel, Series of Name, X and Y, and
// optionally LogY, YMax, Shade, ShadeLabel); a field it does not know is
// an error, so that a misspelt one is not silently dropped. It reads the
// file named by its argument, or standard input without one, and writes
// the SVG to standard output or to -o. For the shedding bench's chart:
//
//	(cd bench && go test -run TestShedOverload -count 1 . -shed.chart=/tmp/shed.json)
//	go run ./cmd/again/internal/sim/chart/svg -o docs/shed-overload.svg /tmp/shed.json
//
// Usage errors exit 2, a JSON that is not a Figure exits 1.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/again-go/again/cmd/again/internal/sim/chart"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("svg", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "write the SVG to this file (default: standard output)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: svg [-o file.svg] [figure.json]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 1 {
		fmt.Fprintf(stderr, "svg: %d arguments; want at most one, the JSON file\n", fs.NArg())
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
	dec := json.NewDecoder(in)
	dec.DisallowUnknownFields()
	var fig chart.Figure
	if err := dec.Decode(&fig); err != nil {
		fmt.Fprintf(stderr, "svg: %s is not a chart.Figure in JSON: %v\n", name, err)
		return 1
	}
	var b bytes.Buffer
	if err := fig.Render(&b); err != nil {
		fmt.Fprintln(stderr, "svg:", err)
		return 1
	}
	if *out == "" {
		if _, err := stdout.Write(b.Bytes()); err != nil {
			fmt.Fprintln(stderr, "svg:", err)
			return 1
		}
		return 0
	}
	if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		fmt.Fprintln(stderr, "svg:", err)
		return 1
	}
	return 0
}
