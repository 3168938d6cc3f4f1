// Package page computes everything the calculator page shows for one set of
// inputs.
//
// It speaks the page's language. It runs inside the browser as WebAssembly
// (see web/wasm, in a Web Worker) and in ordinary tests, so the page's
// numbers are the Go code's numbers and its words come from Go, not from
// JavaScript rewriting English text: from the page's catalogue
// (web/internal/catalog), the go.* strings, and internal/calc's own
// messages, whose Russian forms the catalogue holds too.
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
	"github.com/again-go/again/backoff/plan"
	"github.com/again-go/again/cmd/again/internal/calc"
)

// FieldTimeout is the page's one input that `again calc` does not take:
// the time each attempt may itself run before it fails. It is a key of the
// inputs and of the page's URL, like the flag names.
const FieldTimeout = "timeout"

// Fields returns the page's inputs by their command-line flag names, in the
// order the command line and the URL query show them, with FieldTimeout
// after the deadline.
func Fields() []string {
	return []string{"initial", "multiplier", "max", "retries", "jitter", "deadline", FieldTimeout, "target", "seed"}
}

// Result is what the page shows for one set of inputs, with every text in
// the language asked for. When Errors is not empty, only Errors and
// Announce are set and the page greys out its previous result.
type Result struct {
	Errors   []Message `json:"errors,omitempty"`
	Summary  *Summary  `json:"summary,omitempty"`
	Rows     []Row     `json:"rows,omitempty"` // the first MaxRows retries
	Retries  int       `json:"retries"`        // how many retries the schedule has
	MoreRows string    `json:"moreRows,omitempty"`
	Chart    *Chart    `json:"chart,omitempty"`
	// Classes are the schedules of the classes of failure the per-class
	// inputs give (see ClassFields), overloads first; none without them.
	Classes []ClassResult `json:"classes,omitempty"`
	Command string        `json:"command,omitempty"` // the equivalent `again calc` command
	Snippet string        `json:"snippet,omitempty"` // Go code configuring package retry
	// Announce is the one sentence a screen reader hears after an edit:
	// the headline and the verdict, or the first error.
	Announce string `json:"announce"`
}

// Message is one input's error, in the page's language, without the flag
// name (the page shows it under the field): "must be a whole number from
// 0 to 100000, got -1". Field is empty for an error of no one field.
type Message struct {
	Field string `json:"field"`
	Text  string `json:"text"`
}

// Summary is the page's headline: the worst case and the mean first, then
// the deadline verdict, then the details.
type Summary struct {
	Worst    string `json:"worst"`
	Mean     string `json:"mean"`
	Shortest string `json:"shortest"`
	P50      string `json:"p50"`
	P90      string `json:"p90"`
	P99      string `json:"p99"`
	// MeanEstimated and PercentilesEstimated mark the numbers that are a
	// Monte Carlo estimate; Estimate says so in words ("" when none is).
	MeanEstimated        bool   `json:"meanEstimated"`
	PercentilesEstimated bool   `json:"percentilesEstimated"`
	Estimate             string `json:"estimate,omitempty"`
	// Attempts says what the totals include besides the waits, when a
	// per-attempt timeout is set: "including 9 attempts × 2 s".
	Attempts string   `json:"attempts,omitempty"`
	Verdict  *Verdict `json:"verdict,omitempty"`
	// NoRetries says that the schedule has no retries ("" otherwise).
	NoRetries string `json:"noRetries,omitempty"`
}

// Verdict compares the worst case with the deadline and states the gap.
type Verdict struct {
	Fits bool `json:"fits"`
	// Headline is "Misses the 1 min deadline by 31.5 s" or "Fits the 1 min
	// deadline with 8.5 s to spare", the deadline as given (Lang.Exact:
	// "1.5 ms", never rounded to "2 ms").
	Headline string `json:"headline"`
	// Detail says how many retries are sure to start in time, when not all
	// are, and whether the 99th percentile fits.
	Detail     string  `json:"detail"`
	P99Fits    bool    `json:"p99Fits"`
	DeadlineMs float64 `json:"deadlineMs"`
	Deadline   string  `json:"deadline"`
	// RetriesWithin is how many retries start within the deadline in the
	// worst case.
	RetriesWithin int `json:"retriesWithin"`
}

// MaxRows is the most retries the page's table shows; the CSV and JSON
// downloads (see Export) always hold every retry. A browser laying out 100,000 rows
// stops responding, and nobody reads that far.
const MaxRows = 1000

