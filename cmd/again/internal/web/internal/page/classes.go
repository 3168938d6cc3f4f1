package page

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/again-go/again/cmd/again/internal/calc"
	"github.com/again-go/again/retry"
)

// The page's classes of failure, by the flags of `again calc` that give
// them: each class's inputs are keyed by its flag and a policy field,
// "on-overload.initial", as --on-overload takes "initial=1s".
var classFlags = [...]struct{ flag, name string }{
	{"on-overload", "overload"},
	{"on-transient", "transient"},
}

// ClassFields returns the keys of the page's optional per-class inputs,
// which the URL query keeps too: for --on-overload and then --on-transient,
// the policy fields (calc.PolicyFields) after the flag and a dot.
func ClassFields() []string {
	var out []string
	for _, c := range classFlags {
		for _, f := range calc.PolicyFields() {
			out = append(out, c.flag+"."+f)
		}
	}
	return out
}

// ClassResult is what the page shows of one class of failure: the schedule
// its failures follow, computed by internal/calc as `again calc
// --on-overload` shows it, in the page's language.
type ClassResult struct {
	// Flag is the class's flag, which keys its inputs: "on-overload".
	Flag     string `json:"flag"`
	Title    string `json:"title"`
	Shortest string `json:"shortest"`
	Mean     string `json:"mean"`
	Worst    string `json:"worst"`
	// Retries says how many retries the class makes: "4 retries".
	Retries string `json:"retries"`
	// Totals says it all in one sentence: "4 retries if every attempt
	// fails this way: shortest 0 ms, mean 7.5 s, worst case 15 s."
	Totals string `json:"totals"`
	// Note says when the call's retries stop the class before its own.
	Note string `json:"note,omitempty"`
	Rows []Row  `json:"rows"`
}

// classValues returns the per-class inputs of v that are set, by class
// flag, normalized as the policy fields are.
func classValues(v map[string]string) map[string]calc.Values {
	out := map[string]calc.Values{}
	for _, c := range classFlags {
		for _, f := range calc.PolicyFields() {
			if s := v[c.flag+"."+f]; strings.TrimSpace(s) != "" {
				if out[c.flag] == nil {
					out[c.flag] = calc.Values{}
				}
				out[c.flag][f] = normalize(f, s)
			}
		}
	}
	return out
}

// parseClasses validates the per-class inputs of v, each field alone
// first, so that every wrong one is marked, and returns the classes
// given: a class is given when one of its fields is set, the others then
// taking the defaults, as the keys a spec leaves out do.
func parseClasses(v map[string]string, l Lang) ([]retry.Class, []Message) {
	vals := classValues(v)
	var errs []Message
	var cs []retry.Class
	for _, c := range classFlags {
		cv, ok := vals[c.flag]
		if !ok {
			continue
		}
		bad := false
		for _, f := range calc.PolicyFields() {
			s, ok := cv[f]
			if !ok {
				continue
			}
			if _, err := calc.Parse(calc.Values{f: s}); err != nil {
				m := message(err, map[string]string{f: v[c.flag+"."+f]}, l)
				m.Field = c.flag + "." + f
				errs = append(errs, m)
				bad = true
			}
		}
		if bad {
			continue
		}
		in, err := calc.Parse(cv)
		if err != nil {
			errs = append(errs, message(err, v, l))
			continue
		}
		cs = append(cs, retry.Class{Name: c.name, Policy: in.Policy, Cost: 1})
	}
	return cs, errs
}

// classResults renders the report's classes; a is the attempts' own time,
// which the latest starts include, as the call's rows do.
func classResults(rep *calc.Report, a attempts, l Lang) []ClassResult {
	var out []ClassResult
	for _, c := range rep.Classes {
		cr := ClassResult{
			Flag:     classFlags[classIndex(c.Name)].flag,
			Title:    l.t("go.class." + c.Name),
			Shortest: l.Duration(time.Duration(c.Total.Min)), Mean: l.Duration(time.Duration(c.Total.Mean)),
			Worst:   l.Duration(addSat(time.Duration(c.Total.Max), a.before(len(c.Retries)+1))),
			Retries: strconv.Itoa(len(c.Retries)) + " " + l.plural("go.class.retries.plural", int64(len(c.Retries))),
			Rows:    make([]Row, min(len(c.Retries), MaxRows)),
		}
		cr.Totals = l.f("go.class.totals", cr.Retries, cr.Shortest, cr.Mean, cr.Worst)
		if c.CallCapped {
			cr.Note = l.f("go.class.callCapped", rep.Policy.Retries, c.Policy.Retries)
		}
		for j, x := range c.Retries[:len(cr.Rows)] {
			cr.Rows[j] = row(x, a, l)
		}
		out = append(out, cr)
	}
	return out
}

// classIndex returns the index in classFlags of the class called name.
func classIndex(name string) int {
	for i, c := range classFlags {
		if c.name == name {
			return i
		}
	}
	return 0
}

// classCommand returns the class flags of `again calc` for the per-class
// inputs of v: " --on-overload initial=1s,max=30s", each value as the
// command's flags take it.
func classCommand(v map[string]string) string {
	var b strings.Builder
	vals := classValues(v)
	for _, c := range classFlags {
		cv, ok := vals[c.flag]
		if !ok {
			continue
		}
		var pairs []string
		for _, f := range calc.PolicyFields() {
			if s, ok := cv[f]; ok {
				pairs = append(pairs, f+"="+withUnit(f, s))
			}
		}
		b.WriteString(" --" + c.flag + " " + shellQuote(strings.Join(pairs, ",")))
	}
	return b.String()
}

// writeClasses writes the snippet's retry.WithClasses option for cs, the
// classes of the per-class inputs, matched as again fetch matches them:
// overloads by retry.IsOverload, the other failures by its negation.
func writeClasses(b *strings.Builder, cs []retry.Class) {
	b.WriteString("classes := retry.WithClasses(\n")
	for _, c := range cs {
		match := "retry.IsOverload"
		if c.Name != "overload" {
			match = "func(err error) bool { return !retry.IsOverload(err) }"
		}
		fmt.Fprintf(b, "\tretry.Class{Name: %q, Match: %s, Policy: backoff.Policy{\n", c.Name, match)
		writePolicyFields(b, c.Policy, "\t\t")
		b.WriteString("\t}},\n")
	}
	b.WriteString(")\n")
}
