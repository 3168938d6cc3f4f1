package calc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/backoff/plan"
)

// Millis is a duration that JSON and CSV show as a number of milliseconds,
// written exactly from the nanoseconds ("500", "45750", "0.000001"), never in
// exponent form and never negative for the non-negative durations a report
// holds, the saturated largest duration included ("9223372036854.775807").
type Millis time.Duration

// String returns the milliseconds as a decimal number without trailing zeros.
func (m Millis) String() string { return string(m.append(nil)) }

// append appends String's text to b.
func (m Millis) append(b []byte) []byte {
	ns := int64(m)
	u := uint64(ns)
	if ns < 0 {
		b = append(b, '-')
		u = uint64(-(ns + 1)) + 1 // -MinInt64 does not fit an int64
	}
	b = strconv.AppendUint(b, u/1e6, 10)
	if frac := u % 1e6; frac != 0 {
		var digits [7]byte // "." and six digits, the last non-zero kept
		digits[0] = '.'
		for i := 6; i > 0; i-- {
			digits[i] = byte('0' + frac%10)
			frac /= 10
		}
		end := 7
		for digits[end-1] == '0' {
			end--
		}
		b = append(b, digits[:end]...)
	}
	return b
}

// MarshalJSON writes the number of milliseconds as a JSON number.
func (m Millis) MarshalJSON() ([]byte, error) { return m.append(nil), nil }

// Report is the calculator's result for one Input. Its JSON form (WriteJSON)
// is
//
//	{"policy": {"initial_ms": 500, "multiplier": 2, "max_ms": 30000, "retries": 8, "jitter": "full"},
//	 "solved": {"parameter": "initial", "value": 500},
//	 "retries": [{"retry": 1, "delay_ms": 500, "capped": false, "min_ms": 0, "mean_ms": 250,
//	              "max_ms": 500, "total_min_ms": 0, "total_mean_ms": 250, "total_max_ms": 500}, ...],
//	 "total": {"min_ms": 0, "mean_ms": 45750, "max_ms": 91500, "p50_ms": 45750, "p90_ms": ...,
//	           "p99_ms": ..., "min_human": "0 ms", "mean_human": "45.8 s", "max_human": "1 min 32 s",
//	           "p50_human": ..., "p90_human": ..., "p99_human": ...,
//	           "estimated": [], "monte_carlo": {"seed": 1, "mean_std_err_ms": 12.5}},
//	 "deadline": {"deadline_ms": 60000, "deadline_human": "1 min", "worst_case_fits": false,
//	              "p99_fits": false, "retries_within_deadline": 7}}
//
//	 "classes": [{"name": "overload", "policy": {...}, "cost": 1, "attempts": 6,
//	              "call_capped": true, "retries": [...], "total": {...}}, ...]}
//
// with "solved" only when the input asked to solve, "deadline" only when it
// gave one, "classes" only when it gave classes (see ClassReport) and "monte_carlo" only when some value is estimated ("estimated"
// names which: "mean", "p50", "p90", "p99"; a row whose mean is estimated
// has "mean_estimated": true). The CLI's table and Markdown and the web page
// render this one value, so they cannot disagree about what is estimated or
// what fits. A Report is not modified by its methods.
type Report struct {
	Policy   PolicyReport    `json:"policy"`
	Solved   *SolvedReport   `json:"solved,omitempty"`
	Retries  []RetryReport   `json:"retries"`
	Total    TotalReport     `json:"total"`
	Deadline *DeadlineReport `json:"deadline,omitempty"`
	// Classes has one entry per class of Input.Classes, in their order:
	// the schedule each class of failure follows.
	Classes []ClassReport `json:"classes,omitempty"`

	input Input
}

// PolicyReport is the policy the report describes (after solving).
type PolicyReport struct {
	Initial    Millis  `json:"initial_ms"`
	Multiplier float64 `json:"multiplier"`
	Max        Millis  `json:"max_ms"` // 0 means no cap
	Retries    int     `json:"retries"`
	Jitter     string  `json:"jitter"` // as ParseJitter reads it, e.g. "proportional:0.25"
}

// SolvedReport names the parameter Solve searched for and the value found:
// milliseconds for "initial", the factor for "multiplier", the count for
// "retries".
type SolvedReport struct {
	Parameter string  `json:"parameter"`
	Value     float64 `json:"value"`
}

