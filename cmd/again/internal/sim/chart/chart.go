// Package chart draws the simulator's line charts as self-contained SVG.
//
// It is written by hand: no dependency, no script, no external font or
// style, so that a chart reads the same in a browser, an image viewer and a
// README.
//
// A Figure is a title, a shared legend and a grid of Panels; each panel has
// its own axes, with round tick values, axis titles, optional shaded x
// ranges (a spike) and lines. Series with the same name share a colour and
// a dash pattern across panels, so a figure reads without colour too.
//
//	f := chart.Figure{Title: "Calls", Panels: []chart.Panel{{
//		XLabel: "clients", YLabel: "calls",
//		Series: []chart.Series{{Name: "full", X: xs, Y: ys}},
//	}}}
//	err := f.Render(w)
package chart

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Series is one line: points (X[i], Y[i]), drawn in order. X and Y have the
// same length; NaN values break the line.
type Series struct {
	Name string
	X, Y []float64
}

// Panel is one chart of a Figure.
type Panel struct {
	Title          string
	XLabel, YLabel string
	Series         []Series
	// LogY draws the y axis on a logarithmic scale (values <= 0 are left out).
	LogY bool
	// YMax, when above the data, is the least top of the y axis: panels
	// that share it compare at a glance.
	YMax float64
	// Shade lists x ranges to shade, with ShadeLabel written in the first.
	Shade      [][2]float64
	ShadeLabel string
}

// Figure is a titled grid of panels with one legend.
type Figure struct {
	Title string
	// Note is a line of small text under the title, such as the parameters.
	Note   string
	Panels []Panel
	// Columns is the number of panels per row; 0 means 1.
	Columns int
}

// The geometry of a panel, in SVG user units (pixels).
const (
	panelW, panelH         = 520, 300
	padL, padR, padT, padB = 70, 20, 30, 48
	headH                  = 64 // title, note and legend
)

// Okabe and Ito's colour-blind-safe palette, with dash patterns so that
// lines are told apart in greyscale too.
var (
	palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"}
	dashes  = []string{"", "8 4", "2 3", "10 3 2 3", "4 4", "1 2", "12 6"}
)

// Render writes the figure as an SVG document.
func (f *Figure) Render(w io.Writer) error {
	cols := max(f.Columns, 1)
	rows := (len(f.Panels) + cols - 1) / cols
	names := f.names()
	legendRows := (len(names) + 5) / 6
	head := headH + 18*(legendRows-1)
	// Wide enough for the title and the note (about 9 and 7 pixels a
	// character), which no panel may clip.
	width := max(cols*panelW, padL+20+max(9*utf8.RuneCountInString(f.Title), 7*utf8.RuneCountInString(f.Note)))
	height := head + rows*panelH
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif" font-size="12" role="img">`+"\n", width, height, width, height)
	fmt.Fprintf(b, "<title>%s</title>\n", esc(f.Title))
	fmt.Fprintf(b, `<rect width="%d" height="%d" fill="#fff"/>`+"\n", width, height)
	fmt.Fprintf(b, `<text x="%d" y="22" font-size="16" font-weight="600" fill="#111">%s</text>`+"\n", padL, esc(f.Title))
	if f.Note != "" {
		fmt.Fprintf(b, `<text x="%d" y="40" fill="#444">%s</text>`+"\n", padL, esc(f.Note))
	}
	for i, n := range names {
		step := min((width-padL)/min(len(names), 6), 220)
		x, y := padL+(i%6)*step, 58+18*(i/6)
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2.5" stroke-dasharray="%s"/>`, x, y-4, x+28, y-4, palette[i%len(palette)], dashes[i%len(dashes)])
		fmt.Fprintf(b, `<text x="%d" y="%d" fill="#111">%s</text>`+"\n", x+34, y, esc(n))
	}
	for i := range f.Panels {
		ox, oy := (i%cols)*panelW, head+(i/cols)*panelH
		f.Panels[i].render(b, ox, oy, names)
	}
	b.WriteString("</svg>\n")
	return b.Flush()
}

// names lists the series names in order of first appearance.
func (f *Figure) names() []string {
	var names []string
	seen := map[string]bool{}
	for _, p := range f.Panels {
		for _, s := range p.Series {
			if !seen[s.Name] {
				seen[s.Name] = true
				names = append(names, s.Name)
			}
		}
	}
	return names
}

