package cmdutil

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/cmd/again/internal/calc"
	"github.com/spf13/pflag"
)

// PolicyFlags holds the text of the shared policy flags, --initial, --max,
// --multiplier, --retries, --jitter and --deadline, and of any other
// calculator field a subcommand adds with Add. Every subcommand that takes
// a retry policy (calc, run, fetch) uses it, so they accept exactly the
// same values with the same messages as the web page:
//
//	pf := AddPolicyFlags(cmd.Flags())
//	...
//	in, err := pf.Parse() // in the RunE; err is already a usage error
//	policy, deadline := in.Policy, in.Deadline
//
// The defaults are backoff.Default(); no deadline.
type PolicyFlags struct {
	values map[string]*string
	fs     *pflag.FlagSet
}

// NewPolicyFlags returns PolicyFlags with no flag yet, for fields of the
// calculator that a command adds with Add to fs, such as sim's models,
// which take some of the policy flags.
func NewPolicyFlags(fs *pflag.FlagSet) *PolicyFlags {
	return &PolicyFlags{values: map[string]*string{}, fs: fs}
}

// AddPolicyFlags registers the shared policy flags on fs.
func AddPolicyFlags(fs *pflag.FlagSet) *PolicyFlags {
	f := NewPolicyFlags(fs)
	f.Add(fs, calc.FieldInitial, "duration", "delay before the first retry")
	f.Add(fs, calc.FieldMultiplier, "float", "growth factor between delays, a finite number >= 1")
	f.Add(fs, calc.FieldMax, "duration", "cap on every delay, jitter included; 0 means no cap")
	f.Add(fs, calc.FieldRetries, "n", "retries after the first attempt, 0 to 100000")
	f.Add(fs, calc.FieldJitter, "kind", calc.JitterSyntax)
	f.Add(fs, calc.FieldDeadline, "duration", DeadlineUsage)
	return f
}

// Add registers the calculator field as a flag of the same name on fs, with
// its default from calc.DefaultValues. typ names the value in the help
// ("duration"); usage describes it.
func (f *PolicyFlags) Add(fs *pflag.FlagSet, field, typ, usage string) {
	s := new(string)
	*s = calc.DefaultValues()[field]
	f.values[field] = s
	fs.Var(Text(s, typ), field, usage)
}

// Value returns the text of field, one added by AddPolicyFlags or Add, as
// given or defaulted.
func (f *PolicyFlags) Value(field string) string { return *f.values[field] }

// Set replaces the text of field, one added by AddPolicyFlags or Add, as
// if the flag had been given, without marking it changed: calc's --preset
// fills in the fields that no flag gives.
func (f *PolicyFlags) Set(field, value string) { *f.values[field] = value }

// Parse validates the flags with calc.Parse. A value it rejects becomes a
// usage error (exit status 2) naming the flag and what it accepts, such as
// `--multiplier "0.5": want a finite number >= 1`. A duration needs
// a unit (see RequireUnit), and a policy that contradicts itself, an
// --initial above a --max other than 0, is refused (see Contradiction).
// A --deadline of 0 is none, as 0 is for every limit of every command
// (calc.Parse's rule, the page's too).
func (f *PolicyFlags) Parse() (calc.Input, error) {
	for _, field := range []string{calc.FieldInitial, calc.FieldMax, calc.FieldDeadline} {
		if s, ok := f.values[field]; ok && f.fs.Changed(field) {
			if err := RequireUnit(field, *s); err != nil {
				return calc.Input{}, err
			}
		}
	}
	in, err := f.parse()
	var ie *calc.InputError
	if errors.As(err, &ie) {
		// calc's message, shared with the page, offers bare milliseconds,
		// which the command refuses.
		return in, Usage(strings.Replace(ie.Message(), bareMillis, "", 1))
	}
	if err != nil {
		return in, err
	}
	if _, ok := f.values[calc.FieldMax]; ok {
		return in, f.Contradiction(in.Policy)
	}
	return in, nil
}

// DurationAccepted is what a duration flag of run, fetch and wait
// accepts, for messages: calc's durations, less the bare milliseconds.
const DurationAccepted = "a duration of 0 or more, with no limit short of 292 years (Go syntax such as 500ms, 1.5s or 2m)"

