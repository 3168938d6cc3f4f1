package page

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/again-go/again/cmd/again/internal/calc"
	"github.com/again-go/again/cmd/again/internal/web/internal/catalog"
)

// Lang is a language of the page: "en" or "ru". Any other value reads as
// English, so that a bad query parameter cannot break the page.
type Lang string

// The page's languages.
const (
	English Lang = "en"
	Russian Lang = "ru"
)

func (l Lang) ru() bool { return l == Russian }

// t returns the page catalogue's string for key in language l.
func (l Lang) t(key string) string { return catalog.Text(string(l), key) }

// f formats the catalogue's format for key with args.
func (l Lang) f(key string, args ...any) string { return fmt.Sprintf(l.t(key), args...) }

// decimal writes the number s, formatted with a decimal point ("1.5"),
// with language l's decimal sign: "1,5" in Russian.
func (l Lang) decimal(s string) string { return strings.Replace(s, ".", l.t("go.decimalPoint"), 1) }

// plural returns the form for n of the word in the catalogue's key (a
// ".plural" key): English one|many, Russian one|few|many.
func (l Lang) plural(key string, n int64) string {
	forms := strings.Split(l.t(key), "|")
	i := 0
	if l.ru() {
		i = ruPlural(n)
	} else if n != 1 {
		i = 1
	}
	return forms[min(i, len(forms)-1)]
}

const (
	day         = 24 * time.Hour
	maxDuration = time.Duration(math.MaxInt64)
)

// Duration writes d the way the page shows it in language l. Below a day it
// is the calculator's calc.Human form ("1 min 32 s", "45.8 s"; in
// Russian "1 мин 32 с", "45,8 с"), so the page and `again calc` print the
// same text for every realistic schedule. From a day on it switches to
// units a reader can take in, where Human would write "1281023 h 53 min":
// days and hours ("3 d 4 h") below 1,000 days, whole years above, and
// "more than 292 years" for the largest duration, where saturated sums
// end.
func (l Lang) Duration(d time.Duration) string {
	if d < 0 {
		return "−" + l.Duration(-max(d, -maxDuration))
	}
	switch {
	case d == maxDuration:
		return l.t("go.duration.forever")
	case d == 0:
		return l.t("go.duration.zero")
	case d < time.Microsecond:
		return strconv.FormatInt(int64(d), 10) + " " + l.t("go.unit.ns")
	case roundTo(d, time.Microsecond) < 1000:
		// A sub-millisecond schedule never shows as "0 ms".
		return strconv.FormatInt(roundTo(d, time.Microsecond), 10) + " " + l.t("go.unit.us")
	case roundTo(d, time.Millisecond) < 1000:
		return strconv.FormatInt(roundTo(d, time.Millisecond), 10) + " " + l.t("go.unit.ms")
	case roundTo(d, 100*time.Millisecond) < 600:
		tenths := roundTo(d, 100*time.Millisecond)
		s := strconv.FormatInt(tenths/10, 10)
		if t := tenths % 10; t != 0 {
			s += l.t("go.decimalPoint") + strconv.FormatInt(t, 10)
		}
		return s + " " + l.t("go.unit.s")
	case roundTo(d, time.Second) < 86400:
		secs := roundTo(d, time.Second)
		return l.parts([]int64{secs / 3600, secs / 60 % 60, secs % 60}, []string{l.t("go.unit.h"), l.t("go.unit.min"), l.t("go.unit.s")})
	case d < 1000*day:
		hours := roundTo(d, time.Hour)
		return l.parts([]int64{hours / 24, hours % 24}, []string{l.t("go.unit.d"), l.t("go.unit.h")})
	}
	years := roundTo(d, time.Duration(365.25*float64(day)))
	return strconv.FormatInt(years, 10) + " " + l.plural("go.unit.years", years)
}

// Exact writes d in Duration's units without rounding it, so that a value
// the user gave (the deadline, an attempt's timeout) is echoed as given:
// "1.5 ms" where Duration writes "2 ms", "1 min 31.5 s" where it writes
// "1 min 32 s". Below a day it is calc.HumanExact's form in l's words, as
// `again calc` prints a deadline; from a day on, days, hours, minutes and
// seconds. Where Duration does not round, the two agree.
func (l Lang) Exact(d time.Duration) string {
	if d < 0 {
		return "−" + l.Exact(-max(d, -maxDuration))
	}
	switch {
	case d == 0:
		return l.t("go.duration.zero")
	case d < time.Microsecond:
		return strconv.FormatInt(int64(d), 10) + " " + l.t("go.unit.ns")
	case d < time.Millisecond:
		return l.decimal(calc.ExactIn(d, time.Microsecond)) + " " + l.t("go.unit.us")
	case d < time.Second:
		return l.decimal(calc.ExactIn(d, time.Millisecond)) + " " + l.t("go.unit.ms")
	case d < time.Minute:
		return l.decimal(calc.ExactIn(d, time.Second)) + " " + l.t("go.unit.s")
	}
	var out []string
	for _, p := range []struct {
		n    int64
		unit string
	}{{int64(d / day), "go.unit.d"}, {int64(d / time.Hour % 24), "go.unit.h"}, {int64(d / time.Minute % 60), "go.unit.min"}} {
		if p.n != 0 {
			out = append(out, strconv.FormatInt(p.n, 10)+" "+l.t(p.unit))
		}
	}
	if s := d % time.Minute; s != 0 {
		out = append(out, l.decimal(calc.ExactIn(s, time.Second))+" "+l.t("go.unit.s"))
	}
	return strings.Join(out, " ")
}

// parts joins the non-zero values with their units: "1 h 5 s".
func (l Lang) parts(vals []int64, units []string) string {
	var out []string
	for i, v := range vals {
		if v != 0 {
			out = append(out, strconv.FormatInt(v, 10)+" "+units[i])
		}
	}
	return strings.Join(out, " ")
}

// roundTo returns d (>= 0) in units of unit, rounded half up. A quotient
// of two durations is exact in a float64 at the halves that matter (k + 0.5
// is representable), so this rounds as backoff.Human does.
func roundTo(d, unit time.Duration) int64 {
	return int64(math.Floor(float64(d)/float64(unit) + 0.5))
}

// ruPlural returns which Russian form n takes: 0 for one (1 год, 21
// год), 1 for few (2 года), 2 for many (5 лет, 11 лет).
func ruPlural(n int64) int {
	switch n10, n100 := n%10, n%100; {
	case n10 == 1 && n100 != 11:
		return 0
	case n10 >= 2 && n10 <= 4 && (n100 < 12 || n100 > 14):
		return 1
	}
	return 2
}

// retriesOf writes "n retries" after "of": "of 8 retries", "из 8 повторов".
func (l Lang) retriesOf(n int) string {
	return l.f("go.retriesOf", n, l.plural("go.retriesOf.plural", int64(n)))
}