// RetryReport is one retry's row: its delay and the running totals.
// For decorrelated jitter Delay is the retry's largest possible delay.
// MeanEstimated marks a Mean (and so the TotalMeans from this row on) that
// is a Monte Carlo estimate: a capped retry under decorrelated jitter.
type RetryReport struct {
	Retry     int    `json:"retry"`
	Delay     Millis `json:"delay_ms"`
	Capped    bool   `json:"capped"`
	Min       Millis `json:"min_ms"`
	Mean      Millis `json:"mean_ms"`
	Max       Millis `json:"max_ms"`
	TotalMin  Millis `json:"total_min_ms"`
	TotalMean Millis `json:"total_mean_ms"`
	TotalMax  Millis `json:"total_max_ms"`

	MeanEstimated bool `json:"mean_estimated,omitempty"`
}

// The names of the totals that Total.Estimated may list.
const (
	EstimatedMean = "mean"
	EstimatedP50  = "p50"
	EstimatedP90  = "p90"
	EstimatedP99  = "p99"
)

// TotalReport describes the total wait over all retries, with each value
// also in Human form.
type TotalReport struct {
	Min       Millis `json:"min_ms"`
	Mean      Millis `json:"mean_ms"`
	Max       Millis `json:"max_ms"`
	P50       Millis `json:"p50_ms"`
	P90       Millis `json:"p90_ms"`
	P99       Millis `json:"p99_ms"`
	MinHuman  string `json:"min_human"`
	MeanHuman string `json:"mean_human"`
	MaxHuman  string `json:"max_human"`
	P50Human  string `json:"p50_human"`
	P90Human  string `json:"p90_human"`
	P99Human  string `json:"p99_human"`
	// Estimated names the values above that are Monte Carlo estimates
	// (EstimatedMean, EstimatedP50, ...), in that order; it is empty, never
	// nil, when every value is exact. Min and Max are always exact.
	Estimated []string `json:"estimated"`
	// MonteCarlo says how the estimates were made; nil when none was.
	MonteCarlo *MonteCarloReport `json:"monte_carlo,omitempty"`
}

// MeanEstimated reports whether Mean is a Monte Carlo estimate.
func (t *TotalReport) MeanEstimated() bool { return slices.Contains(t.Estimated, EstimatedMean) }

// PercentilesEstimated reports whether P50, P90 and P99 are Monte Carlo
// estimates.
func (t *TotalReport) PercentilesEstimated() bool { return slices.Contains(t.Estimated, EstimatedP99) }

// MonteCarloReport describes the simulation behind the estimated values.
type MonteCarloReport struct {
	// Seed is the --seed that reproduces the estimates exactly.
	Seed uint64 `json:"seed"`
	// MeanStdErr is the standard error of the estimated mean: the true mean
	// lies within ±2 of it about 95 % of the time. 0 when the mean is exact.
	MeanStdErr Millis `json:"mean_std_err_ms"`
}

// DeadlineReport compares the total wait with the deadline as the retry
// loops meet it (plan.DeadlineFit): a schedule fits when its total wait
// ends at least backoff.DeadlineReserve before the deadline, the time the
// loops keep for the last attempt; otherwise they shorten the wait that
// would end later, and RetriesWithin counts the retries made, that one
// included. WorstCaseFits and RetriesWithin are about the worst case,
// P99Fits about the 99th percentile.
type DeadlineReport struct {
	Deadline Millis `json:"deadline_ms"`
	// DeadlineHuman is the deadline as given, in HumanExact form: "1.5 ms",
	// not Human's rounded "2 ms".
	DeadlineHuman string `json:"deadline_human"`
	WorstCaseFits bool   `json:"worst_case_fits"`
	P99Fits       bool   `json:"p99_fits"`
	RetriesWithin int    `json:"retries_within_deadline"`
}

// SolveError reports that solving found no answer to show. Err is
// plan.ErrUnsolvable (no value fits), plan.ErrUnbounded (every value
// fits) or ErrTooManyRetries (the answer is more retries than the
// calculator analyses; Retries holds it).
type SolveError struct {
	Param    plan.Param
	Target   plan.Target
	Deadline time.Duration
	Retries  int
	Err      error
}

// ErrTooManyRetries is the Err of a SolveError whose answer is more than
// MaxRetries retries.
var ErrTooManyRetries = errors.New("calc: the answer is more retries than the calculator analyses")