// bareMillis is the part of calc's duration syntax that the command's
// flags do not take.
const bareMillis = ", or a bare number of milliseconds"

// Contradiction returns a usage error if p's Initial is above its Max
// (other than 0, no cap): every delay would be the cap, so one of the two
// flags does not say what the user meant. It names the default of a flag
// that was not given; a --max alone below the default --initial is taken,
// since a lower cap means lower delays. calc, run, fetch, wait and sim
// refuse it alike.
func (f *PolicyFlags) Contradiction(p backoff.Policy) error {
	return contradiction(p, "", "--initial", "--max", f.fs.Changed(calc.FieldInitial), f.fs.Changed(calc.FieldMax))
}

// contradiction is Contradiction's rule for a policy whose first delay and
// cap were given (or not) under the names initial and max, its message
// starting with prefix: the flags' and the class specs' (ParseClass).
func contradiction(p backoff.Policy, prefix, initial, max string, initialGiven, maxGiven bool) error {
	if p.Max <= 0 || p.Initial <= p.Max {
		return nil
	}
	if !initialGiven && maxGiven {
		// Only the cap was given, below the default first delay: lowering
		// the cap lowers every delay, which is what it says.
		return nil
	}
	iv, mv := calc.Short(p.Initial), calc.Short(p.Max)
	if !initialGiven {
		iv += " (its default)"
	}
	if !maxGiven {
		mv += " (its default)"
	}
	return Usagef("%s%s %s is above %s %s: every delay would be %s; lower %s, or raise %s (0 for no cap)", prefix, initial, iv, max, mv, calc.Short(p.Max), initial, max)
}

func (f *PolicyFlags) parse() (calc.Input, error) {
	v := calc.Values{}
	for k, s := range f.values {
		v[k] = *s
	}
	return calc.Parse(v)
}

// ParseTimed is Parse for commands whose --deadline is a time limit (run,
// fetch, wait). There --deadline without --retries retries until the
// deadline (backoff.UntilDeadline): waiting for a dependency for up to a
// minute is what --deadline 1m says, and the default of 3 retries would
// stop after about 1.5 s. With both, whichever comes first ends the
// retries.
func (f *PolicyFlags) ParseTimed() (calc.Input, error) {
	in, err := f.Parse()
	if err != nil {
		return in, err
	}
	if in.Deadline > 0 && !f.fs.Changed(calc.FieldRetries) {
		in.Policy.Retries = backoff.UntilDeadline
	}
	return in, nil
}

// DeadlineUsage is the usage of --deadline in run, fetch and calc. The
// reserve it names is backoff.DeadlineReserve (a test checks).
const DeadlineUsage = "deadline for the whole retry loop (default none); the last attempt starts up to 100ms before it"

// RequireUnit rejects a bare number other than 0 as the value s of the
// duration flag name: every duration flag of every command takes a unit.
// A bare 30 would be 30 ms to the calculator's page and to the seed's
// calculator, but 30 s to users of timeout(1) and curl: rather than guess,
// ask for the unit, showing both readings.
func RequireUnit(name, s string) error {
	t := strings.TrimSpace(s)
	if !strings.ContainsAny(t, "0123456789") || strings.Trim(t, "0123456789.+-eE") != "" {
		return nil // not a bare number: the duration parser judges it
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil && f == 0 {
		return nil // 0 is 0 in every unit
	}
	return BadValue("--"+name, s, "a duration with a unit, such as %ss or %sms (a bare number is seconds to timeout and curl, milliseconds to the calculator page)", t, t)
}

// DurationFlag parses the duration flag name, which needs a unit unless it
// is 0 (see RequireUnit); empty means 0 when optional.
func DurationFlag(name, s string, optional bool) (time.Duration, error) {
	if s == "" && optional {
		return 0, nil
	}
	if err := RequireUnit(name, s); err != nil {
		return 0, err
	}
	d, err := calc.ParseDuration(s)
	var ie *calc.InputError
	if errors.As(err, &ie) {
		// Not ie.Detail(): it offers calc's bare milliseconds, which
		// RequireUnit has just refused for these flags.
		return 0, BadValue("--"+name, s, DurationAccepted)
	}
	return d, err
}
