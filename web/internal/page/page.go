// Package page computes everything the calculator page shows for one set
// of inputs. It runs inside the browser as WebAssembly (see web/wasm) and in
// ordinary tests, so the page's numbers are the Go code's numbers.
package page

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/again-go/again/backoff"
)

// Fields lists the page's inputs by their command-line flag names, in the
// order the command line and the URL query show them.
var Fields = []string{"initial", "multiplier", "max", "retries", "jitter", "deadline", "target", "seed"}

// Result is what the page shows for one set of inputs. When Errors is not
// empty, nothing else is set and the page keeps its previous result.
type Result struct {
	Errors  map[string]string `json:"errors,omitempty"` // flag name → the CLI's message
	Rows    []Row             `json:"rows,omitempty"`
	Totals  *Totals           `json:"totals,omitempty"`
	Verdict *Verdict          `json:"verdict,omitempty"`
	Chart   *Chart            `json:"chart,omitempty"`
	Command string            `json:"command,omitempty"` // the equivalent `again calc` command
	Snippet string            `json:"snippet,omitempty"` // Go code configuring package retry
	JSON    string            `json:"json,omitempty"`    // `again calc --format json`
	CSV     string            `json:"csv,omitempty"`     // `again calc --format csv`
}

// Row is one retry of the table; the *Ms fields feed the chart.
type Row struct {
	Retry      int     `json:"retry"`
	Delay      string  `json:"delay"`
	Capped     bool    `json:"capped"`
	Min        string  `json:"min"`
	Mean       string  `json:"mean"`
	Max        string  `json:"max"`
	TotalMax   string  `json:"totalMax"`
	MinMs      float64 `json:"minMs"`
	MeanMs     float64 `json:"meanMs"`
	MaxMs      float64 `json:"maxMs"`
	TotalMaxMs float64 `json:"totalMaxMs"`
}

// Totals is the total wait over all retries, in backoff.Human format.
type Totals struct {
	Min       string `json:"min"`
	Mean      string `json:"mean"`
	Max       string `json:"max"`
	P50       string `json:"p50"`
	P90       string `json:"p90"`
	P99       string `json:"p99"`
	Estimated bool   `json:"estimated"`
}

// Chart is the chart's vertical scale: its top and the gridlines, in
// milliseconds, labelled in backoff.Human format.
type Chart struct {
	Top   float64 `json:"top"`
	Ticks []Tick  `json:"ticks"`
}

// Tick is one labelled gridline of the chart.
type Tick struct {
	Ms    float64 `json:"ms"`
	Label string  `json:"label"`
}

// niceSteps are the gridline spacings the chart may use.
var niceSteps = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond,
	20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond,
	500 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second,
	15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute,
	10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour,
	6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// scale returns a chart scale whose top is at least hi, with 2 to 6 gridlines.
