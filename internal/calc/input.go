package calc

import (
	"errors"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/again-go/again/backoff"
)

// The names of the input fields. They are the flag names of `again calc`
// (without the leading "--") and the keys of Values.
const (
	FieldInitial    = "initial"
	FieldMultiplier = "multiplier"
	FieldMax        = "max"
	FieldRetries    = "retries"
	FieldJitter     = "jitter"
	FieldDeadline   = "deadline"
	FieldSolve      = "solve"
	FieldTarget     = "target"
	FieldSeed       = "seed"
)

// MaxRetries is the largest retry count Parse accepts: the most that
// backoff.Stats analyses one by one. It is far beyond any useful schedule,
// and small enough that a report for it stays a few megabytes.
const MaxRetries = backoff.MaxStatsRetries

// What each field accepts, for error messages and help texts.
const (
	durationSyntax   = "Go syntax such as 500ms, 1.5s or 2m, or a bare number of milliseconds"
	acceptInitial    = "a duration from 0 to 2562047h (" + durationSyntax + ")"
	acceptMax        = "a duration from 0 to 2562047h, 0 meaning no cap (" + durationSyntax + ")"
	acceptDeadline   = "a duration above 0 and up to 2562047h (" + durationSyntax + ")"
	acceptMultiplier = "a finite number >= 1"
	acceptRetries    = "a whole number from 0 to 100000"
	acceptSolve      = "one of initial, multiplier or retries"
	acceptTarget     = "one of max or p99"
	acceptSeed       = "a whole number from 0 to 18446744073709551615"
)

// ErrInvalid is matched by errors.Is for every error that ParseDuration and
// Parse return.
var ErrInvalid = errors.New("calc: invalid input")

// InputError reports an input field whose text is not accepted. It matches
// ErrInvalid with errors.Is.
type InputError struct {
	Field    string // the field (flag) name, such as "multiplier"; empty from ParseDuration
	Value    string // the text as given
	Accepted string // what the field accepts, such as "a finite number >= 1"
	// Reason, when set, replaces the "must be Accepted, got Value" wording,
	// for errors about a combination of fields ("requires --deadline").
	Reason string
}

// Detail returns the message without the field name:
// "must be a finite number >= 1, got 0.5". Message adds the flag name.
func (e *InputError) Detail() string {
	if e.Reason != "" {
		return e.Reason
	}
	return "must be " + e.Accepted + ", got " + showValue(e.Value)
}

// Message returns the message as the command line and the page show it,
// naming the flag: "--multiplier must be a finite number >= 1, got 0.5"
// ("value must be ..." when Field is empty).
func (e *InputError) Message() string {
	name := "value"
	if e.Field != "" {
		name = "--" + e.Field
	}
	return name + " " + e.Detail()
}

// Error returns "calc: " and Message: "calc: --multiplier must be a finite
// number >= 1, got 0.5".
func (e *InputError) Error() string { return "calc: " + e.Message() }

// Is reports whether target is ErrInvalid.
func (e *InputError) Is(target error) bool { return target == ErrInvalid }

// showValue returns numbers as they are and quotes anything else, so that
// an empty or odd value is still visible in a message.
func showValue(s string) string {
	if isNumber(s) {
		return s
	}
	return strconv.Quote(s)
}

// ParseDuration parses a non-negative duration in Go syntax ("500ms", "1.5s",
// "2m", "1h30m") or a bare number of milliseconds ("500", "0.5"), as the
// seed's calculator takes it. Surrounding spaces are ignored. It rejects
// negative values, NaN, infinities and anything longer than the largest
// time.Duration (about 292 years) with an *InputError that says what is
// accepted.
func ParseDuration(s string) (time.Duration, error) {
	d, ok := parseDuration(strings.TrimSpace(s))
	if !ok {
		return 0, &InputError{Value: s, Accepted: acceptInitial}
	}
	return d, nil
}

