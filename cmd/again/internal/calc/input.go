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
	"github.com/again-go/again/backoff/plan"
	"github.com/again-go/again/retry"
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
// plan.Analyze analyses one by one. It is far beyond any useful schedule,
// and small enough that a report for it stays a few megabytes.
const MaxRetries = plan.MaxStatsRetries

// JitterSyntax lists the forms of --jitter that backoff.ParseJitter accepts,
// for messages and help texts. A test keeps it equal to ParseJitter's own.
const JitterSyntax = "none, full, equal, decorrelated, proportional:F or grpc:F with F in (0, 1]"

// JitterNames returns the names of the kinds of jitter, as --jitter and
// backoff.ParseJitter take them, in the order of backoff's constants:
// "full", "none", "equal", "proportional", "decorrelated", "grpc".
func JitterNames() []string {
	var names []string
	for j := backoff.FullJitter; j <= backoff.GRPCJitter; j++ {
		names = append(names, j.String())
	}
	return names
}

// durationSyntax is how the calculator reads durations, in English.
const durationSyntax = "Go syntax such as 500ms, 1.5s or 2m, or a bare number of milliseconds"

// ErrInvalid is matched by errors.Is for every error that ParseDuration and
// Parse return.
var ErrInvalid = errors.New("calc: invalid input")

// Key names the message of an InputError, independently of its language:
// what the field accepts, or what is wrong with the input. The page can
// render a key and its Args in any language; Message renders English.
type Key string

// The messages of InputError. The Args each one uses are listed after it.
const (
	KeyDuration         Key = "duration"          // a duration of 0 or more (up to the largest time.Duration)
	KeyDurationNoCap    Key = "duration_no_cap"   // as KeyDuration, 0 meaning no cap
	KeyNumberAtLeast    Key = "number_at_least"   // a finite number >= Args["min"]
	KeyWholeNumber      Key = "whole_number"      // a whole number from Args["min"] to Args["max"]
	KeyJitter           Key = "jitter"            // one of the jitter forms (JitterSyntax)
	KeyOneOf            Key = "one_of"            // one of Args["choices"], separated by ", "
	KeyUnknownField     Key = "unknown_field"     // Field is not a field; Args["fields"] lists them
	KeyRequiresDeadline Key = "requires_deadline" // solving Args["param"] needs a deadline
	KeyInvalidPolicy    Key = "invalid_policy"    // backoff.Policy.Validate's Args["error"]
)

// accepted says in English what a field accepts, for the keys that say
// that; {name} stands for Args["name"]. It is never modified.
var accepted = map[Key]string{
	KeyDuration:      "a duration of 0 or more, with no limit short of 292 years (" + durationSyntax + ")",
	KeyDurationNoCap: "a duration of 0 or more, 0 meaning no cap (" + durationSyntax + ")",
	KeyNumberAtLeast: "a finite number >= {min}",
	KeyWholeNumber:   "a whole number from {min} to {max}",
	KeyJitter:        JitterSyntax,
	KeyOneOf:         "one of {choices}",
}

// english renders the other keys in English, after the field's name;
// {value} stands for the rejected value. It is never modified.
var english = map[Key]string{
	KeyUnknownField:     "is not a calculator field; want one of {fields}",
	KeyRequiresDeadline: "requires --deadline: the solver finds the largest {param} whose total wait fits a deadline",
	KeyInvalidPolicy:    "{error}",
}

// InputError reports an input field whose text is not accepted. It matches
// ErrInvalid with errors.Is. Key and Args describe the problem without
// words, so that a page can say it in its own language; Message says it in
// English, as the command line prints it.
type InputError struct {
	Field string            // the field (flag) name, such as "multiplier"; empty from ParseDuration
	Value string            // the text as given
	Key   Key               // what the field accepts, or what is wrong
	Args  map[string]string // the key's parameters, such as {"min": "1"}
}

// Detail returns the message without the field name, as the page shows it
// under the field: "must be a finite number >= 1, got 0.5".
func (e *InputError) Detail() string { return e.DetailWith(showValue) }

// DetailWith returns Detail's message with the rejected value written by
// show, for a page that quotes in its own style: `got “fast”`. Detail
// shows a number as it is (IsNumber) and anything else in Go's quotes.
func (e *InputError) DetailWith(show func(value string) string) string {
	if want := e.Accepted(); want != "" {
		return "must be " + want + ", got " + show(e.Value)
	}
	return e.args(english[e.Key], "{value}", show(e.Value))
}

