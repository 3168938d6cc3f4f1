package chart

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestSimTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		log    bool
		want   []float64
	}{
		{0, 100, false, []float64{0, 20, 40, 60, 80, 100}},
		{0, 4, false, []float64{0, 1, 2, 3, 4}},
		{0, 0.95, false, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}},
		{0, 63494, false, []float64{0, 20000, 40000, 60000, 80000}},
		{372, 101357, true, []float64{100, 1000, 10000, 100000, 1e6}},
	}
	for _, tt := range tests {
		if got := ticks(tt.lo, tt.hi, tt.log); !slices.Equal(got, tt.want) {
			t.Errorf("ticks(%v, %v, %v) = %v, want %v", tt.lo, tt.hi, tt.log, got, tt.want)
		}
	}
}

func TestSimNum(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 0.2: "0.2", 1000: "1000", 20000: "20k", 1e6: "1M", 2.5e6: "2.5M", 0.30000000000000004: "0.3"} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestRender checks that a figure is well-formed XML with its title, axis
// titles, legend and shading, and that names are escaped.
func TestSimRender(t *testing.T) {
	f := Figure{
		Title: "A <storm> & more", Note: "note",
		Panels: []Panel{{
			Title: "p", XLabel: "time (s)", YLabel: "per second",
			Series: []Series{{Name: "a&b", X: []float64{0, 1, 2}, Y: []float64{1, math.NaN(), 3}}, {Name: "c", X: []float64{0, 2}, Y: []float64{0, 5}}},
			Shade:  [][2]float64{{0.5, 1.5}}, ShadeLabel: "spike",
		}, {LogY: true, Series: []Series{{Name: "c", X: []float64{1, 2}, Y: []float64{0, 100}}}}},
		Columns: 2,
	}
	var b bytes.Buffer
	if err := f.Render(&b); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	d := xml.NewDecoder(&b)
	var texts []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed: %v", err)
		}
		if c, ok := tok.(xml.CharData); ok && strings.TrimSpace(string(c)) != "" {
			texts = append(texts, string(c))
		}
	}
	for _, want := range []string{"A <storm> & more", "note", "time (s)", "per second", "a&b", "c", "spike"} {
		if !slices.Contains(texts, want) {
			t.Errorf("the SVG's texts %q lack %q", texts, want)
		}
	}
	if n := strings.Count(svg, "<path d=\"M"); n != 5 { // two axes, three lines
		t.Errorf("%d paths, want 5", n)
	}
}
