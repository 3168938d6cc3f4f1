package page

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/again-go/again/backoff/plan"
	"github.com/again-go/again/cmd/again/internal/calc"
	"github.com/again-go/again/cmd/again/internal/web/internal/catalog"
)

// message returns err, an error of internal/calc about the inputs v, as
// the page shows it under the field, in language l: calc's own English
// message (the one `again calc` prints, without the flag name), or its
// key and arguments in Russian, from the catalogue's calc.* keys. The
// value it shows is what the user typed, not its Go-syntax form (see
// normalize), quoted in l's style (Lang.quote).
func message(err error, v map[string]string, l Lang) Message {
	var ie *calc.InputError
	if !errors.As(err, &ie) {
		return Message{Text: err.Error()}
	}
	e := *ie
	if typed, ok := v[e.Field]; ok {
		e.Value = typed
	}
	if t, ok := catalog.Lookup(string(l), "calc."+string(e.Key)); ok {
		pairs := []string{"{value}", l.quote(e.Value)}
		for k, a := range e.Args {
			pairs = append(pairs, "{"+k+"}", strings.ReplaceAll(a, " or ", l.t("go.or")))
		}
		return Message{Field: e.Field, Text: strings.NewReplacer(pairs...).Replace(t)}
	}
	return Message{Field: e.Field, Text: capitalize(e.DetailWith(l.quote)) + "."}
}

// maxShown is the longest value, in bytes, that a message repeats whole,
// as in again calc's messages.
const maxShown = 64

// quote shows a value the user typed in a message, by again calc's rule in
// both languages, with language l's quotation marks: a number as it is
// (calc.IsNumber: "got 1e309", "введено 1e309"), anything else in quotes,
// so that an empty or odd value is still visible ("got “fast”", "введено
// «быстро»"), and a long value cut, saying how long it was.
func (l Lang) quote(s string) string {
	if len(s) > maxShown {
		cut := strings.ToValidUTF8(s[:maxShown-16], "")
		return l.f("go.quoteCut", l.f("go.quote", cut), len(s), l.plural("go.bytes.plural", int64(len(s))))
	}
	if calc.IsNumber(s) {
		return s
	}
	return l.f("go.quote", s)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// solveError says why solving found no answer, in language l.
func solveError(err error, deadline time.Duration, l Lang) string {
	var se *calc.SolveError
	if !errors.As(err, &se) {
		return err.Error()
	}
	param := l.t("go.solve.param." + map[plan.Param]string{
		plan.ParamInitial: calc.FieldInitial, plan.ParamMultiplier: calc.FieldMultiplier, plan.ParamRetries: calc.FieldRetries,
	}[se.Param])
	what := l.t("go.solve.worst")
	if se.Target == plan.TargetP99 {
		what = l.t("go.solve.p99")
	}
	dl := l.Exact(deadline)
	switch {
	case errors.Is(se.Err, plan.ErrUnbounded):
		return l.f("go.solve.unbounded", param, what, dl)
	case errors.Is(se.Err, calc.ErrTooManyRetries):
		return l.f("go.solve.tooMany", se.Retries, what, dl, calc.MaxRetries)
	}
	return l.f("go.solve.none", param, what, dl)
}

// humanPart matches one number and unit of the page's own duration output,
// in either language: "1 min", "32 s", "45,8 с", "3 дн.".
var humanPart = regexp.MustCompile(`^([0-9]+(?:[.,][0-9]+)?)\s*(ns|нс|µs|us|мкс|ms|мс|s|с|sec|сек|min|мин|m|h|ч|d|дн\.?|д)$`)

var humanUnits = map[string]time.Duration{
	"ns": time.Nanosecond, "нс": time.Nanosecond, "µs": time.Microsecond, "us": time.Microsecond, "мкс": time.Microsecond,
	"ms": time.Millisecond, "мс": time.Millisecond, "s": time.Second, "с": time.Second, "sec": time.Second, "сек": time.Second,
	"min": time.Minute, "мин": time.Minute, "m": time.Minute, "h": time.Hour, "ч": time.Hour,
	"d": day, "дн.": day, "дн": day, "д": day,
}

// normalize returns the text of field f in the syntax internal/calc takes,
// so that the page's own output can be typed back in: durations as the
// page writes them ("1 min 32 s", "45,8 с", "3 d 4 h") become Go syntax
// ("1m32s"), and a decimal comma in a number ("1,5") becomes a point. Text
// it does not recognise is returned as it is, for internal/calc to judge.
func normalize(f, s string) string {
	t := strings.TrimSpace(s)
	switch f {
	case calc.FieldMultiplier, calc.FieldSeed, calc.FieldRetries:
		if strings.Count(t, ",") == 1 && !strings.Contains(t, ".") {
			return strings.Replace(t, ",", ".", 1)
		}
		return t
	case calc.FieldJitter:
		if kind, factor, ok := strings.Cut(t, ":"); ok && strings.Count(factor, ",") == 1 && !strings.Contains(factor, ".") {
			return kind + ":" + strings.Replace(factor, ",", ".", 1)
		}
		return t
	case calc.FieldInitial, calc.FieldMax, calc.FieldDeadline, FieldTimeout:
		if d, ok := humanDuration(t); ok {
			return d.String()
		}
		if strings.Count(t, ",") == 1 && !strings.Contains(t, ".") {
			return strings.Replace(t, ",", ".", 1) // "1,5s", "2,5"
		}
	}
	return t
}

// humanDuration parses the page's duration form: numbers each followed by a
// unit, separated by spaces. Go syntax without spaces is left to
// internal/calc, which reads it exactly.
func humanDuration(s string) (time.Duration, bool) {
	words := strings.Fields(s)
	if len(words) < 2 && !strings.ContainsAny(s, ",дмсчd") {
		return 0, false
	}
	// Join each number with its unit: "1 min 32 s" → "1 min", "32 s".
	var parts []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		if i+1 < len(words) && humanPart.MatchString(w+" "+words[i+1]) {
			w += " " + words[i+1]
			i++
		}
		parts = append(parts, w)
	}
	var total time.Duration
	for _, p := range parts {
		m := humanPart.FindStringSubmatch(p)
		if m == nil {
			return 0, false
		}
		x, err := strconv.ParseFloat(strings.Replace(m[1], ",", ".", 1), 64)
		ns := x * float64(humanUnits[m[2]])
		if err != nil || ns >= float64(maxDuration-total) {
			return 0, false
		}
		total += time.Duration(ns + 0.5)
	}
	return total, true
}
