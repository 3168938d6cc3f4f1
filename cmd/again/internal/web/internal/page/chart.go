package page

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/again-go/again/cmd/again/internal/calc"
)

// MaxBars is the most bars the chart draws; longer schedules are drawn in
// groups of consecutive retries, about one per pixel column or wider.
const MaxBars = 300

// Chart is what the page draws: the total wait when each retry starts
// (with the deadline), the delay before each retry, and the timeline of
// the attempts on a time axis from t = 0. The page only places these
// numbers; every tick, label and sentence comes from here.
type Chart struct {
	Total Scale `json:"total"` // the time axis: total wait, timeline
	Delay Scale `json:"delay"` // the delay before each retry
	// Bars are the retries, one bar each or in groups of consecutive ones.
	Bars []Bar `json:"bars"`
	// Retries is the number of retries: the retry axis runs from 1 to it.
	Retries int `json:"retries"`
	// RetryTicks are the labelled retry numbers: 1, round numbers, and the
	// last; AttemptTicks are the same for the attempts (one more).
	RetryTicks   []int `json:"retryTicks"`
	AttemptTicks []int `json:"attemptTicks"`
	// Cross is the first retry that may start after the deadline in the
	// worst case, 0 if every one starts in time or there is no deadline.
	Cross int `json:"cross"`
	// WorstEnd and MeanEnd label the ends of the worst-case and mean lines.
	WorstEnd string `json:"worstEnd"`
	MeanEnd  string `json:"meanEnd"`
	// Attempts are the attempts on the timeline: when each starts, at the
	// earliest, on average and at the latest (grouped as Bars are).
	Attempts []Attempt `json:"attempts"`
	// Text is the chart's text alternative, with the actual numbers.
	Text string `json:"text"`
}

// Bar is one bar of the chart: retries First..Last (one retry, or a group
// of them in a long schedule), in milliseconds. Min and Max bound every
// delay of the group and Mean is their average; TotalMin, TotalMean and
// TotalMax are when retry Last starts: at the earliest, on average and at
// the latest, the attempts' own time included.
type Bar struct {
	First       int     `json:"first"`
	Last        int     `json:"last"`
	MinMs       float64 `json:"minMs"`
	MeanMs      float64 `json:"meanMs"`
	MaxMs       float64 `json:"maxMs"`
	TotalMinMs  float64 `json:"totalMinMs"`
	TotalMeanMs float64 `json:"totalMeanMs"`
	TotalMaxMs  float64 `json:"totalMaxMs"`
}

// Attempt is when attempt N starts (attempt 1 at t = 0), in milliseconds.
type Attempt struct {
	N      int     `json:"n"`
	MinMs  float64 `json:"minMs"`
	MeanMs float64 `json:"meanMs"`
	MaxMs  float64 `json:"maxMs"`
}

// Scale is an axis of durations: linear from 0, or logarithmic from Bottom
// when the values span too many orders of magnitude for a linear axis to
// show more than a flat line and a wall.
type Scale struct {
	Log    bool    `json:"log"`
	Bottom float64 `json:"bottom"` // 0 on a linear scale
	Top    float64 `json:"top"`
	Ticks  []Tick  `json:"ticks"`
}

// Tick is one labelled gridline: Label is in the page's language; the
// first tick of a linear scale is 0, labelled "0".
type Tick struct {
	Ms    float64 `json:"ms"`
	Label string  `json:"label"`
}

// niceSteps are the gridline spacings a linear scale may use: familiar
// durations up to a day, then 1, 2 and 5 times powers of ten of days.
func niceSteps() []time.Duration {
	steps := []time.Duration{
		time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond,
		20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond,
		500 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second,
		15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute,
		10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour,
		6 * time.Hour, 12 * time.Hour,
	}
	for p := day; p <= maxDuration/5; p *= 10 {
		steps = append(steps, p, 2*p, 5*p)
	}
	return steps
}

