package calc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/again-go/again/backoff"
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
//	           "p99_ms": ..., "min_human": "0 ms", "mean_human": "45.8 s", "max_human": "1 min 32 s"},
//	 "deadline": {"deadline_ms": 60000, "worst_case_fits": false, "retries_within_deadline": 6}}
//
// with "solved" only when the input asked to solve and "deadline" only when
// it gave one. A Report is not modified by its methods.
type Report struct {
	Policy   PolicyReport    `json:"policy"`
	Solved   *SolvedReport   `json:"solved,omitempty"`
	Retries  []RetryReport   `json:"retries"`
	Total    TotalReport     `json:"total"`
	Deadline *DeadlineReport `json:"deadline,omitempty"`

	input Input
	stats backoff.Stats
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
}

// TotalReport describes the total wait over all retries.
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
}

// DeadlineReport compares the worst case with the deadline.
type DeadlineReport struct {
	Deadline      Millis `json:"deadline_ms"`
	WorstCaseFits bool   `json:"worst_case_fits"`
	RetriesWithin int    `json:"retries_within_deadline"`
}

// SolveError reports that solving found no answer to show. Err is
// backoff.ErrUnsolvable (no value fits), backoff.ErrUnbounded (every value
// fits) or ErrTooManyRetries (the answer is more retries than the
// calculator analyses; Retries holds it).
type SolveError struct {
	Param    backoff.Param
	Target   backoff.Target
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
	what := fmt.Sprintf("%s total wait within %s", targetName(e.Target), durationText(e.Deadline))
	switch {
	case errors.Is(e.Err, backoff.ErrUnbounded):
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
		sp, err := backoff.Solve(p, in.Param, in.Deadline, in.Target, in.Seed)
		if sp.Retries > MaxRetries && err == nil {
			err = ErrTooManyRetries
		}
		if errors.Is(err, backoff.ErrUnsolvable) || errors.Is(err, backoff.ErrUnbounded) || errors.Is(err, ErrTooManyRetries) {
			return nil, &SolveError{Param: in.Param, Target: in.Target, Deadline: in.Deadline, Retries: sp.Retries, Err: err}
		}
		if err != nil {
			// Parse rules out every other failure; say so if one slips through.
			return nil, fmt.Errorf("calc: solving for %s: %w", in.Param, err)
		}
		solved = &SolvedReport{Parameter: in.Param.String()}
		switch in.Param {
		case backoff.ParamInitial:
			solved.Value = float64(toUser(sp.Initial)) / float64(time.Millisecond)
		case backoff.ParamMultiplier:
			solved.Value = sp.Multiplier
		case backoff.ParamRetries:
			solved.Value = float64(toUser(sp.Retries))
		}
		p = sp
	}
	s := p.Stats(in.Seed)
	r := &Report{
		Policy: PolicyReport{
			Initial:    Millis(toUser(p.Initial)),
			Multiplier: p.EffectiveMultiplier(),
			Max:        Millis(toUser(p.Max)),
			Retries:    toUser(p.Retries),
			Jitter:     p.JitterText(),
		},
		Solved:  solved,
		Retries: make([]RetryReport, len(s.Retries)),
		Total: TotalReport{
			Min: Millis(s.Total.Min), Mean: Millis(s.Total.Mean), Max: Millis(s.Total.Max),
			P50: Millis(s.Total.P50), P90: Millis(s.Total.P90), P99: Millis(s.Total.P99),
			MinHuman: backoff.Human(s.Total.Min), MeanHuman: backoff.Human(s.Total.Mean), MaxHuman: backoff.Human(s.Total.Max),
		},
		input: in,
		stats: s,
	}
	r.input.Policy = p
	for i, rs := range s.Retries {
		r.Retries[i] = RetryReport{
			Retry: rs.Retry, Delay: Millis(rs.Delay), Capped: rs.Capped,
			Min: Millis(rs.Min), Mean: Millis(rs.Mean), Max: Millis(rs.Max),
			TotalMin: Millis(rs.TotalMin), TotalMean: Millis(rs.TotalMean), TotalMax: Millis(rs.TotalMax),
		}
	}
	if in.Deadline > 0 {
		f := s.Deadline(in.Deadline)
		r.Deadline = &DeadlineReport{Deadline: Millis(f.Deadline), WorstCaseFits: f.WorstCaseFits, RetriesWithin: f.RetriesWithin}
	}
	return r, nil
}

// paramName returns a Param in words for messages.
func paramName(p backoff.Param) string {
	switch p {
	case backoff.ParamMultiplier:
		return "multiplier"
	case backoff.ParamRetries:
		return "number of retries"
	}
	return "initial delay"
}

func targetName(t backoff.Target) string {
	if t == backoff.TargetP99 {
		return "99th-percentile"
	}
	return "worst-case"
}

// durationText shows a duration in human form, adding the exact Go form
// when the human one rounds: "1 min", "1 min 32 s (1m31.5s)".
func durationText(d time.Duration) string {
	h := backoff.Human(d)
	exact := d%time.Second == 0 ||
		d < time.Minute && d%(100*time.Millisecond) == 0 ||
		d < time.Second && d%time.Millisecond == 0
	if exact || d == math.MaxInt64 {
		return h
	}
	return h + " (" + d.String() + ")"
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

// WriteCSV writes a header line and one line per retry with the same fields
// and numbers as the JSON rows. Lines end with "\n".
func (r *Report) WriteCSV(w io.Writer) error {
	b := make([]byte, 0, 64*(len(r.Retries)+1))
	b = append(b, CSVHeader+"\n"...)
	for _, x := range r.Retries {
		b = strconv.AppendInt(b, int64(x.Retry), 10)
		b = x.Delay.append(append(b, ','))
		b = append(append(b, ','), strconv.FormatBool(x.Capped)...)
		for _, m := range [...]Millis{x.Min, x.Mean, x.Max, x.TotalMin, x.TotalMean, x.TotalMax} {
			b = m.append(append(b, ','))
		}
		b = append(b, '\n')
	}
	_, err := w.Write(b)
	return err
}