// Accepted returns what the field accepts, in English, such as "a finite
// number >= 1"; "" for a Key that does not say (KeyUnknownField,
// KeyRequiresDeadline, KeyInvalidPolicy).
func (e *InputError) Accepted() string {
	want, ok := accepted[e.Key]
	if !ok {
		return ""
	}
	return e.args(want)
}

// args returns s with e.Args, and the pairs, in place of their names.
func (e *InputError) args(s string, pairs ...string) string {
	for k, v := range e.Args {
		pairs = append(pairs, "{"+k+"}", v)
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// Message returns the message as the command line shows it, in the style
// of its every usage error, naming the flag and quoting the value as given:
// `--multiplier "0.5": want a finite number >= 1` (`value "x": ...` when
// Field is empty).
func (e *InputError) Message() string {
	name := "value"
	if e.Field != "" {
		name = "--" + e.Field
	}
	if want := e.Accepted(); want != "" {
		return name + " " + quoteValue(e.Value) + ": want " + want
	}
	return name + " " + e.Detail()
}

// Error returns "calc: " and Message: `calc: --multiplier "0.5": want a
// finite number >= 1`.
func (e *InputError) Error() string { return "calc: " + e.Message() }

// Is reports whether target is ErrInvalid.
func (e *InputError) Is(target error) bool { return target == ErrInvalid }

// maxShown is the longest value, in bytes, that a message repeats whole.
const maxShown = 64

// showValue returns numbers as they are and quotes anything else, so that
// an empty or odd value is still visible in a message (the page's style).
// A value longer than maxShown is cut, saying how long it was.
func showValue(s string) string {
	if isNumber(s) && len(s) <= maxShown {
		return s
	}
	return quoteValue(s)
}

// quoteValue quotes s as the command line's messages show every value
// the user gave, cut if longer than maxShown, saying how long it was.
func quoteValue(s string) string {
	if len(s) > maxShown {
		cut := strings.ToValidUTF8(s[:maxShown-16], "")
		return strconv.Quote(cut) + "… (" + strconv.Itoa(len(s)) + " bytes)"
	}
	return strconv.Quote(s)
}

// fieldArgs returns the Args of each field's error, a new map each time.
func fieldArgs(field string) map[string]string {
	switch field {
	case FieldMultiplier:
		return map[string]string{"min": "1"}
	case FieldRetries:
		return map[string]string{"min": "0", "max": strconv.Itoa(MaxRetries)}
	case FieldSeed:
		return map[string]string{"min": "0", "max": strconv.FormatUint(math.MaxUint64, 10)}
	case FieldSolve:
		return map[string]string{"choices": "initial, multiplier or retries"}
	case FieldTarget:
		return map[string]string{"choices": "max or p99"}
	}
	return nil
}

// ParseDuration parses a non-negative duration in Go syntax ("500ms", "1.5s",
// "2m", "1h30m") or a bare number of milliseconds ("500", "0.5").
// Surrounding spaces are ignored. It rejects
// negative values, NaN, infinities and anything longer than the largest
// time.Duration (about 292 years) with an *InputError that says what is
// accepted.
func ParseDuration(s string) (time.Duration, error) {
	d, ok := parseDuration(strings.TrimSpace(s))
	if !ok {
		return 0, &InputError{Value: s, Key: KeyDuration, Args: fieldArgs("")}
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

// IsNumber reports whether s is a plain decimal number, which messages
// show as it is; they quote any other value.
func IsNumber(s string) bool { return isNumber(s) }

// decimal matches plain decimal numbers; it is never modified.
var decimal = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// Values holds the calculator's inputs as text, keyed by field name
// (FieldInitial, ...). A missing or empty value means the default: the
// field's value in backoff.Default() for the policy fields, no deadline, no
// solving, target max and plan.DefaultSeed.
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
		FieldSeed:       strconv.FormatUint(plan.DefaultSeed, 10),
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
	Param  plan.Param
	Target plan.Target
	// Seed seeds the Monte Carlo estimates (decorrelated jitter).
	Seed uint64
	// Classes are the classes of failure whose schedules the report
	// shows beside the call's (see retry.Class): each class's own policy
	// and cost, within the call's Policy.Retries. Parse leaves it nil;
	// `again calc` fills it from --on-overload and --on-transient, a
	// preset from its Classes. Only Name, Policy and Cost are read.
	Classes []retry.Class
}

// Parse validates v and returns the Input it describes. The first field in
// the order initial, multiplier, max, retries, jitter, deadline, solve,
// target, seed that is not accepted is reported as an *InputError naming
// it; so is an unknown field and a solve without a deadline.
func Parse(v Values) (Input, error) {
	known := DefaultValues()
	for _, k := range slices.Sorted(maps.Keys(v)) {
		if _, ok := known[k]; !ok {
			return Input{}, &InputError{Field: k, Key: KeyUnknownField, Args: map[string]string{"fields": "initial, multiplier, max, retries, jitter, deadline, solve, target or seed"}}
		}
	}
	in := Input{Policy: backoff.Default(), Seed: plan.DefaultSeed}
	get := func(field string) (string, bool) {
		s, ok := v[field]
		return s, ok && s != ""
	}
	bad := func(field string, key Key) error {
		return &InputError{Field: field, Value: v[field], Key: key, Args: fieldArgs(field)}
	}
	p := &in.Policy
	if s, ok := get(FieldInitial); ok {
		d, ok := parseDuration(strings.TrimSpace(s))
		if !ok {
			return Input{}, bad(FieldInitial, KeyDuration)
		}
		p.Initial = fromUser(d, noWait)
	}
	if s, ok := get(FieldMultiplier); ok {
		m, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		// An explicit 0 is rejected although backoff.Policy reads it as 2:
		// the calculator must compute what the user typed or say why not.
		if err != nil || !isNumber(strings.TrimSpace(s)) || !(m >= 1) || math.IsInf(m, 0) {
			return Input{}, bad(FieldMultiplier, KeyNumberAtLeast)
		}
		p.Multiplier = m
	}
	if s, ok := get(FieldMax); ok {
		d, ok := parseDuration(strings.TrimSpace(s))
		if !ok {
			return Input{}, bad(FieldMax, KeyDurationNoCap)
		}
		p.Max = fromUser(d, backoff.NoCap)
	}
	if s, ok := get(FieldRetries); ok {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 0 || n > MaxRetries {
			return Input{}, bad(FieldRetries, KeyWholeNumber)
		}
		p.Retries = fromUser(n, backoff.NoRetries)
	}
	if s, ok := get(FieldJitter); ok {
		j, f, err := backoff.ParseJitter(strings.TrimSpace(s))
		if err != nil {
			return Input{}, bad(FieldJitter, KeyJitter)
		}
		p.Jitter, p.JitterFactor = j, f
	}
	if s, ok := get(FieldDeadline); ok {
		// 0 is no deadline, as 0 is none for every limit of the command:
		// the same as an empty field.
		d, ok := parseDuration(strings.TrimSpace(s))
		if !ok {
			return Input{}, bad(FieldDeadline, KeyDuration)
		}
		in.Deadline = d
	}
	if s, ok := get(FieldSolve); ok {
		switch strings.TrimSpace(s) {
		case "initial":
			in.Param = plan.ParamInitial
		case "multiplier":
			in.Param = plan.ParamMultiplier
		case "retries":
			in.Param = plan.ParamRetries
		default:
			return Input{}, bad(FieldSolve, KeyOneOf)
		}
		in.Solve = true
	}
	if s, ok := get(FieldTarget); ok {
		switch strings.TrimSpace(s) {
		case "max":
			in.Target = plan.TargetMax
		case "p99":
			in.Target = plan.TargetP99
		default:
			return Input{}, bad(FieldTarget, KeyOneOf)
		}
	}
	if s, ok := get(FieldSeed); ok {
		n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return Input{}, bad(FieldSeed, KeyWholeNumber)
		}
		in.Seed = n
	}
	if in.Solve && in.Deadline == 0 {
		return Input{}, &InputError{Field: FieldSolve, Value: v[FieldSolve], Key: KeyRequiresDeadline, Args: map[string]string{"param": strings.TrimSpace(v[FieldSolve])}}
	}
	if err := p.Validate(); err != nil {
		// Unreachable when the checks above are complete; kept so that a
		// future Policy rule cannot slip through as a wrong report.
		return Input{}, &InputError{Field: "policy", Key: KeyInvalidPolicy, Args: map[string]string{"error": err.Error()}}
	}
	return in, nil
}