// logSteps are the gridlines a logarithmic scale may use: a unit a reader
// knows at every order of magnitude.
func logSteps() []time.Duration {
	year := time.Duration(365.25 * float64(day))
	return []time.Duration{
		time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, time.Second, 10 * time.Second,
		time.Minute, 10 * time.Minute, time.Hour, 10 * time.Hour, day, 10 * day, 100 * day,
		year, 10 * year, 100 * year,
	}
}

// scaleFor returns a scale for the values: linear, unless they span more
// than four orders of magnitude and a linear axis would draw a quarter of
// them or more on its floor (below 1 % of its top), or some of them are the
// saturated largest duration. An uncapped exponential schedule is such a
// case: on a linear axis it is a flat line and a wall. A capped one,
// however long, stays linear.
func scaleFor(values []time.Duration, l Lang) Scale {
	hi, lo := time.Duration(0), maxDuration
	for _, v := range values {
		hi = max(hi, v)
		if v > 0 {
			lo = min(lo, v)
		}
	}
	if hi == 0 || float64(hi) <= 1e4*float64(lo) {
		return linear(hi, l)
	}
	floor := 0
	for _, v := range values {
		if v < hi/100 {
			floor++
		}
	}
	if hi < maxDuration && floor*4 < len(values) {
		return linear(hi, l)
	}
	return logarithmic(lo, hi, l)
}

// linear returns a linear scale from 0 whose top is at least hi, with
// gridlines at 0 and at 1 to 6 multiples of a nice step.
func linear(hi time.Duration, l Lang) Scale {
	if hi <= 0 {
		hi = time.Millisecond
	}
	steps := niceSteps()
	step := steps[len(steps)-1]
	for _, s := range steps {
		if hi/s <= 5 {
			step = s
			break
		}
	}
	n := hi / step
	if n*step < hi {
		n++
	}
	c := Scale{Ticks: []Tick{{Ms: 0, Label: "0"}}}
	for i := time.Duration(1); i <= n; i++ {
		d := i * step
		if d/step != i { // overflow near the largest Duration
			break
		}
		c.Ticks = append(c.Ticks, Tick{Ms: ms(d), Label: tickLabel(d, step, l)})
		c.Top = ms(d)
	}
	c.Top = max(c.Top, ms(hi)) // when the next gridline would overflow
	return c
}

// logarithmic returns a logarithmic scale from the largest log step at or
// below lo to the smallest at or above hi, with at most 7 gridlines.
func logarithmic(lo, hi time.Duration, l Lang) Scale {
	steps := logSteps()
	bottom, top := steps[0], hi
	for _, s := range steps {
		if s <= lo {
			bottom = s
		}
	}
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i] >= hi {
			top = steps[i]
		}
	}
	var in []time.Duration
	for _, s := range steps {
		if s >= bottom && s <= top {
			in = append(in, s)
		}
	}
	every := (len(in) + 6) / 7
	c := Scale{Log: true, Bottom: ms(bottom), Top: ms(top)}
	for i, s := range in {
		if i%every == 0 || i == len(in)-1 && s == top {
			c.Ticks = append(c.Ticks, Tick{Ms: ms(s), Label: l.Duration(s)})
		}
	}
	return c
}

// tickLabel labels the gridline at d, a multiple of step; gridlines a day
// or more apart are labelled in whole days ("200 d").
func tickLabel(d, step time.Duration, l Lang) string {
	if step >= day {
		return strconv.FormatInt(int64(d/day), 10) + " " + l.t("go.unit.d")
	}
	return l.Duration(d)
}

// retryTicks returns the retry numbers to label on an axis of n retries:
// 1, then multiples of a round step (1, 2, 5, 10, 20, 50 …) with at most
// about eight labels, and n itself, which replaces the last multiple when
// the two would crowd each other.
func retryTicks(n int) []int {
	if n <= 0 {
		return nil
	}
	step := roundStep(func(step int) bool { return n/step <= 8 })
	ticks := []int{1}
	for k := step; k <= n; k += step {
		if k > 1 {
			ticks = append(ticks, k)
		}
	}
	if last := ticks[len(ticks)-1]; last != n {
		if len(ticks) > 1 && n-last < step/2 {
			ticks[len(ticks)-1] = n
		} else {
			ticks = append(ticks, n)
		}
	}
	return ticks
}

