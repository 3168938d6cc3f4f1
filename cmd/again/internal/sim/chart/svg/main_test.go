package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/again-go/again/cmd/again/internal/sim/chart"
)

var fig = chart.Figure{Title: "Goodput", Note: "a note", Columns: 2, Panels: []chart.Panel{
	{Title: "by load", XLabel: "load", YLabel: "goodput", YMax: 1.2,
		Series: []chart.Series{{Name: "a", X: []float64{0.5, 1, 2, 4}, Y: []float64{0.5, 1, 1, 0.9}}}},
	{Title: "over time", XLabel: "s", YLabel: "goodput", Shade: [][2]float64{{6, 8}}, ShadeLabel: "4 × C",
		Series: []chart.Series{{Name: "a", X: []float64{0, 1}, Y: []float64{0.5, 1}}, {Name: "b", X: []float64{0, 1}, Y: []float64{0.2, 0.3}}}},
}}

// The JSON of a Figure draws what the Figure draws, from standard input
// or from a file, to standard output or to -o.
func TestDrawsTheFigureOfItsJSON(t *testing.T) {
	var want bytes.Buffer
	if err := fig.Render(&want); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(fig)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(nil, bytes.NewReader(js), &stdout, &stderr); code != 0 || stdout.String() != want.String() {
		t.Errorf("run(stdin) = %d, stderr %q, SVG equal to Render's: %v; want 0 and equal", code, stderr.String(), stdout.String() == want.String())
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "f.json"), filepath.Join(dir, "f.svg")
	if err := os.WriteFile(in, js, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := run([]string{"-o", out, in}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("run(-o %s %s) = %d, stderr %q; want 0", out, in, code, stderr.String())
	}
	if got, err := os.ReadFile(out); err != nil || string(got) != want.String() {
		t.Errorf("the -o file: err %v, equal to Render's: %v; want equal", err, string(got) == want.String())
	}
}

func TestRefusesWhatIsNotAFigure(t *testing.T) {
	tests := []struct {
		args  []string
		stdin string
		code  int
		say   string
	}{
		{nil, `{"Title": "x", "Panel": []}`, 1, `unknown field "Panel"`},
		{nil, `not json`, 1, "is not a chart.Figure"},
		{[]string{"a.json", "b.json"}, "", 2, "2 arguments"},
		{[]string{"-x"}, "", 2, "-x"},
		{[]string{filepath.Join(t.TempDir(), "missing.json")}, "", 2, "missing.json"},
		{[]string{"-note", "n"}, `{}`, 2, "-note needs -limit"},
		{[]string{"-limit"}, "a,b\n1,2\n", 1, "standard input: want a header of limiter,time_s,"},
		{[]string{"-limit"}, limitCSV + "fixed,3,x,8,1,30,200,50,0\n", 1, `line 6: offered_ratio "x"`},
		{[]string{"-limit"}, `{"Title": "x"}`, 1, "standard input: "},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(tt.args, strings.NewReader(tt.stdin), &stdout, &stderr)
		if code != tt.code || !strings.Contains(stderr.String(), tt.say) || stdout.Len() != 0 {
			t.Errorf("run(%q, %q) = %d, stderr %q, stdout %d bytes; want %d, a message with %q, no output", tt.args, tt.stdin, code, stderr.String(), stdout.Len(), tt.code, tt.say)
		}
	}
}

const limitCSV = "limiter,time_s,offered_ratio,limit,goodput_ratio,success_p50_ms,success_p99_ms,refused,timed_out\n" +
	"none,1,0.5,0,0.5,20,100,0,0\n" +
	"none,2,1.5,0,0,0,0,0,90\n" +
	"\"again, fixed 8\",1,0.7,8,0.5,20,100,0,0\n" +
	"\"again, fixed 8\",2,2.5,8,1,30,200,50,0\n"

// With -limit, the bench's limit.csv draws limit.Chart under the bench's
// title (the ramp's length) and -note, from standard input or a file.
func TestDrawsTheLimitCSV(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-limit", "-note", "a note"}, strings.NewReader(limitCSV), &stdout, &stderr); code != 0 {
		t.Fatalf("run(-limit, stdin) = %d, stderr %q; want 0", code, stderr.String())
	}
	svg := stdout.String()
	for _, want := range []string{"over 2 s</title>", "no retry; a note</text>", ">load offered (mean)</text>", ">again, fixed 8</text>"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the SVG has no %q", want)
		}
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "limit.csv"), filepath.Join(dir, "limit.svg")
	if err := os.WriteFile(in, []byte(limitCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := run([]string{"-limit", "-note", "a note", "-o", out, in}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("run(-limit -o %s %s) = %d, stderr %q; want 0", out, in, code, stderr.String())
	}
	if got, err := os.ReadFile(out); err != nil || string(got) != svg {
		t.Errorf("the -o file: err %v, equal to the standard output's: %v; want equal", err, string(got) == svg)
	}
}

// The recorded limit charts in docs are what their recorded CSVs draw,
// with the note BENCHMARKS.md gives: a chart in docs can be redrawn, and
// a change to the chart code that would redraw it differently shows here.
func TestRedrawsTheRecordedLimitCharts(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..", "..", "..")
	cases := []struct{ csv, note, svg string }{
		{"docs/data/limit-envoy.csv", "service time p90 100 ms, p99 300 ms; 2 s windows; 2026-12-06 11:08–11:24 UTC, shared 2-core machine, load average 0.9–4", "docs/limit-envoy.svg"},
		{"docs/data/limit-envoy-exact.csv", "Envoy's service time (p90 50 ms, p99 150 ms); bench module, TestLimitEnvoySetup -limit.envoy -limit.ramp 60s on loopback, 2026-12-06 11:44–11:50 UTC, idle 2-core machine (load 0.2–0.7)", "docs/limit-envoy-exact.svg"},
	}
	for _, c := range cases {
		want, err := os.ReadFile(filepath.Join(root, c.svg))
		if err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		if code := run([]string{"-limit", "-note", c.note, filepath.Join(root, c.csv)}, nil, &stdout, &stderr); code != 0 {
			t.Fatalf("svg -limit %s = %d, stderr %q; want 0", c.csv, code, stderr.String())
		}
		if stdout.String() != string(want) {
			t.Errorf("svg -limit %s draws a chart other than %s (%d bytes, want %d): redraw it with BENCHMARKS.md's command, or keep the chart code's output", c.csv, c.svg, stdout.Len(), len(want))
		}
	}
}