func (p *Panel) render(b *bufio.Writer, ox, oy int, names []string) {
	x0, x1, y0, y1 := p.bounds()
	xt := ticks(x0, x1, false)
	yt := ticks(y0, y1, p.LogY)
	x0, x1 = min(x0, xt[0]), max(x1, xt[len(xt)-1])
	y0, y1 = min(y0, yt[0]), max(y1, yt[len(yt)-1])
	left, right := float64(ox+padL), float64(ox+panelW-padR)
	top, bottom := float64(oy+padT), float64(oy+panelH-padB)
	sx := func(x float64) float64 { return left + (x-x0)/(x1-x0)*(right-left) }
	sy := func(y float64) float64 {
		if p.LogY {
			return bottom - (math.Log10(y)-math.Log10(y0))/(math.Log10(y1)-math.Log10(y0))*(bottom-top)
		}
		return bottom - (y-y0)/(y1-y0)*(bottom-top)
	}
	fmt.Fprintf(b, `<g><text x="%g" y="%g" font-weight="600" fill="#111">%s</text>`+"\n", left, top-10, esc(p.Title))
	for i, s := range p.Shade {
		a, c := sx(math.Max(s[0], x0)), sx(math.Min(s[1], x1))
		fmt.Fprintf(b, `<rect x="%.1f" y="%g" width="%.1f" height="%g" fill="#f2c14e" fill-opacity="0.25"/>`+"\n", a, top, c-a, bottom-top)
		if i == 0 && p.ShadeLabel != "" {
			fmt.Fprintf(b, `<text x="%.1f" y="%g" font-size="11" fill="#7a5a00">%s</text>`+"\n", a+4, top+13, esc(p.ShadeLabel))
		}
	}
	for _, t := range yt {
		y := sy(t)
		fmt.Fprintf(b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#ddd"/><text x="%g" y="%.1f" text-anchor="end" fill="#333">%s</text>`+"\n", left, y, right, y, left-6, y+4, num(t))
	}
	for _, t := range xt {
		x := sx(t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#333"/><text x="%.1f" y="%g" text-anchor="middle" fill="#333">%s</text>`+"\n", x, bottom, x, bottom+5, x, bottom+18, num(t))
	}
	fmt.Fprintf(b, `<path d="M%g %gV%gH%g" fill="none" stroke="#333"/>`+"\n", left, top, bottom, right)
	fmt.Fprintf(b, `<text x="%g" y="%g" text-anchor="middle" fill="#111">%s</text>`+"\n", (left+right)/2, bottom+38, esc(p.XLabel))
	fmt.Fprintf(b, `<text transform="translate(%g %g) rotate(-90)" text-anchor="middle" fill="#111">%s</text>`+"\n", float64(ox+16), (top+bottom)/2, esc(p.YLabel))
	for _, s := range p.Series {
		i := slices.Index(names, s.Name) // names holds every series name
		var d strings.Builder
		move := true
		for j := range s.X {
			x, y := s.X[j], s.Y[j]
			if math.IsNaN(x) || math.IsNaN(y) || (p.LogY && y <= 0) {
				move = true
				continue
			}
			cmd := "L"
			if move {
				cmd, move = "M", false
			}
			fmt.Fprintf(&d, "%s%.1f %.1f", cmd, sx(x), sy(y))
		}
		fmt.Fprintf(b, `<path d="%s" fill="none" stroke="%s" stroke-width="2" stroke-linejoin="round" stroke-dasharray="%s"><title>%s</title></path>`+"\n",
			d.String(), palette[i%len(palette)], dashes[i%len(dashes)], esc(s.Name))
	}
	b.WriteString("</g>\n")
}

// bounds returns the data's x and y ranges; y starts at 0 on a linear axis.
func (p *Panel) bounds() (x0, x1, y0, y1 float64) {
	x0, x1, y0, y1 = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range p.Series {
		for j := range s.X {
			x, y := s.X[j], s.Y[j]
			if math.IsNaN(x) || math.IsNaN(y) || (p.LogY && y <= 0) {
				continue
			}
			x0, x1, y0, y1 = min(x0, x), max(x1, x), min(y0, y), max(y1, y)
		}
	}
	for _, s := range p.Shade {
		x0, x1 = min(x0, s[0]), max(x1, s[1])
	}
	if !p.LogY {
		y0 = min(y0, 0)
	}
	if p.YMax > y1 {
		y1 = p.YMax
	}
	switch {
	case x0 > x1: // no data
		x0, x1 = 0, 1
	case x0 == x1:
		x1 = x0 + 1
	}
	switch {
	case y0 > y1:
		y0, y1 = 0, 1
		if p.LogY {
			y0, y1 = 1, 10
		}
	case y0 == y1:
		y1 = y0 + 1
		if p.LogY {
			y1 = y0 * 10
		}
	}
	return
}

// ticks returns round tick values covering [lo, hi]: multiples of 1, 2 or
// 5 × 10^k, about six of them, or powers of ten on a log axis.
func ticks(lo, hi float64, log bool) []float64 {
	if log {
		var t []float64
		for e := math.Floor(math.Log10(lo)); ; e++ {
			t = append(t, math.Pow(10, e))
			if t[len(t)-1] >= hi {
				return t
			}
		}
	}
	raw := (hi - lo) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if step = m * mag; step >= raw {
			break
		}
	}
	var t []float64
	for v := math.Floor(lo/step) * step; ; v += step {
		// k·step, printed to 12 digits: 3 × 0.2 is 0.6, not 0.6000000000000001.
		v, _ = strconv.ParseFloat(strconv.FormatFloat(math.Round(v/step)*step, 'g', 12, 64), 64)
		t = append(t, v)
		if v >= hi {
			return t
		}
	}
}

// num formats a tick value: whole numbers as such, thousands with a k or M,
// others with the few decimals a round tick has.
func num(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e6 && math.Mod(a, 1e5) == 0:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case a >= 1e4 && math.Mod(a, 100) == 0:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
}

func esc(s string) string { return html.EscapeString(s) }
