// Package rate reads the value of every rate flag of the again command.
//
// Its one grammar is N/UNIT, N events per UNIT, such as 40/s, 10/100ms
// or 600/m: proxy --rate (a rate limit), sim outage --rate and --spike-rate (arrival
// rates) and sim throttle --capacity (a service rate) all read their value
// with Parse, so that one spelling means the same in each. A rate takes its
// unit as a duration does (cmdutil.RequireUnit): a bare 40 is refused
// rather than read as 40 per second, since a rate limit is as often per
// minute; a bare 0 is 0 in every unit.
//
//	r, err := rate.Parse("600/m")
//	r.PerSecond() // 10
package rate

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/again-go/again/cmd/again/internal/calc"
)

// Syntax is what Parse accepts, for help texts and messages.
const Syntax = "n/unit, such as 40/s, 10/100ms or 600/m"

// Rate is N events per Per. The zero Rate is 0 per 0, which Parse never
// returns: its Per is always above 0. A Rate is a value, safe to copy and
// to share.
type Rate struct {
	N   float64       // events per Per: finite, 0 or more
	Per time.Duration // above 0
}

// PerSecond returns r as events per second.
func (r Rate) PerSecond() float64 { return r.N / r.Per.Seconds() }

// String returns r as Parse reads it: "40/s", "10/100ms", "600/m",
// "3/2m", its unit written as calc.Short writes a duration.
func (r Rate) String() string {
	var per string
	switch r.Per {
	case time.Hour:
		per = "h"
	case time.Minute:
		per = "m"
	case time.Second:
		per = "s"
	case time.Millisecond:
		per = "ms"
	default:
		// Written as the command writes every duration, "2m" rather than
		// time.Duration's "2m0s"; Parse reads it back to the same Duration.
		per = calc.Short(r.Per)
	}
	return strconv.FormatFloat(r.N, 'g', -1, 64) + "/" + per
}

// ErrSyntax is matched (errors.Is) by every error of Parse.
var ErrSyntax = errors.New("rate: not " + Syntax)

// ErrNoUnit is matched (errors.Is) by Parse's error for a bare number
// other than 0: a rate without its unit, which a caller asks for by name.
var ErrNoUnit = errors.New("rate: a number without its unit")

// Error is an input that Parse refuses.
type Error struct {
	Value  string // the input, as given
	NoUnit bool   // a bare number other than 0
}

// Error returns the message, with the input.
func (e *Error) Error() string {
	if e.NoUnit {
		return "rate: " + strconv.Quote(e.Value) + " has no unit: want " + Syntax
	}
	return "rate: " + strconv.Quote(e.Value) + ": want " + Syntax
}

// Is reports whether target is ErrSyntax, or ErrNoUnit for a bare number.
func (e *Error) Is(target error) bool {
	return target == ErrSyntax || target == ErrNoUnit && e.NoUnit
}

// Parse reads a rate written N/UNIT, surrounding spaces aside: N a decimal
// number, 0 or more (40, 0.5, 1e3), UNIT a duration in Go's syntax above
// 0, whose 1 may be left out (s, ms, m, h, 100ms, 1m30s). A bare 0 is 0
// per second. Anything else is an *Error; a bare number other than 0 is
// one that matches ErrNoUnit.
func Parse(s string) (Rate, error) {
	t := strings.TrimSpace(s)
	n, unit, ok := strings.Cut(t, "/")
	if !ok {
		if v, ok := number(t); ok {
			if v == 0 {
				return Rate{0, time.Second}, nil
			}
			return Rate{}, &Error{Value: s, NoUnit: true}
		}
		return Rate{}, &Error{Value: s}
	}
	v, ok := number(n)
	if !ok {
		return Rate{}, &Error{Value: s}
	}
	if unit != "" && (unit[0] < '0' || unit[0] > '9') && unit[0] != '.' {
		unit = "1" + unit
	}
	per, err := time.ParseDuration(unit)
	if err != nil || per <= 0 {
		return Rate{}, &Error{Value: s}
	}
	return Rate{v, per}, nil
}

// number reads N: a finite decimal number, 0 or more, without a sign,
// Go's hexadecimal or underscores, infinities or NaN.
func number(s string) (float64, bool) {
	if s == "" || strings.Trim(s, "0123456789.eE+-") != "" || s[0] == '+' || s[0] == '-' {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) || v < 0 {
		return 0, false
	}
	return v, true
}
