package cmdutil

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/cmd/again/internal/calc"
	"github.com/again-go/again/retry"
)

// classKeys are the keys of a class spec: the policy flags' names, and
// cost, the class's cost to the --budget (retry.Class.Cost).
var classKeys = []string{calc.FieldInitial, calc.FieldMultiplier, calc.FieldMax, calc.FieldRetries, calc.FieldJitter, costKey}

// costKey is the key of a class spec for the tokens a retry of the class
// takes from the --budget.
const costKey = "cost"

// MinCost is the least cost a class spec accepts: the budget counts
// thousandths of a token (retry.TokenBucket and fleet.Budget alike), so a
// smaller cost would take nothing, which is not what a cost says.
const MinCost = 0.001

// CostAccepted is what a class spec's cost accepts, for its help and its
// error.
const CostAccepted = "a number from 0.001 up (the budget counts thousandths of a token)"

// ClassSyntax describes a class spec in the help of the flags that take one.
const ClassSyntax = "comma-separated key=value with keys initial, multiplier, max, retries and jitter, valued as those flags (unset keys take the flags' defaults), and cost, the tokens each retry of the class takes from a retry budget: " + CostAccepted + ", default 1"

// ClassFlags holds the text of --on-overload and --on-transient, the
// retry policies of two classes of failure (see retry.Class), in the
// grammar of the policy flags: each spec is the same names and values as
// the flags, such as "initial=1s,max=30s,retries=5".
type ClassFlags struct {
	overload, transient string
}

// AddClassFlags registers --on-overload and --on-transient on fs. The
// command says, for their help, what its overloads are and what its other
// retried failures are: fetch's "429, 503, throttle and breaker
// rejections" and "network errors, other statuses".
func AddClassFlags(fs *pflag.FlagSet, overloads, others string) *ClassFlags {
	f := &ClassFlags{}
	fs.Var(Text(&f.overload, "spec"), "on-overload", "policy of overloads ("+overloads+"), "+ClassSyntax)
	fs.Var(Text(&f.transient, "spec"), "on-transient", "policy of the other retried failures ("+others+"), as --on-overload")
	return f
}

// OnOverload reports whether --on-overload was given (false for a nil f).
func (f *ClassFlags) OnOverload() bool { return f != nil && f.overload != "" }

// Parse returns the classes the flags give, overloads first: none when
// neither flag is given, or f is nil. A spec it rejects is a usage error
// naming the flag, the key and what it accepts.
func (f *ClassFlags) Parse() ([]retry.Class, error) {
	return f.parse(false)
}

// ParseTimed is Parse for run and fetch, whose call has the policy call
// from PolicyFlags.ParseTimed: a spec without retries takes the call's
// when the call retries until its --deadline (backoff.UntilDeadline),
// since that is then what an absent --retries means. Without it,
// `--deadline 1m --on-overload initial=5s` would stop after 3 overloads,
// well before the minute the deadline promises to keep trying for.
func (f *ClassFlags) ParseTimed(call backoff.Policy) ([]retry.Class, error) {
	return f.parse(call.Retries == backoff.UntilDeadline)
}

// parse is Parse; untilDeadline gives a spec without retries
// backoff.UntilDeadline in place of the --retries default.
func (f *ClassFlags) parse(untilDeadline bool) ([]retry.Class, error) {
	var cs []retry.Class
	if f == nil {
		return nil, nil
	}
	for _, c := range []struct{ flag, spec, name string }{
		{"on-overload", f.overload, "overload"},
		{"on-transient", f.transient, "transient"},
	} {
		if c.spec == "" {
			continue
		}
		class, seen, err := parseClass(c.flag, c.spec)
		if err != nil {
			return nil, err
		}
		if untilDeadline && !seen[calc.FieldRetries] {
			class.Policy.Retries = backoff.UntilDeadline
		}
		class.Name, class.Match = c.name, retry.IsOverload
		if c.name == "transient" {
			class.Match = func(err error) bool { return !retry.IsOverload(err) }
		}
		cs = append(cs, class)
	}
	return cs, nil
}

// ParseClass parses the spec of the class flag name: comma-separated
// KEY=VALUE pairs whose keys are initial, multiplier, max, retries and
// jitter, valued as their flags and checked by calc.Parse with the same
// messages, and cost, a number of tokens (see CostAccepted). It returns a
// class with that Policy and Cost (1 unless given).
func ParseClass(name, spec string) (retry.Class, error) {
	c, _, err := parseClass(name, spec)
	return c, err
}

// parseClass is ParseClass, also reporting the keys the spec gives.
func parseClass(name, spec string) (retry.Class, map[string]bool, error) {
	v := calc.DefaultValues()
	cost := 1.0
	seen := map[string]bool{}
	for _, pair := range strings.Split(spec, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
		key = strings.TrimSpace(key)
		if !ok || !slices.Contains(classKeys, key) {
			return retry.Class{}, nil, BadValue("--"+name, pair, "key=value pairs with keys %s", strings.Join(classKeys, ", "))
		}
		if seen[key] {
			return retry.Class{}, nil, Usagef("--%s gives %s twice", name, key)
		}
		seen[key] = true
		value = strings.TrimSpace(value)
		if key == costKey {
			c, err := strconv.ParseFloat(value, 64)
			if err != nil || !(c >= MinCost) || math.IsInf(c, 1) {
				return retry.Class{}, nil, BadValue("--"+name+" "+costKey, value, CostAccepted)
			}
			cost = c
			continue
		}
		if key == calc.FieldInitial || key == calc.FieldMax {
			// The same rule as the policy flags: a bare number is refused,
			// since it reads as seconds to some and milliseconds to others.
			if err := RequireUnit(name+" "+key, value); err != nil {
				return retry.Class{}, nil, err
			}
		}
		v[key] = value
	}
	in, err := calc.Parse(v)
	var ie *calc.InputError
	if errors.As(err, &ie) {
		if want := ie.Accepted(); want != "" {
			return retry.Class{}, nil, BadValue("--"+name+" "+ie.Field, ie.Value, strings.Replace(want, bareMillis, "", 1))
		}
		return retry.Class{}, nil, Usagef("--%s: %s %s", name, ie.Field, ie.Detail())
	}
	if err != nil {
		return retry.Class{}, nil, err
	}
	if err := contradiction(in.Policy, "--"+name+": ", calc.FieldInitial, calc.FieldMax, seen[calc.FieldInitial], seen[calc.FieldMax]); err != nil {
		return retry.Class{}, nil, err
	}
	return retry.Class{Policy: in.Policy, Cost: cost}, seen, nil
}