// roundStep returns the smallest step of the series 1, 2, 5, 10, 20, 50 …
// for which fits holds; the axes of the chart and of the storm view label
// their gridlines with it.
func roundStep(fits func(step int) bool) int {
	for base := 1; ; base *= 10 {
		for _, m := range []int{1, 2, 5} {
			if step := base * m; fits(step) {
				return step
			}
		}
	}
}

// chart returns the chart for the report, the attempts' own time included
// in the totals.
func chart(in input, rep *calc.Report, a attempts, v *Verdict, l Lang) *Chart {
	rs := rep.Retries
	n := len(rs)
	c := &Chart{Retries: n, RetryTicks: retryTicks(n), AttemptTicks: retryTicks(n + 1), Bars: []Bar{}, Attempts: []Attempt{{N: 1}}}
	size := max(1, (n+MaxBars-1)/MaxBars)
	start := func(m calc.Millis, retry int) float64 { return ms(addSat(time.Duration(m), a.before(retry))) }
	var totals, delays []time.Duration
	for i := 0; i < n; i += size {
		g := rs[i:min(i+size, n)]
		end := g[len(g)-1]
		b := Bar{
			First: g[0].Retry, Last: end.Retry, MinMs: math.Inf(1),
			TotalMinMs: start(end.TotalMin, end.Retry), TotalMeanMs: start(end.TotalMean, end.Retry), TotalMaxMs: start(end.TotalMax, end.Retry),
		}
		for _, x := range g {
			b.MinMs = min(b.MinMs, ms(time.Duration(x.Min)))
			b.MaxMs = max(b.MaxMs, ms(time.Duration(x.Max)))
			b.MeanMs += ms(time.Duration(x.Mean)) / float64(len(g))
			delays = append(delays, time.Duration(x.Max))
		}
		c.Bars = append(c.Bars, b)
		c.Attempts = append(c.Attempts, Attempt{N: end.Retry + 1, MinMs: b.TotalMinMs, MeanMs: b.TotalMeanMs, MaxMs: b.TotalMaxMs})
		totals = append(totals, addSat(time.Duration(end.TotalMax), a.before(end.Retry)))
	}
	if v != nil {
		totals = append(totals, in.Deadline)
		if v.RetriesWithin < n {
			c.Cross = v.RetriesWithin + 1
		}
	}
	c.Total = scaleFor(totals, l)
	c.Delay = scaleFor(delays, l)
	if n > 0 {
		last := rs[n-1]
		c.WorstEnd = l.Duration(addSat(time.Duration(last.TotalMax), a.before(n)))
		c.MeanEnd = l.Duration(addSat(time.Duration(last.TotalMean), a.before(n)))
	}
	c.Text = chartText(rep, a, v, l)
	return c
}

// chartText describes the chart in words with its numbers: a few retries'
// latest start times and delays, the deadline and where it is crossed.
func chartText(rep *calc.Report, a attempts, v *Verdict, l Lang) string {
	rs := rep.Retries
	if len(rs) == 0 {
		return l.t("go.noRetries")
	}
	pick := make([]int, 0, 8)
	for i := range rs {
		if len(rs) <= 8 || i < 4 || i >= len(rs)-2 {
			pick = append(pick, i)
		}
	}
	var starts, delays []string
	for j, i := range pick {
		if j > 0 && pick[j-1] != i-1 {
			starts, delays = append(starts, "…"), append(delays, "…")
		}
		x := rs[i]
		starts = append(starts, fmt.Sprintf("%d: %s", x.Retry, l.Duration(addSat(time.Duration(x.TotalMax), a.before(x.Retry)))))
		delays = append(delays, l.Duration(time.Duration(x.Max)))
	}
	text := l.f("go.chart.text", strings.Join(starts, ", "), strings.Join(delays, ", "))
	if v != nil {
		text += " " + l.f("go.chart.deadline", v.Deadline)
		if v.RetriesWithin < len(rs) {
			text += " " + l.f("go.chart.cross", v.RetriesWithin+1)
		}
	}
	return text
}