// Detail returns the message without the package prefix, such as "no initial
// delay keeps the worst-case total wait within 1 min".
func (e *SolveError) Detail() string {
	what := fmt.Sprintf("%s total wait within %s", targetName(e.Target), HumanExact(e.Deadline))
	switch {
	case errors.Is(e.Err, plan.ErrUnbounded) && e.Param == plan.ParamRetries && e.Target == plan.TargetP99:
		// The p99 search stops at the most retries Stats analyses: say so
		// rather than claim that every number fits.
		return fmt.Sprintf("even %d retries, the most the calculator analyses, keep the %s; it checks no more, so it has no largest number to show", MaxRetries, what)
	case errors.Is(e.Err, plan.ErrUnbounded):
		return fmt.Sprintf("every %s keeps the %s, so there is no largest one to show", paramName(e.Param), what)
	case errors.Is(e.Err, ErrTooManyRetries):
		return fmt.Sprintf("up to %d retries keep the %s, more than the %d the calculator shows; raise --initial or --max", e.Retries, what, MaxRetries)
	}
	return fmt.Sprintf("no %s keeps the %s", paramName(e.Param), what)
}

func (e *SolveError) Error() string { return "calc: " + e.Detail() }

// Unwrap returns Err.
func (e *SolveError) Unwrap() error { return e.Err }

// Compute analyses in: it solves for the requested parameter first, if any,
// then computes the statistics of the resulting policy. It fails only when
// solving has no answer to show, with a *SolveError.
func Compute(in Input) (*Report, error) {
	p := in.Policy
	var solved *SolvedReport
	if in.Solve {
		sp, err := plan.Solve(p, in.Param, in.Deadline, in.Target, in.Seed)
		if sp.Retries > MaxRetries && err == nil {
			err = ErrTooManyRetries
		}
		if errors.Is(err, plan.ErrUnsolvable) || errors.Is(err, plan.ErrUnbounded) || errors.Is(err, ErrTooManyRetries) {
			return nil, &SolveError{Param: in.Param, Target: in.Target, Deadline: in.Deadline, Retries: sp.Retries, Err: err}
		}
		if err != nil {
			// Parse rules out every other failure; say so if one slips through.
			return nil, fmt.Errorf("calc: solving for %s: %w", in.Param, err)
		}
		solved = &SolvedReport{Parameter: in.Param.String()}
		switch in.Param {
		case plan.ParamInitial:
			solved.Value = float64(toUser(sp.Initial)) / float64(time.Millisecond)
		case plan.ParamMultiplier:
			sp.Multiplier = shortMultiplier(sp, in)
			solved.Value = sp.Multiplier
		case plan.ParamRetries:
			solved.Value = float64(toUser(sp.Retries))
		}
		p = sp
	}
	s := plan.Analyze(p, in.Seed)
	r := &Report{
		Policy: PolicyReport{
			Initial:    Millis(toUser(p.Initial)),
			Multiplier: p.EffectiveMultiplier(),
			Max:        Millis(toUser(p.Max)),
			Retries:    toUser(p.Retries),
			Jitter:     p.JitterText(),
		},
		Solved:  solved,
		Retries: retryRows(s),
		Total:   totalReport(s, in.Seed),
		input:   in,
	}
	r.input.Policy = p
	if len(in.Classes) > 0 {
		r.Classes = classReports(in.Classes, p, in.Seed)
	}
	if in.Deadline > 0 {
		f := s.Deadline(in.Deadline)
		r.Deadline = &DeadlineReport{
			Deadline: Millis(f.Deadline), DeadlineHuman: HumanExact(f.Deadline),
			WorstCaseFits: f.WorstCaseFits, P99Fits: f.P99Fits, RetriesWithin: f.RetriesWithin,
		}
	}
	return r, nil
}

// retryRows returns the rows of the analysed schedule s.
func retryRows(s plan.Stats) []RetryReport {
	rows := make([]RetryReport, len(s.Retries))
	for i, rs := range s.Retries {
		rows[i] = RetryReport{
			Retry: rs.Retry, Delay: Millis(rs.Delay), Capped: rs.Capped,
			Min: Millis(rs.Min), Mean: Millis(rs.Mean), Max: Millis(rs.Max),
			TotalMin: Millis(rs.TotalMin), TotalMean: Millis(rs.TotalMean), TotalMax: Millis(rs.TotalMax),
			MeanEstimated: s.Total.Estimated && rs.Capped,
		}
	}
	return rows
}