func parseDuration(s string) (time.Duration, bool) {
	if s == "" {
		return 0, false
	}
	if isNumber(s) {
		mantissa, _, _ := strings.Cut(strings.ToLower(s), "e")
		if s[0] == '-' && strings.ContainsAny(mantissa, "123456789") {
			// Negative, even if it rounds to zero nanoseconds.
			return 0, false
		}
		if mantissa == s {
			return parseMillis(strings.TrimLeft(s, "+-"))
		}
		ms, err := strconv.ParseFloat(s, 64)
		ns := ms * float64(time.Millisecond)
		// 1<<63 is the first float64 above the largest Duration.
		if err != nil || !(ns >= 0) || ns >= 1<<63 {
			return 0, false
		}
		return time.Duration(math.Round(ns)), true
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, false
	}
	return d, true
}

// parseMillis converts unsigned decimal digits with an optional point, a
// number of milliseconds, to a duration: exact to the nanosecond for any
// number of milliseconds (no float64 rounding), and rounded half up below
// it, as the exponent form is, so that 0.0000019 and 1.9e-6 agree.
func parseMillis(s string) (time.Duration, bool) {
	whole, frac, _ := strings.Cut(s, ".")
	up := len(frac) > 6 && frac[6] >= '5'
	frac = (frac + "000000")[:6]
	if whole == "" {
		whole = "0"
	}
	// "500ms250000ns" is Go syntax, and ParseDuration reports overflow.
	d, err := time.ParseDuration(whole + "ms" + frac + "ns")
	if err != nil || up && d == math.MaxInt64 {
		return 0, false
	}
	if up {
		d++
	}
	return d, true
}

// isNumber reports whether s is a plain decimal number: an optional sign,
// digits with an optional point, an optional exponent. It keeps out the forms
// strconv.ParseFloat accepts that nobody means as a count of milliseconds:
// "NaN", "Inf", hexadecimal and underscores.
func isNumber(s string) bool { return decimal.MatchString(s) }

// decimal matches plain decimal numbers; it is never modified.
var decimal = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// Values holds the calculator's inputs as text, keyed by field name
// (FieldInitial, ...). A missing or empty value means the default: the
// field's value in backoff.Default() for the policy fields, no deadline, no
// solving, target max and backoff.DefaultSeed.
type Values map[string]string

// DefaultValues returns the text of every field's default, as a form or a
// flag shows it: "500ms", "2", "10s", "3", "full"; empty for deadline and
// solve, "max" for target and "1" for seed.
func DefaultValues() Values {
	p := backoff.Default()
	return Values{
		FieldInitial:    p.Initial.String(),
		FieldMultiplier: strconv.FormatFloat(p.EffectiveMultiplier(), 'g', -1, 64),
		FieldMax:        p.Max.String(),
		FieldRetries:    strconv.Itoa(p.Retries),
		FieldJitter:     p.JitterText(),
		FieldDeadline:   "",
		FieldSolve:      "",
		FieldTarget:     "max",
		FieldSeed:       strconv.FormatUint(backoff.DefaultSeed, 10),
	}
}

// noWait is the Policy.Initial that stands for the calculator's "--initial 0":
// any negative Initial means no wait, while zero would mean the default.
const noWait time.Duration = -1

// fromUser translates a calculator value, where 0 means none (no wait, no
// cap, no retries), to backoff.Policy's rule, where zero means the default
// and a negative value means none.
func fromUser[T time.Duration | int](v, none T) T {
	if v == 0 {
		return none
	}
	return v
}

// toUser is the inverse of fromUser: every negative value shows as 0.
func toUser[T time.Duration | int](v T) T { return max(v, 0) }

// Input is the validated form of Values: what the calculator computes.
type Input struct {
	// Policy is valid (Validate returns nil), never has a zero field that
	// backoff.Policy would read as its default, and keeps the user's
	// multiplier as given. The calculator's 0 for --initial, --max and
	// --retries (no wait, no cap, no retries) is a negative Initial,
	// backoff.NoCap and backoff.NoRetries here, so that run and fetch
	// retry exactly as the calculator shows.
	Policy backoff.Policy
	// Deadline is the deadline to compare with, or 0 if none was given.
	Deadline time.Duration
	// Solve reports that Param is to be solved for within Deadline,
	// holding Target to it.
	Solve  bool
	Param  backoff.Param
	Target backoff.Target
	// Seed seeds the Monte Carlo estimates (decorrelated jitter).
	Seed uint64
}

