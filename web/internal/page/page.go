// Package page computes everything the calculator page shows for one set
// of inputs. It runs inside the browser as WebAssembly (see web/wasm) and in
// ordinary tests, so the page's numbers are the Go code's numbers.
package page

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/internal/calc"
)

// Fields returns the page's inputs by their command-line flag names, in the
// order the command line and the URL query show them.
func Fields() []string {
	return []string{calc.FieldInitial, calc.FieldMultiplier, calc.FieldMax, calc.FieldRetries, calc.FieldJitter,
		calc.FieldDeadline, calc.FieldTarget, calc.FieldSeed}
}

// Result is what the page shows for one set of inputs. When Errors is not
// empty, nothing else is set and the page keeps its previous result.
type Result struct {
	Errors  map[string]string `json:"errors,omitempty"` // flag name → the CLI's message
	Rows    []Row             `json:"rows,omitempty"`   // the first MaxRows retries
	Retries int               `json:"retries"`          // how many retries the schedule has
	Totals  *Totals           `json:"totals,omitempty"`
	Verdict *Verdict          `json:"verdict,omitempty"`
	Chart   *Chart            `json:"chart,omitempty"`
	Bars    []Bar             `json:"bars,omitempty"`
	Command string            `json:"command,omitempty"` // the equivalent `again calc` command
	Snippet string            `json:"snippet,omitempty"` // Go code configuring package retry
}

// MaxRows is the most retries the page's table shows; the CSV and JSON
// downloads (see Export) always hold every retry. A browser laying out 100,000 rows
// stops responding, and nobody reads that far.
const MaxRows = 1000

// MaxBars is the most bars the chart draws; longer schedules are drawn in
// groups of consecutive retries, about one per pixel column or wider.
const MaxBars = 300

// Row is one retry of the table, in calc.Human format.
type Row struct {
	Retry    int    `json:"retry"`
	Delay    string `json:"delay"`
	Capped   bool   `json:"capped"`
	Min      string `json:"min"`
	Mean     string `json:"mean"`
	Max      string `json:"max"`
	TotalMax string `json:"totalMax"`
}

// Bar is one bar of the chart: retries First..Last (one retry, or a group
// of them in a long schedule), in milliseconds. Min and Max bound every
// delay of the group and Mean is their average; TotalMin, TotalMean and
// TotalMax are the cumulative wait at Last: when retry Last starts, at the
// earliest, on average and at the latest.
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

// Totals is the total wait over all retries, in calc.Human format. Every
// field is copied from calc's Report, which `again calc` renders too.
type Totals struct {
	Min  string `json:"min"`
	Mean string `json:"mean"`
	Max  string `json:"max"`
	P50  string `json:"p50"`
	P90  string `json:"p90"`
	P99  string `json:"p99"`
	// Estimated reports that some value shown is a Monte Carlo estimate;
	// MeanEstimated and PercentilesEstimated say which (under decorrelated
	// jitter the mean is exact unless the cap clamps a delay).
	Estimated            bool `json:"estimated"`
	MeanEstimated        bool `json:"meanEstimated"`
	PercentilesEstimated bool `json:"percentilesEstimated"`
}

// Chart holds the vertical scales of the chart's two panels: the total
// wait so far (with the deadline) and the delay before each retry. One
// scale for both would flatten the bars of a long schedule to nothing.
type Chart struct {
	Total Scale `json:"total"`
	Delay Scale `json:"delay"`
}

// Scale is a vertical scale: its top and the gridlines, in milliseconds,
// labelled in calc.Human format.
type Scale struct {
	Top   float64 `json:"top"`
	Ticks []Tick  `json:"ticks"`
}

// Tick is one labelled gridline of the chart: Label is in calc.Human
// format, or in whole days ("200 d") on a scale of days.
type Tick struct {
	Ms    float64 `json:"ms"`
	Label string  `json:"label"`
}

// niceSteps are the gridline spacings the chart may use: familiar
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
	const day = 24 * time.Hour
	for p := day; p <= time.Duration(math.MaxInt64)/5; p *= 10 {
		steps = append(steps, p, 2*p, 5*p)
	}
	return steps
}