// totalReport returns the totals of the analysed schedule s, whose Monte
// Carlo estimates, if any, were drawn with seed.
func totalReport(s plan.Stats, seed uint64) TotalReport {
	st := s.Total
	t := TotalReport{
		Min: Millis(st.Min), Mean: Millis(st.Mean), Max: Millis(st.Max),
		P50: Millis(st.P50), P90: Millis(st.P90), P99: Millis(st.P99),
		MinHuman: Human(st.Min), MeanHuman: Human(st.Mean), MaxHuman: Human(st.Max),
		P50Human: Human(st.P50), P90Human: Human(st.P90), P99Human: Human(st.P99),
		Estimated: []string{},
	}
	if st.Estimated {
		// The mean is simulated only where the cap clamps decorrelated
		// delays (StdErr > 0); without that it is exact, as plan.Total says.
		if st.StdErr > 0 {
			t.Estimated = append(t.Estimated, EstimatedMean)
		}
		t.Estimated = append(t.Estimated, EstimatedP50, EstimatedP90, EstimatedP99)
		t.MonteCarlo = &MonteCarloReport{Seed: seed, MeanStdErr: Millis(st.StdErr)}
	}
	return t
}

// shortMultiplier returns the solved multiplier sp.Multiplier, an exact
// float64 such as 1.0000000009999999, as the shortest decimal that is no
// larger (so it still fits: a smaller multiplier never lengthens the wait)
// and gives the same solved statistic to the microsecond (the finest unit
// the calculator shows), or to the solver's own precision for a p99 target.
// Reports then show a value such as 1.000000001 instead of the float64's
// rounding noise, and every number in the report is computed with it.
func shortMultiplier(sp backoff.Policy, in Input) float64 {
	exact := sp.Multiplier
	stat := func(m float64) time.Duration {
		q := sp
		q.Multiplier = m
		if in.Target == plan.TargetP99 {
			return plan.Analyze(q, in.Seed).Total.P99
		}
		return plan.Analyze(q, in.Seed).Total.Max
	}
	want := stat(exact)
	tolerance := time.Microsecond
	if in.Target == plan.TargetP99 {
		tolerance = max(tolerance, want>>14) // the p99 search stops at this precision
	}
	for digits := 1; digits <= 17; digits++ {
		m := truncate(exact, digits)
		if m >= 1 && want-stat(m) <= tolerance {
			return m
		}
	}
	return exact
}

// truncate returns x (>= 1) cut to the given number of significant decimal
// digits, rounding toward zero, so that the result never exceeds x.
func truncate(x float64, digits int) float64 {
	s := strconv.FormatFloat(x, 'e', 20, 64) // enough digits to cut from
	mantissa, exp, _ := strings.Cut(s, "e")
	mantissa = strings.Replace(mantissa, ".", "", 1)[:digits]
	t, err := strconv.ParseFloat(mantissa[:1]+"."+mantissa[1:]+"e"+exp, 64)
	if err != nil || t > x {
		return x
	}
	return t
}

// paramName returns a Param in words for messages.
func paramName(p plan.Param) string {
	switch p {
	case plan.ParamMultiplier:
		return "multiplier"
	case plan.ParamRetries:
		return "number of retries"
	}
	return "initial delay"
}

func targetName(t plan.Target) string {
	if t == plan.TargetP99 {
		return "99th-percentile"
	}
	return "worst-case"
}

// WriteJSON writes the report as indented JSON followed by a newline.
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// CSVHeader is the first line WriteCSV writes: the fields of a JSON row.
const CSVHeader = "retry,delay_ms,capped,min_ms,mean_ms,max_ms,total_min_ms,total_mean_ms,total_max_ms"

// CSVSummaryHeader starts WriteCSV's second table, after a blank line.
const CSVSummaryHeader = "field,value"