func scale(hi time.Duration) *Chart {
	if hi <= 0 {
		hi = time.Millisecond
	}
	step := time.Duration(0)
	for _, s := range niceSteps {
		if hi/s <= 5 {
			step = s
			break
		}
	}
	if step == 0 { // beyond a few days: powers of ten of days
		step = 24 * time.Hour
		for hi/step > 5 && step < time.Duration(math.MaxInt64)/10 {
			step *= 10
		}
	}
	n := hi / step
	if n*step < hi {
		n++
	}
	c := &Chart{}
	for i := time.Duration(1); i <= n; i++ {
		d := i * step
		if d/step != i { // overflow near the largest Duration
			break
		}
		c.Ticks = append(c.Ticks, Tick{Ms: ms(d), Label: backoff.Human(d)})
		c.Top = ms(d)
	}
	c.Top = max(c.Top, ms(hi)) // when the next gridline would overflow
	return c
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

// Compute returns the page's result for the inputs v, keyed by flag name.
// Missing keys take the command line's defaults.
func Compute(v map[string]string) Result {
	in, errs := parse(v)
	if len(errs) > 0 {
		return Result{Errors: errs}
	}
	st := in.policy.Stats(in.seed)
	r := Result{
		Rows: make([]Row, len(st.Retries)),
		Totals: &Totals{
			Min: backoff.Human(st.Total.Min), Mean: backoff.Human(st.Total.Mean), Max: backoff.Human(st.Total.Max),
			P50: backoff.Human(st.Total.P50), P90: backoff.Human(st.Total.P90), P99: backoff.Human(st.Total.P99),
			Estimated: st.Total.Estimated,
		},
		Command: command(v),
		Snippet: snippet(in),
	}
	for i, s := range st.Retries {
		r.Rows[i] = Row{
			Retry: s.Retry, Delay: backoff.Human(s.Delay), Capped: s.Capped,
			Min: backoff.Human(s.Min), Mean: backoff.Human(s.Mean), Max: backoff.Human(s.Max),
			TotalMax: backoff.Human(s.TotalMax),
			MinMs:    ms(s.Min), MeanMs: ms(s.Mean), MaxMs: ms(s.Max), TotalMaxMs: ms(s.TotalMax),
		}
	}
	r.Chart = scale(max(st.Total.Max, in.deadline))
	if in.deadline > 0 {
		f := st.Deadline(in.deadline)
		r.Verdict = &Verdict{
			Deadline: backoff.Human(in.deadline), DeadlineMs: ms(in.deadline),
			WorstCaseFits: f.WorstCaseFits, P99Fits: st.Total.P99 <= in.deadline,
			RetriesWithin: f.RetriesWithin, Retries: in.policy.Retries,
		}
	}
	j, _ := json.Marshal(st)
	r.JSON = string(j)
	r.CSV = "retry\n"
	return r
}

// SolveResult is the outcome of Solve: the new text of the solved field, or
// an error message.
type SolveResult struct {
	Field string `json:"field,omitempty"`
	Value string `json:"value,omitempty"`
	Error string `json:"error,omitempty"`
}

// Solve finds the largest value of the field param ("initial",
// "multiplier" or "retries") for which the inputs v fit their deadline.
func Solve(v map[string]string, param string) SolveResult {
	in, errs := parse(v)
	for _, f := range Fields {
		if e, ok := errs[f]; ok {
			return SolveResult{Error: e}
		}
	}
	if in.deadline <= 0 {
		return SolveResult{Error: "calc: solving needs a deadline"}
	}
	var p backoff.Param
	switch param {
	case "initial":
		p = backoff.ParamInitial
	case "multiplier":
		p = backoff.ParamMultiplier
	case "retries":
		p = backoff.ParamRetries
	default:
		return SolveResult{Error: fmt.Sprintf("calc: cannot solve for %q; want initial, multiplier or retries", param)}
	}
	sol, err := backoff.Solve(in.policy, p, in.deadline, in.target, in.seed)
	if err != nil {
		return SolveResult{Error: err.Error()}
	}
	switch p {
	case backoff.ParamInitial:
		return SolveResult{Field: param, Value: sol.Initial.Truncate(time.Millisecond).String()}
	case backoff.ParamMultiplier:
		return SolveResult{Field: param, Value: strconv.FormatFloat(sol.Multiplier, 'g', 6, 64)}
	default:
		return SolveResult{Field: param, Value: strconv.Itoa(sol.Retries)}
	}
}

// command returns the `again calc` command line for the inputs as typed.
func command(v map[string]string) string {
	var b strings.Builder
	b.WriteString("again calc")
	for _, f := range Fields {
		s, ok := v[f]
		if !ok || s == "" {
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

var jitterConst = map[backoff.Jitter]string{
	backoff.Full: "backoff.Full", backoff.None: "backoff.None", backoff.Equal: "backoff.Equal",
	backoff.Proportional: "backoff.Proportional", backoff.Decorrelated: "backoff.Decorrelated",
}

// snippet returns ready-to-paste Go code that retries with the policy.
func snippet(in input) string {
	p := in.policy
	var b strings.Builder
	b.WriteString("policy := backoff.Policy{\n")
	fmt.Fprintf(&b, "\tInitial:    %s,\n", goDuration(p.Initial))
	fmt.Fprintf(&b, "\tMultiplier: %s,\n", strconv.FormatFloat(p.EffectiveMultiplier(), 'g', -1, 64))
	if p.Max > 0 {
		fmt.Fprintf(&b, "\tMax:        %s,\n", goDuration(p.Max))
	}
	fmt.Fprintf(&b, "\tRetries:    %d,\n", p.Retries)
	fmt.Fprintf(&b, "\tJitter:     %s,\n", jitterConst[p.Jitter])
	if p.Jitter == backoff.Proportional {
		fmt.Fprintf(&b, "\tJitterFactor: %s,\n", strconv.FormatFloat(p.EffectiveJitterFactor(), 'g', -1, 64))
	}
	b.WriteString("}\n")
	if in.deadline > 0 {
		fmt.Fprintf(&b, "ctx, cancel := context.WithTimeout(ctx, %s)\ndefer cancel()\n", goDuration(in.deadline))
	}
	b.WriteString("err := retry.Do(ctx, policy, func(ctx context.Context) error {\n\treturn callTheService(ctx)\n})\n")
	return b.String()
}