// scale returns a chart scale whose top is at least hi, with 1 to 6 gridlines.
func scale(hi time.Duration) Scale {
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
	var c Scale
	for i := time.Duration(1); i <= n; i++ {
		d := i * step
		if d/step != i { // overflow near the largest Duration
			break
		}
		c.Ticks = append(c.Ticks, Tick{Ms: ms(d), Label: tickLabel(d, step)})
		c.Top = ms(d)
	}
	c.Top = max(c.Top, ms(hi)) // when the next gridline would overflow
	return c
}

// tickLabel labels the gridline at d, a multiple of step, in
// calc.Human format; gridlines a day or more apart are labelled in
// days, "200 d", where Human would say "4800 h".
func tickLabel(d, step time.Duration) string {
	const day = 24 * time.Hour
	if step >= day {
		return strconv.FormatInt(int64(d/day), 10) + " d"
	}
	return calc.Human(d)
}

// bars groups the retries into at most MaxBars bars of equal size.
func bars(rs []calc.RetryReport) []Bar {
	size := (len(rs) + MaxBars - 1) / MaxBars
	var out []Bar
	for i := 0; i < len(rs); i += size {
		g := rs[i:min(i+size, len(rs))]
		end := g[len(g)-1]
		b := Bar{
			First: g[0].Retry, Last: end.Retry, MinMs: math.Inf(1),
			TotalMinMs: ms(time.Duration(end.TotalMin)), TotalMeanMs: ms(time.Duration(end.TotalMean)), TotalMaxMs: ms(time.Duration(end.TotalMax)),
		}
		for _, x := range g {
			b.MinMs = min(b.MinMs, ms(time.Duration(x.Min)))
			b.MaxMs = max(b.MaxMs, ms(time.Duration(x.Max)))
			b.MeanMs += ms(time.Duration(x.Mean)) / float64(len(g))
		}
		out = append(out, b)
	}
	return out
}