// WriteCSV writes two tables separated by an empty line. The first is a
// header line (CSVHeader) and one line per retry, with the same fields and
// numbers as the JSON rows. The second (CSVSummaryHeader) has one line per
// value of the rest of the report, named by its JSON path: "total.mean_ms",
// "total.p99_ms", "total.estimated" (the names of the estimated values,
// separated by spaces), "total.monte_carlo.seed", "deadline.p99_fits",
// "solved.value", "classes.0.total.max_ms" and so on, each only when the
// JSON has it. With classes a third table follows, after another empty
// line: CSVClassHeader and each class's rows, led by its name. Lines end
// with "\n"; no value needs quoting (a class's name is one of
// cmdutil's or retry.AWSClasses', plain words).
func (r *Report) WriteCSV(w io.Writer) error {
	b := make([]byte, 0, 64*(len(r.Retries)+1)+512)
	b = append(b, CSVHeader+"\n"...)
	for _, x := range r.Retries {
		b = appendCSVRow(b, x)
	}
	b = append(b, "\n"+CSVSummaryHeader+"\n"...)
	for _, kv := range r.summary() {
		b = append(append(append(append(b, kv[0]...), ','), kv[1]...), '\n')
	}
	if len(r.Classes) > 0 {
		b = append(b, "\n"+CSVClassHeader+"\n"...)
		for _, c := range r.Classes {
			for _, x := range c.Retries {
				b = appendCSVRow(append(append(b, c.Name...), ','), x)
			}
		}
	}
	_, err := w.Write(b)
	return err
}

// appendCSVRow appends the CSV line of the retry x.
func appendCSVRow(b []byte, x RetryReport) []byte {
	b = strconv.AppendInt(b, int64(x.Retry), 10)
	b = x.Delay.append(append(b, ','))
	b = append(append(b, ','), strconv.FormatBool(x.Capped)...)
	for _, m := range [...]Millis{x.Min, x.Mean, x.Max, x.TotalMin, x.TotalMean, x.TotalMax} {
		b = m.append(append(b, ','))
	}
	return append(b, '\n')
}

// CSVClassHeader starts WriteCSV's third table, the classes' rows, when
// the report has classes: a row of the first table led by the class's name.
const CSVClassHeader = "class," + CSVHeader

// summary returns the report's values other than the rows as pairs of
// JSON path and text, in the JSON's order, for WriteCSV.
func (r *Report) summary() [][2]string {
	t := r.Total
	out := [][2]string{
		{"total.min_ms", t.Min.String()}, {"total.mean_ms", t.Mean.String()}, {"total.max_ms", t.Max.String()},
		{"total.p50_ms", t.P50.String()}, {"total.p90_ms", t.P90.String()}, {"total.p99_ms", t.P99.String()},
		{"total.estimated", strings.Join(t.Estimated, " ")},
	}
	if mc := t.MonteCarlo; mc != nil {
		out = append(out, [2]string{"total.monte_carlo.seed", strconv.FormatUint(mc.Seed, 10)},
			[2]string{"total.monte_carlo.mean_std_err_ms", mc.MeanStdErr.String()})
	}
	if d := r.Deadline; d != nil {
		out = append(out, [2]string{"deadline.deadline_ms", d.Deadline.String()},
			[2]string{"deadline.worst_case_fits", strconv.FormatBool(d.WorstCaseFits)},
			[2]string{"deadline.p99_fits", strconv.FormatBool(d.P99Fits)},
			[2]string{"deadline.retries_within_deadline", strconv.Itoa(d.RetriesWithin)})
	}
	if s := r.Solved; s != nil {
		out = append(out, [2]string{"solved.parameter", s.Parameter},
			[2]string{"solved.value", strconv.FormatFloat(s.Value, 'f', -1, 64)})
	}
	for i, c := range r.Classes {
		k := "classes." + strconv.Itoa(i) + "."
		p, t := c.Policy, c.Total
		out = append(out, [2]string{k + "name", c.Name},
			[2]string{k + "policy.initial_ms", p.Initial.String()},
			[2]string{k + "policy.multiplier", strconv.FormatFloat(p.Multiplier, 'f', -1, 64)},
			[2]string{k + "policy.max_ms", p.Max.String()},
			[2]string{k + "policy.retries", strconv.Itoa(p.Retries)},
			[2]string{k + "policy.jitter", p.Jitter},
			[2]string{k + "cost", strconv.FormatFloat(c.Cost, 'f', -1, 64)},
			[2]string{k + "call_capped", strconv.FormatBool(c.CallCapped)},
			[2]string{k + "total.min_ms", t.Min.String()}, [2]string{k + "total.mean_ms", t.Mean.String()},
			[2]string{k + "total.max_ms", t.Max.String()}, [2]string{k + "total.p50_ms", t.P50.String()},
			[2]string{k + "total.p90_ms", t.P90.String()}, [2]string{k + "total.p99_ms", t.P99.String()},
			[2]string{k + "total.estimated", strings.Join(t.Estimated, " ")})
	}
	return out
}