// Row is one retry of the table, in the page's language.
type Row struct {
	Retry    int    `json:"retry"`
	Delay    string `json:"delay"`
	Capped   bool   `json:"capped"`
	Min      string `json:"min"`
	Mean     string `json:"mean"`
	Max      string `json:"max"`
	TotalMax string `json:"totalMax"` // when the retry starts at the latest
}

// attempts holds the per-attempt timeout: the totals then include the time
// the attempts themselves take, each running until it times out.
type attempts struct{ timeout time.Duration }

// before returns the time n attempts take before retry n starts.
func (a attempts) before(n int) time.Duration { return mulSat(a.timeout, n) }

// mulSat returns d × n, saturating at the largest Duration.
func mulSat(d time.Duration, n int) time.Duration {
	if d <= 0 || n <= 0 {
		return 0
	}
	if d > maxDuration/time.Duration(n) {
		return maxDuration
	}
	return d * time.Duration(n)
}

// addSat returns a + b for non-negative durations, saturating.
func addSat(a, b time.Duration) time.Duration {
	if a > maxDuration-b {
		return maxDuration
	}
	return a + b
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// input is the parsed form of the page's fields.
type input struct {
	calc.Input
	timeout time.Duration
}

// values returns the page's inputs that are set, as internal/calc takes
// them, in Go syntax (see normalize). An empty field means the command
// line's default, as an absent flag does; the page shows that default as
// the field's placeholder. The timeout is the page's own and left out.
func values(v map[string]string) calc.Values {
	out := calc.Values{}
	for _, f := range Fields() {
		if s := v[f]; strings.TrimSpace(s) != "" && f != FieldTimeout {
			out[f] = normalize(f, s)
		}
	}
	return out
}

// Defaults returns the text of each field's default: what an empty field,
// like an absent flag of `again calc`, stands for. The timeout's is empty:
// no per-attempt timeout.
func Defaults() map[string]string {
	d := calc.DefaultValues()
	out := map[string]string{}
	for _, f := range Fields() {
		out[f] = d[f]
	}
	return out
}

// parse validates the inputs with internal/calc. Its errors come one per
// wrong field: each field is also checked alone, so that every wrong field
// is marked at once and not only the first one the command line would
// report.
func parse(v map[string]string, l Lang) (input, []Message) {
	vals := values(v)
	var errs []Message
	for _, f := range Fields() {
		if s, ok := vals[f]; ok {
			if _, err := calc.Parse(calc.Values{f: s}); err != nil {
				errs = append(errs, message(err, v, l))
			}
		}
	}
	var timeout time.Duration
	if s := strings.TrimSpace(v[FieldTimeout]); s != "" {
		d, err := calc.ParseDuration(normalize(FieldTimeout, s))
		if err != nil {
			m := message(err, map[string]string{"": s}, l)
			m.Field = FieldTimeout
			errs = append(errs, m)
		}
		timeout = d
	}
	classes, cerrs := parseClasses(v, l)
	errs = append(errs, cerrs...)
	if len(errs) > 0 {
		return input{}, errs
	}
	in, err := calc.Parse(vals)
	if err != nil {
		return input{}, []Message{message(err, v, l)}
	}
	in.Classes = classes
	return input{Input: in, timeout: timeout}, nil
}

// Compute returns the page's result for the inputs v, keyed by flag name,
// in language l. Missing and empty keys take the command line's defaults.
func Compute(v map[string]string, l Lang) Result {
	in, errs := parse(v, l)
	if len(errs) > 0 {
		return Result{Errors: errs, Announce: errs[0].Text}
	}
	rep, err := calc.Compute(in.Input)
	if err != nil { // only solving fails, and Compute does not solve
		return Result{Errors: []Message{{Text: err.Error()}}, Announce: err.Error()}
	}
	a := attempts{in.timeout}
	s := summary(in, rep, a, l)
	r := Result{
		Summary: s,
		Rows:    make([]Row, min(len(rep.Retries), MaxRows)),
		Retries: len(rep.Retries),
		Chart:   chart(in, rep, a, s.Verdict, l),
		Classes: classResults(rep, a, l),
		Command: command(v) + classCommand(v),
		Snippet: snippet(in),
	}
	for i, x := range rep.Retries[:len(r.Rows)] {
		r.Rows[i] = row(x, a, l)
	}
	if r.Retries > len(r.Rows) {
		r.MoreRows = l.f("go.moreRows", len(r.Rows), l.retriesOf(r.Retries))
	}
	r.Announce = s.announce(l)
	return r
}

// row returns the table's row of the retry x; a is the attempts' own time.
func row(x calc.RetryReport, a attempts, l Lang) Row {
	return Row{
		Retry: x.Retry, Delay: l.Duration(time.Duration(x.Delay)), Capped: x.Capped,
		Min: l.Duration(time.Duration(x.Min)), Mean: l.Duration(time.Duration(x.Mean)), Max: l.Duration(time.Duration(x.Max)),
		TotalMax: l.Duration(addSat(time.Duration(x.TotalMax), a.before(x.Retry))),
	}
}

// summary returns the headline, the details and the verdict.
func summary(in input, rep *calc.Report, a attempts, l Lang) *Summary {
	t := rep.Total
	n := len(rep.Retries)
	own := a.before(n + 1) // every attempt, the last one included, runs until it times out
	total := func(m calc.Millis) string { return l.Duration(addSat(time.Duration(m), own)) }
	s := &Summary{
		Worst: total(t.Max), Mean: total(t.Mean), Shortest: total(t.Min),
		P50: total(t.P50), P90: total(t.P90), P99: total(t.P99),
	}
	// Which numbers are estimates is the report's to say, as again calc
	// says it: under decorrelated jitter the mean is exact unless the cap
	// clamps a delay.
	s.MeanEstimated, s.PercentilesEstimated = t.MeanEstimated(), t.PercentilesEstimated()
	switch {
	case s.MeanEstimated:
		s.Estimate = l.f("go.estimate.mean", in.Seed)
	case s.PercentilesEstimated:
		s.Estimate = l.f("go.estimate.percentiles", in.Seed)
	}
	if in.timeout > 0 {
		s.Attempts = l.f("go.attemptsOwn", n+1, l.Exact(in.timeout))
	}
	if n == 0 {
		s.NoRetries = l.t("go.noRetries")
	}
	if in.Deadline > 0 {
		s.Verdict = verdict(in, rep, a, own, l)
	}
	return s
}

// verdict compares the worst case, attempts included, with the deadline,
// as the retry loops meet it: by backoff.FitDeadline, whose reserve is the
// attempt timeout (every attempt runs until it times out).
func verdict(in input, rep *calc.Report, a attempts, own time.Duration, l Lang) *Verdict {
	dl := in.Deadline
	worst := addSat(time.Duration(rep.Total.Max), own)
	p99 := addSat(time.Duration(rep.Total.P99), own)
	// Where the worst case ends, with the time kept for the last attempt:
	// its timeout, already in own, or without one the loops' reserve.
	end := worst
	if a.timeout <= 0 {
		end = addSat(worst, backoff.DeadlineReserve)
	}
	// The schedule fits when its waits leave the last attempt its timeout:
	// that is, when the worst case, the last attempt's timeout included,
	// ends by the deadline.
	within, fits := 0, true
	now := a.before(1)
	for _, x := range rep.Retries {
		w, ok := backoff.FitDeadline(time.Duration(x.Max), dl-now, a.timeout, false)
		if !ok {
			fits = false
			break
		}
		fits = fits && w == time.Duration(x.Max)
		within++
		now = addSat(now, addSat(w, a.timeout))
	}
	v := &Verdict{
		Fits: fits && worst <= dl, P99Fits: p99 <= dl, DeadlineMs: ms(dl), Deadline: l.Exact(dl), RetriesWithin: within,
	}
	if d := rep.Deadline; a.timeout == 0 && d != nil {
		// Without attempts of their own the report has the verdict, as
		// again calc prints it; TestVerdictIsCalcs checks the two agree.
		v.Fits, v.P99Fits, v.RetriesWithin = d.WorstCaseFits, d.P99Fits, d.RetriesWithin
	}
	if v.Fits {
		if gap := dl - end; gap <= 0 {
			v.Headline = l.f("go.verdict.fitsExactly", v.Deadline)
		} else {
			v.Headline = l.f("go.verdict.fitsSpare", v.Deadline, l.Duration(gap))
		}
	} else {
		v.Headline = l.f("go.verdict.misses", v.Deadline, l.Duration(max(end-dl, 0)))
	}
	n := len(rep.Retries)
	var parts []string
	if within := v.RetriesWithin; within < n {
		switch {
		case within == 0:
			parts = append(parts, l.t("go.verdict.noneInTime"))
		case within == 1:
			parts = append(parts, l.f("go.verdict.firstInTime", l.retriesOf(n)))
		default:
			parts = append(parts, l.f("go.verdict.someInTime", within, l.retriesOf(n)))
		}
	}
	if !v.Fits || !v.P99Fits {
		if v.P99Fits {
			parts = append(parts, l.f("go.verdict.p99Fits", l.Duration(p99)))
		} else {
			parts = append(parts, l.f("go.verdict.p99Misses", l.Duration(p99)))
		}
	}
	v.Detail = strings.Join(parts, " ")
	return v
}

// announce is the sentence the page's live region reads out.
func (s *Summary) announce(l Lang) string {
	text := l.f("go.announce", s.Worst, s.Mean)
	if s.Verdict != nil {
		text += " " + s.Verdict.Headline + "."
	}
	return text
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
// user pauses or asks for one, not on every keystroke. Its errors are the
// command line's, in English, as the files are.
func Export(v map[string]string, format string) Download {
	in, err := calc.Parse(values(v))
	if err != nil {
		var ie *calc.InputError
		if errors.As(err, &ie) {
			return Download{Error: ie.Message()}
		}
		return Download{Error: err.Error()}
	}
	classes, errs := parseClasses(v, English)
	if len(errs) > 0 {
		return Download{Error: "--" + strings.Replace(errs[0].Field, ".", " ", 1) + ": " + errs[0].Text}
	}
	in.Classes = classes
	rep, err := calc.Compute(in)
	if err != nil {
		return Download{Error: err.Error()}
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

// SolveResult is the outcome of Solve: the new text of the solved field and
// a note saying so, or an error message, in the page's language.
type SolveResult struct {
	Field string `json:"field,omitempty"`
	Value string `json:"value,omitempty"`
	Note  string `json:"note,omitempty"`
	Error string `json:"error,omitempty"`
}

// Solve finds the largest value of the field param ("initial",
// "multiplier" or "retries") for which the inputs v fit their deadline, as
// `again calc --solve param` does, and returns it as the field's new text
// in language l (a multiplier with its decimal sign, "1,4142" in Russian),
// rounded down so that it still fits. The per-attempt timeout, which
// `again calc` does not know, is taken off the deadline first: n attempts
// of it leave the waits that much less time.
func Solve(v map[string]string, param string, l Lang) SolveResult {
	pin, errs := parse(v, l)
	if len(errs) > 0 {
		return SolveResult{Error: errs[0].Text}
	}
	vals := values(v)
	vals[calc.FieldSolve] = param
	in, err := calc.Parse(vals)
	if err != nil {
		return SolveResult{Error: message(err, v, l).Text}
	}
	if pin.timeout > 0 {
		own := mulSat(pin.timeout, max(in.Policy.Retries, 0)+1)
		if param == calc.FieldRetries {
			own = pin.timeout // at least the first attempt; see below
		}
		if own >= in.Deadline {
			return SolveResult{Error: l.t("go.solve.ownTime")}
		}
		in.Deadline -= own
	}
	rep, err := calc.Compute(in)
	if err != nil {
		return SolveResult{Error: solveError(err, pin.Deadline, l)}
	}
	x := rep.Solved.Value
	var out SolveResult
	switch param {
	case calc.FieldInitial:
		out = SolveResult{Field: param, Value: solvedDuration(time.Duration(x * float64(time.Millisecond)))}
	case calc.FieldMultiplier:
		out = SolveResult{Field: param, Value: l.decimal(strconv.FormatFloat(max(1, math.Floor(x*1e4)/1e4), 'f', -1, 64))}
	default:
		out = SolveResult{Field: param, Value: strconv.FormatFloat(x, 'f', 0, 64)}
		if pin.timeout > 0 {
			out.Value = strconv.Itoa(retriesWithTimeout(in, pin, int(x)))
		}
	}
	out.Note = l.f("go.solve.set", l.t("go.solve.field."+param), out.Value)
	return out
}

// retriesWithTimeout returns the largest number of retries, at most n,
// whose worst case fits the deadline when every attempt also runs for the
// timeout. n fits the deadline less one attempt's time, so the answer is
// found by stepping down from it.
func retriesWithTimeout(in calc.Input, pin input, n int) int {
	for ; n > 0; n-- {
		p := in.Policy
		p.Retries = n // n > 0: backoff.Policy reads 0 as its default
		in2 := pin.Input
		in2.Policy = p
		in2.Solve = false
		rep, err := calc.Compute(in2)
		if err != nil {
			continue
		}
		var worst time.Duration
		if pin.Target == plan.TargetP99 {
			worst = time.Duration(rep.Total.P99)
		} else {
			worst = time.Duration(rep.Total.Max)
		}
		if addSat(worst, mulSat(pin.timeout, n+1)) <= pin.Deadline {
			return n
		}
	}
	return 0
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

// command returns the `again calc` command line for the inputs, in Go
// syntax where the page accepted its own output ("30 s" is --max 30s). It
// leaves out the solver's target (again calc refuses --target without
// --solve) and the per-attempt timeout, which again calc does not take.
func command(v map[string]string) string {
	var b strings.Builder
	b.WriteString("again calc")
	for _, f := range Fields() {
		s, ok := v[f]
		if !ok || strings.TrimSpace(s) == "" || f == calc.FieldTarget || f == FieldTimeout {
			continue
		}
		b.WriteString(" --" + f + " " + shellQuote(withUnit(f, normalize(f, s))))
	}
	return b.String()
}

// withUnit returns s, the text of field f, with a unit if it is a bare
// number of milliseconds other than 0, which the page takes but the
// command's flags refuse as ambiguous: "500" is --initial 500ms.
func withUnit(f, s string) string {
	switch f {
	case calc.FieldInitial, calc.FieldMax, calc.FieldDeadline:
	default:
		return s
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n == 0 {
		return s
	}
	if d, err := calc.ParseDuration(s); err == nil {
		return d.String()
	}
	return s
}

// shellQuote quotes s for a POSIX shell unless it is plainly safe.
func shellQuote(s string) string {
	safe := s != ""
	for _, c := range s {
		if !strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.:_-+=,", c) {
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
	case backoff.GRPCJitter:
		return "backoff.GRPCJitter"
	}
	return "backoff.FullJitter"
}

// snippet returns ready-to-paste Go code that retries with the policy.
func snippet(in input) string {
	p := in.Policy
	var b strings.Builder
	b.WriteString("// import \"github.com/again-go/again/backoff\"\n// import \"github.com/again-go/again/retry\"\n")
	b.WriteString("policy := backoff.Policy{\n")
	writePolicyFields(&b, p, "\t")
	b.WriteString("}\n")
	if in.Deadline > 0 {
		fmt.Fprintf(&b, "ctx, cancel := context.WithTimeout(ctx, %s)\ndefer cancel()\n", goDuration(in.Deadline))
	}
	if len(in.Classes) > 0 {
		writeClasses(&b, in.Classes)
	}
	b.WriteString("err := retry.Run(ctx, policy, func(ctx context.Context) error {\n")
	if in.timeout > 0 {
		fmt.Fprintf(&b, "\tctx, cancel := context.WithTimeout(ctx, %s) // each attempt's own limit\n\tdefer cancel()\n", goDuration(in.timeout))
	}
	b.WriteString("\treturn callTheService(ctx) // your operation\n")
	if len(in.Classes) > 0 {
		b.WriteString("}, classes)\n")
	} else {
		b.WriteString("})\n")
	}
	return b.String()
}

// writePolicyFields writes p's fields as the lines of a backoff.Policy
// literal, each line starting with indent.
func writePolicyFields(b *strings.Builder, p backoff.Policy, indent string) {
	// The calculator's 0 means none; in Go a zero field means its default,
	// so none is written as a negative value (see backoff.Policy).
	if p.Initial < 0 {
		b.WriteString(indent + "Initial:    -1, // negative: no wait\n")
	} else {
		fmt.Fprintf(b, indent+"Initial:    %s,\n", goDuration(p.Initial))
	}
	fmt.Fprintf(b, indent+"Multiplier: %s,\n", strconv.FormatFloat(p.EffectiveMultiplier(), 'g', -1, 64))
	if p.Max < 0 {
		b.WriteString(indent + "Max:        backoff.NoCap,\n")
	} else {
		fmt.Fprintf(b, indent+"Max:        %s,\n", goDuration(p.Max))
	}
	if p.Retries < 0 {
		b.WriteString(indent + "Retries:    backoff.NoRetries,\n")
	} else {
		fmt.Fprintf(b, indent+"Retries:    %d,\n", p.Retries)
	}
	fmt.Fprintf(b, indent+"Jitter:     %s,\n", jitterConst(p.Jitter))
	if p.Jitter == backoff.ProportionalJitter || p.Jitter == backoff.GRPCJitter {
		fmt.Fprintf(b, indent+"JitterFactor: %s,\n", strconv.FormatFloat(p.EffectiveJitterFactor(), 'g', -1, 64))
	}
}
