package page

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/again-go/again/backoff/plan"
	"github.com/again-go/again/cmd/again/internal/calc"
)

// russian renders each of internal/calc's message keys in Russian, as
// calc renders them in English: {name} stands for Args["name"] and {value}
// for the rejected value. A key missing here falls back to English
// (TestEveryKeyIsRussian fails first).
var russian = map[calc.Key]string{
	calc.KeyDuration:         "Нужна длительность от {min} до {max} (в синтаксисе Go: 500ms, 1.5s, 2m — или число миллисекунд); введено {value}.",
	calc.KeyDurationNoCap:    "Нужна длительность от {min} до {max}, 0 — без ограничения (в синтаксисе Go: 500ms, 1.5s, 2m — или число миллисекунд); введено {value}.",
	calc.KeyPositiveDuration: "Нужна длительность больше 0 и не больше {max} (в синтаксисе Go: 500ms, 1.5s, 2m — или число миллисекунд); введено {value}.",
	calc.KeyNumberAtLeast:    "Нужно конечное число не меньше {min}; введено {value}.",
	calc.KeyWholeNumber:      "Нужно целое число от {min} до {max}; введено {value}.",
	calc.KeyJitter:           "Нужно одно из: none, full, equal, decorrelated или proportional:F, где F в (0, 1]; введено {value}.",
	calc.KeyOneOf:            "Нужно одно из: {choices}; введено {value}.",
	calc.KeyUnknownField:     "Это не поле калькулятора; допустимые: {fields}.",
	calc.KeyRequiresDeadline: "Нужен дедлайн: подбор ищет наибольшее значение {param}, при котором общее ожидание укладывается в дедлайн.",
	calc.KeyInvalidPolicy:    "Неверная политика: {error}.",
}

// message returns err, an error of internal/calc about the inputs v, as
// the page shows it under the field, in language l: calc's own English
// message (the one `again calc` prints, without the flag name), or its
// key and arguments in Russian. The value it quotes is what the user
// typed, not its Go-syntax form (see normalize).
func message(err error, v map[string]string, l Lang) Message {
	var ie *calc.InputError
	if !errors.As(err, &ie) {
		return Message{Text: err.Error()}
	}
	e := *ie
	if typed, ok := v[e.Field]; ok {
		e.Value = typed
	}
	if t, ok := russian[e.Key]; ok && l.ru() {
		pairs := []string{"{value}", quote(e.Value)}
		for k, a := range e.Args {
			pairs = append(pairs, "{"+k+"}", strings.ReplaceAll(a, " or ", " или "))
		}
		return Message{Field: e.Field, Text: strings.NewReplacer(pairs...).Replace(t)}
	}
	return Message{Field: e.Field, Text: capitalize(e.Detail()) + "."}
}

// quote shows a value in a message: numbers as they are, anything else in
// quotes, so that an empty or odd value is still visible.
func quote(s string) string {
	if _, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "nNiIxX_") {
		return s
	}
	return strconv.Quote(s)
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
	param := map[plan.Param][2]string{
		plan.ParamInitial:    {"initial delay", "первой задержки"},
		plan.ParamMultiplier: {"multiplier", "множителя"},
		plan.ParamRetries:    {"number of retries", "числа повторов"},
	}[se.Param]
	what := [2]string{"worst-case total wait", "худшее общее ожидание"}
	if se.Target == plan.TargetP99 {
		what = [2]string{"99th-percentile total wait", "99-й процентиль общего ожидания"}
	}
	dl := l.Duration(deadline)
	switch {
	case errors.Is(se.Err, plan.ErrUnbounded):
		return fmt.Sprintf(l.pick("Every %[1]s keeps the %[2]s within %[3]s, so there is no largest one to show.",
			"При любом значении %[1]s %[2]s укладывается в %[3]s, так что наибольшего нет."), l.pick(param[0], param[1]), l.pick(what[0], what[1]), dl)
	case errors.Is(se.Err, calc.ErrTooManyRetries):
		return fmt.Sprintf(l.pick("Up to %[1]d retries keep the %[2]s within %[3]s, more than the %[4]d the calculator shows; raise the initial delay or the maximum.",
			"В %[3]s %[2]s укладывается и при %[1]d повторах — больше %[4]d, которые показывает калькулятор; увеличьте первую задержку или максимум."),
			se.Retries, l.pick(what[0], what[1]), dl, calc.MaxRetries)
	}
	return fmt.Sprintf(l.pick("No %[1]s keeps the %[2]s within %[3]s.", "Ни при каком значении %[1]s %[2]s не укладывается в %[3]s."),
		l.pick(param[0], param[1]), l.pick(what[0], what[1]), dl)
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