// Parse validates v and returns the Input it describes. The first field in
// the order initial, multiplier, max, retries, jitter, deadline, solve,
// target, seed that is not accepted is reported as an *InputError naming
// it; so is an unknown field and a solve without a deadline.
func Parse(v Values) (Input, error) {
	known := DefaultValues()
	for _, k := range slices.Sorted(maps.Keys(v)) {
		if _, ok := known[k]; !ok {
			return Input{}, &InputError{Field: k, Reason: "is not a calculator field; want one of initial, multiplier, max, retries, jitter, deadline, solve, target or seed"}
		}
	}
	in := Input{Policy: backoff.Default(), Seed: backoff.DefaultSeed}
	get := func(field string) (string, bool) {
		s, ok := v[field]
		return s, ok && s != ""
	}
	bad := func(field, accepted string) error {
		return &InputError{Field: field, Value: v[field], Accepted: accepted}
	}
	p := &in.Policy
	if s, ok := get(FieldInitial); ok {
		d, ok := parseDuration(strings.TrimSpace(s))
		if !ok {
			return Input{}, bad(FieldInitial, acceptInitial)
		}
		p.Initial = fromUser(d, noWait)
	}
	if s, ok := get(FieldMultiplier); ok {
		m, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		// An explicit 0 is rejected although backoff.Policy reads it as 2:
		// the calculator must compute what the user typed or say why not.
		if err != nil || !isNumber(strings.TrimSpace(s)) || !(m >= 1) || math.IsInf(m, 0) {
			return Input{}, bad(FieldMultiplier, acceptMultiplier)
		}
		p.Multiplier = m
	}
	if s, ok := get(FieldMax); ok {
		d, ok := parseDuration(strings.TrimSpace(s))
		if !ok {
			return Input{}, bad(FieldMax, acceptMax)
		}
		p.Max = fromUser(d, backoff.NoCap)
	}
	if s, ok := get(FieldRetries); ok {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 0 || n > MaxRetries {
			return Input{}, bad(FieldRetries, acceptRetries)
		}
		p.Retries = fromUser(n, backoff.NoRetries)
	}
	if s, ok := get(FieldJitter); ok {
		j, f, err := backoff.ParseJitter(strings.TrimSpace(s))
		if err != nil {
			return Input{}, bad(FieldJitter, backoff.JitterSyntax)
		}
		p.Jitter, p.JitterFactor = j, f
	}
	if s, ok := get(FieldDeadline); ok {
		d, ok := parseDuration(strings.TrimSpace(s))
		if !ok || d == 0 {
			return Input{}, bad(FieldDeadline, acceptDeadline)
		}
		in.Deadline = d
	}
	if s, ok := get(FieldSolve); ok {
		switch strings.TrimSpace(s) {
		case "initial":
			in.Param = backoff.ParamInitial
		case "multiplier":
			in.Param = backoff.ParamMultiplier
		case "retries":
			in.Param = backoff.ParamRetries
		default:
			return Input{}, bad(FieldSolve, acceptSolve)
		}
		in.Solve = true
	}
	if s, ok := get(FieldTarget); ok {
		switch strings.TrimSpace(s) {
		case "max":
			in.Target = backoff.TargetMax
		case "p99":
			in.Target = backoff.TargetP99
		default:
			return Input{}, bad(FieldTarget, acceptTarget)
		}
	}
	if s, ok := get(FieldSeed); ok {
		n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return Input{}, bad(FieldSeed, acceptSeed)
		}
		in.Seed = n
	}
	if in.Solve && in.Deadline == 0 {
		return Input{}, &InputError{Field: FieldSolve, Value: v[FieldSolve], Reason: "requires --deadline: the solver finds the largest " + strings.TrimSpace(v[FieldSolve]) + " whose total wait fits a deadline"}
	}
	if err := p.Validate(); err != nil {
		// Unreachable when the checks above are complete; kept so that a
		// future Policy rule cannot slip through as a wrong report.
		return Input{}, &InputError{Field: "policy", Reason: err.Error()}
	}
	return in, nil
}