// Verdict compares the total wait with the deadline.
type Verdict struct {
	Deadline      string  `json:"deadline"`
	DeadlineMs    float64 `json:"deadlineMs"`
	WorstCaseFits bool    `json:"worstCaseFits"`
	P99Fits       bool    `json:"p99Fits"`
	RetriesWithin int     `json:"retriesWithin"`
	Retries       int     `json:"retries"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// values returns the page's inputs that are set, as internal/calc takes
// them. An empty field means the command line's default, as an absent flag
// does; the page shows that default as the field's placeholder.
func values(v map[string]string) calc.Values {
	out := calc.Values{}
	for _, f := range Fields() {
		if s := v[f]; strings.TrimSpace(s) != "" {
			out[f] = s
		}
	}
	return out
}

// Defaults returns the text of each field's default: what an empty field,
// like an absent flag of `again calc`, stands for.
func Defaults() map[string]string {
	d := calc.DefaultValues()
	out := map[string]string{}
	for _, f := range Fields() {
		out[f] = d[f]
	}
	return out
}

// parse validates the inputs with internal/calc. Its errors are keyed by
// field: each field is also checked alone, so that every wrong field is
// marked at once and not only the first one the command line would report.
func parse(v map[string]string) (calc.Input, map[string]string) {
	vals := values(v)
	errs := map[string]string{}
	for f, s := range vals {
		if _, err := calc.Parse(calc.Values{f: s}); err != nil {
			errs[f] = message(err)
		}
	}
	if len(errs) > 0 {
		return calc.Input{}, errs
	}
	in, err := calc.Parse(vals)
	if err != nil {
		field := ""
		var ie *calc.InputError
		if errors.As(err, &ie) {
			field = ie.Field
		}
		errs[field] = message(err)
		return calc.Input{}, errs
	}
	return in, nil
}

// firstError returns the message of the first wrong field in the order of
// Fields, or, for an error of no field, any one: the one the command line
// would print.
func firstError(errs map[string]string) string {
	for _, f := range Fields() {
		if e, ok := errs[f]; ok {
			return e
		}
	}
	for _, e := range errs {
		return e
	}
	return ""
}

// message returns the text `again calc` prints for err after its
// "again calc: " prefix: "--retries must be a whole number from 0 to
// 100000, got -1", or a solving failure's detail.
func message(err error) string {
	var ie *calc.InputError
	if errors.As(err, &ie) && ie.Field != "" {
		return ie.Message()
	}
	var se *calc.SolveError
	if errors.As(err, &se) {
		return se.Detail()
	}
	return err.Error()
}

// Compute returns the page's result for the inputs v, keyed by flag name.
// Missing and empty keys take the command line's defaults.
func Compute(v map[string]string) Result {
	in, errs := parse(v)
	if len(errs) > 0 {
		return Result{Errors: errs}
	}
	rep, err := calc.Compute(in)
	if err != nil { // only solving fails, and Compute does not solve
		return Result{Errors: map[string]string{"": err.Error()}}
	}
	t := rep.Total
	r := Result{
		Rows:    make([]Row, min(len(rep.Retries), MaxRows)),
		Retries: len(rep.Retries),
		Totals: &Totals{
			Min: t.MinHuman, Mean: t.MeanHuman, Max: t.MaxHuman,
			P50: t.P50Human, P90: t.P90Human, P99: t.P99Human,
			Estimated: len(t.Estimated) > 0, MeanEstimated: t.MeanEstimated(), PercentilesEstimated: t.PercentilesEstimated(),
		},
		Command: command(v),
		Snippet: snippet(in),
	}
	for i, s := range rep.Retries[:len(r.Rows)] {
		r.Rows[i] = Row{
			Retry: s.Retry, Delay: calc.Human(time.Duration(s.Delay)), Capped: s.Capped,
			Min: calc.Human(time.Duration(s.Min)), Mean: calc.Human(time.Duration(s.Mean)), Max: calc.Human(time.Duration(s.Max)),
			TotalMax: calc.Human(time.Duration(s.TotalMax)),
		}
	}
	r.Bars = bars(rep.Retries)
	var longest time.Duration
	for _, s := range rep.Retries {
		longest = max(longest, time.Duration(s.Max))
	}
	r.Chart = &Chart{Total: scale(max(time.Duration(t.Max), in.Deadline)), Delay: scale(longest)}
	if d := rep.Deadline; d != nil {
		r.Verdict = &Verdict{
			Deadline: calc.Human(in.Deadline), DeadlineMs: ms(in.Deadline),
			WorstCaseFits: d.WorstCaseFits, P99Fits: d.P99Fits,
			RetriesWithin: d.RetriesWithin, Retries: rep.Policy.Retries,
		}
	}
	return r
}

// Download is the content of a file the page offers, or why there is none.
type Download struct {
	Text  string `json:"text,omitempty"`
	Error string `json:"error,omitempty"`
}

// Export returns the whole schedule for the inputs v as `again calc
// --format csv` or `--format json` prints it for the same flags. It is
// apart from Compute because for long schedules writing these files costs
// more than everything else the page shows: the page writes them when the
// user pauses or asks for one, not on every keystroke.
func Export(v map[string]string, format string) Download {
	in, errs := parse(v)
	if len(errs) > 0 {
		return Download{Error: firstError(errs)}
	}
	rep, err := calc.Compute(in)
	if err != nil {
		return Download{Error: message(err)}
	}
	var b bytes.Buffer
	switch format {
	case "csv":
		err = rep.WriteCSV(&b)
	case "json":
		err = rep.WriteJSON(&b)
	default:
		return Download{Error: fmt.Sprintf("page: export format must be csv or json, got %q", format)}
	}
	if err != nil {
		return Download{Error: err.Error()}
	}
	return Download{Text: b.String()}
}

// SolveResult is the outcome of Solve: the new text of the solved field, or
// an error message.
type SolveResult struct {
	Field string `json:"field,omitempty"`
	Value string `json:"value,omitempty"`
	Error string `json:"error,omitempty"`
}

// Solve finds the largest value of the field param ("initial",
// "multiplier" or "retries") for which the inputs v fit their deadline, as
// `again calc --solve param` does, and returns it as the field's new text,
// rounded down so that it still fits.
func Solve(v map[string]string, param string) SolveResult {
	if _, errs := parse(v); len(errs) > 0 {
		return SolveResult{Error: firstError(errs)}
	}
	vals := values(v)
	vals[calc.FieldSolve] = param
	in, err := calc.Parse(vals)
	if err != nil {
		return SolveResult{Error: message(err)}
	}
	rep, err := calc.Compute(in)
	if err != nil {
		return SolveResult{Error: message(err)}
	}
	x := rep.Solved.Value
	switch param {
	case calc.FieldInitial:
		return SolveResult{Field: param, Value: solvedDuration(time.Duration(x * float64(time.Millisecond)))}
	case calc.FieldMultiplier:
		return SolveResult{Field: param, Value: strconv.FormatFloat(max(1, math.Floor(x*1e4)/1e4), 'f', -1, 64)}
	}
	return SolveResult{Field: param, Value: strconv.FormatFloat(x, 'f', 0, 64)}
}

// solvedDuration writes a solved initial delay in Go syntax with three
// significant digits, rounded down so that it still fits: 1.23s, 123ms,
// 12.3ms.
func solvedDuration(d time.Duration) string {
	step := time.Duration(1)
	for x := d; x >= 1000; x /= 10 {
		step *= 10
	}
	return d.Truncate(step).String()
}

// command returns the `again calc` command line for the inputs as typed.
// It leaves out the solver's target: the page keeps it for its solve
// buttons, but again calc refuses --target without --solve.
func command(v map[string]string) string {
	var b strings.Builder
	b.WriteString("again calc")
	for _, f := range Fields() {
		s, ok := v[f]
		if !ok || s == "" || f == calc.FieldTarget {
			continue
		}
		b.WriteString(" --" + f + " " + shellQuote(s))
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell unless it is plainly safe.
func shellQuote(s string) string {
	safe := s != ""
	for _, c := range s {
		if !strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.:_-+", c) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// goDuration writes d as a Go expression: 500 * time.Millisecond, time.Minute.
func goDuration(d time.Duration) string {
	units := []struct {
		d    time.Duration
		name string
	}{{time.Hour, "time.Hour"}, {time.Minute, "time.Minute"}, {time.Second, "time.Second"},
		{time.Millisecond, "time.Millisecond"}, {time.Microsecond, "time.Microsecond"}}
	if d == 0 {
		return "0"
	}
	for _, u := range units {
		if d%u.d == 0 {
			if d == u.d {
				return u.name
			}
			return strconv.FormatInt(int64(d/u.d), 10) + " * " + u.name
		}
	}
	return strconv.FormatInt(int64(d), 10) + " * time.Nanosecond"
}

// jitterConst returns the Go name of a jitter kind in package backoff.
func jitterConst(j backoff.Jitter) string {
	switch j {
	case backoff.NoJitter:
		return "backoff.NoJitter"
	case backoff.EqualJitter:
		return "backoff.EqualJitter"
	case backoff.ProportionalJitter:
		return "backoff.ProportionalJitter"
	case backoff.DecorrelatedJitter:
		return "backoff.DecorrelatedJitter"
	}
	return "backoff.FullJitter"
}

// snippet returns ready-to-paste Go code that retries with the policy.
func snippet(in calc.Input) string {
	p := in.Policy
	var b strings.Builder
	b.WriteString("// import \"github.com/again-go/again/backoff\"\n// import \"github.com/again-go/again/retry\"\n")
	b.WriteString("policy := backoff.Policy{\n")
	// The calculator's 0 means none; in Go a zero field means its default,
	// so none is written as a negative value (see backoff.Policy).
	if p.Initial < 0 {
		b.WriteString("\tInitial:    -1, // negative: no wait\n")
	} else {
		fmt.Fprintf(&b, "\tInitial:    %s,\n", goDuration(p.Initial))
	}
	fmt.Fprintf(&b, "\tMultiplier: %s,\n", strconv.FormatFloat(p.EffectiveMultiplier(), 'g', -1, 64))
	if p.Max < 0 {
		b.WriteString("\tMax:        backoff.NoCap,\n")
	} else {
		fmt.Fprintf(&b, "\tMax:        %s,\n", goDuration(p.Max))
	}
	if p.Retries < 0 {
		b.WriteString("\tRetries:    backoff.NoRetries,\n")
	} else {
		fmt.Fprintf(&b, "\tRetries:    %d,\n", p.Retries)
	}
	fmt.Fprintf(&b, "\tJitter:     %s,\n", jitterConst(p.Jitter))
	if p.Jitter == backoff.ProportionalJitter {
		fmt.Fprintf(&b, "\tJitterFactor: %s,\n", strconv.FormatFloat(p.EffectiveJitterFactor(), 'g', -1, 64))
	}
	b.WriteString("}\n")
	if in.Deadline > 0 {
		fmt.Fprintf(&b, "ctx, cancel := context.WithTimeout(ctx, %s)\ndefer cancel()\n", goDuration(in.Deadline))
	}
	b.WriteString("err := retry.Run(ctx, policy, func(ctx context.Context) error {\n\treturn callTheService(ctx) // your operation\n})\n")
	return b.String()
}
