package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/again-go/again/cmd/again/internal/rate"
	"github.com/again-go/again/fault"
)

// ErrSpec is matched (errors.Is) by every error in a fault's flag value or
// scenario file: the command reports it as a usage error.
var ErrSpec = errors.New("proxy: invalid fault")

// SpecError is an invalid fault flag value or scenario entry.
type SpecError struct {
	Flag  string // the flag, such as "--fail", or "scenario[2]"
	Value string // what was given
	Want  string // what is accepted
}

// Error returns "proxy: " and Message.
func (e *SpecError) Error() string { return "proxy: " + e.Message() }

// Message returns `FLAG "VALUE": want WANT`, the error without its
// package's prefix, for a line that has its own.
func (e *SpecError) Message() string {
	return fmt.Sprintf("%s %q: want %s", e.Flag, e.Value, e.Want)
}

// Is reports whether target is ErrSpec.
func (e *SpecError) Is(target error) bool { return target == ErrSpec }

// Flag syntax, one place for the parsers, the help and the errors. A
// SHARE is a fraction of the requests, above 0 and up to 1 (the fault's
// Rate); a rate is N/UNIT (RateSyntax), as in every command.
const (
	FailSyntax       = "share[:status], such as 0.2:503, with " + fault.StatusAccepted + " (503 by default)"
	LatencySyntax    = "duration or dist, such as 50ms, lognormal:5ms,1.2 or pareto:5ms,1.5"
	ResetSyntax      = "stage[:share], stage one of before-headers, after-headers, mid-body, such as mid-body:0.05"
	OutageSyntax     = "duration@start, such as 20s@10s: 503s for 20 s from 10 s after the start"
	RateSyntax       = rate.Syntax + ", n whole: a 429 beyond n requests per unit"
	MatchSyntax      = "method=m, path=prefix, host=h or header=name[:value]"
	RetryAfterSyntax = "a duration in whole seconds, such as 2s, or date:duration for an HTTP date"
	CutSyntax        = "share of the requests, above 0 and up to 1: a Content-Length longer than the body sent"
	StallSyntax      = "share of the requests, above 0 and up to 1: no answer until the client gives up"
)

// Flags are the fault flags of `again proxy`, as given.
type Flags struct {
	Fail, Reset, Latency, Outage, Rate, Cut, Stall []string
	RetryAfter                                     string
	Match                                          []string
}

// Faults turns the flags into faults, in a fixed order (outage, rate
// limit, fail, reset, cut, stall, latency): the first that applies to a
// request wins, so that an outage takes every request of its window and a
// latency only those no other fault took. Match and RetryAfter apply to
// each.
func (fl *Flags) Faults() ([]fault.Fault, error) {
	var m fault.Match
	for _, s := range fl.Match {
		if err := parseMatch(&m, s); err != nil {
			return nil, err
		}
	}
	var retryAfter time.Duration
	var retryDate bool
	if s := fl.RetryAfter; s != "" {
		d, date := strings.CutPrefix(s, "date:")
		v, err := time.ParseDuration(d)
		// Retry-After carries whole seconds: 1500ms would be sent as 2,
		// not what was written, so it is refused as the help says.
		if err != nil || v <= 0 || v%time.Second != 0 {
			return nil, &SpecError{"--retry-after", s, RetryAfterSyntax}
		}
		retryAfter, retryDate = v, date
	}
	var out []fault.Fault
	add := func(f fault.Fault) {
		f.Match = m
		if f.Kind == fault.Status || f.Kind == fault.Outage || f.Kind == fault.RateLimit {
			f.RetryAfter, f.RetryAfterDate = retryAfter, retryDate
		}
		out = append(out, f)
	}
	for _, s := range fl.Outage {
		d, start, ok := strings.Cut(s, "@")
		dv, err1 := time.ParseDuration(d)
		sv, err2 := time.ParseDuration(start)
		if !ok || err1 != nil || err2 != nil || dv <= 0 || sv < 0 {
			return nil, &SpecError{"--outage", s, OutageSyntax}
		}
		add(fault.Fault{Kind: fault.Outage, Start: sv, Duration: dv})
	}
	for _, s := range fl.Rate {
		// The grammar of every rate flag; a limit counts whole requests
		// in a window of at least a millisecond.
		r, err := rate.Parse(s)
		if err != nil || r.N < 1 || r.N != math.Trunc(r.N) || r.N > math.MaxInt32 || r.Per < time.Millisecond {
			return nil, &SpecError{"--rate", s, RateSyntax}
		}
		add(fault.Fault{Kind: fault.RateLimit, Limit: int(r.N), Window: r.Per})
	}
	for _, s := range fl.Fail {
		r, st, hasStatus := strings.Cut(s, ":")
		rate, err := parseRate(r)
		status := http.StatusServiceUnavailable
		if err == nil && hasStatus {
			status, err = strconv.Atoi(st)
			if err == nil && !fault.ValidStatus(status) {
				err = errors.New("status")
			}
		}
		if err != nil {
			return nil, &SpecError{"--fail", s, FailSyntax}
		}
		add(fault.Fault{Kind: fault.Status, Rate: rate, Status: status})
	}
	for _, s := range fl.Reset {
		st, r, hasRate := strings.Cut(s, ":")
		stage, err := fault.ParseStage(st)
		rate := 1.0
		if err == nil && hasRate {
			rate, err = parseRate(r)
		}
		if err != nil {
			return nil, &SpecError{"--reset", s, ResetSyntax}
		}
		add(fault.Fault{Kind: fault.Reset, Stage: stage, Rate: rate})
	}
	for _, c := range []struct {
		flag, syntax string
		kind         fault.Kind
		values       []string
	}{{"--cut", CutSyntax, fault.CutBody, fl.Cut}, {"--stall", StallSyntax, fault.Stall, fl.Stall}} {
		for _, s := range c.values {
			rate, err := parseRate(s)
			if err != nil {
				return nil, &SpecError{c.flag, s, c.syntax}
			}
			add(fault.Fault{Kind: c.kind, Rate: rate})
		}
	}
	for _, s := range fl.Latency {
		f := fault.Fault{Kind: fault.Latency}
		if d, err := time.ParseDuration(s); err == nil && d > 0 && d <= time.Hour {
			f.Delay = d
		} else if dist, err := fault.ParseDistribution(s); err == nil {
			f.Dist = dist
		} else {
			return nil, &SpecError{"--latency", s, LatencySyntax}
		}
		add(f)
	}
	return out, nil
}

func parseRate(s string) (float64, error) {
	r, err := strconv.ParseFloat(s, 64)
	if err != nil || !(r > 0 && r <= 1) {
		return 0, errors.New("rate")
	}
	return r, nil
}

func parseMatch(m *fault.Match, s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || v == "" {
		return &SpecError{"--match", s, MatchSyntax}
	}
	switch k {
	case "method":
		m.Method = strings.ToUpper(v)
	case "path":
		m.Path = v
	case "host":
		m.Host = v
	case "header":
		name, value, _ := strings.Cut(v, ":")
		m.Header, m.Value = http.CanonicalHeaderKey(name), value
	default:
		return &SpecError{"--match", s, MatchSyntax}
	}
	return nil
}

// Scenario is a scenario file: faults, their seed and their cap, in JSON.
//
//	{"seed": 1, "max_active": 100, "faults": [
//	  {"kind": "status", "rate": 0.2, "status": 503, "retry_after": "2s"},
//	  {"kind": "reset", "stage": "mid-body", "rate": 0.05, "match": {"path": "/api/"}},
//	  {"kind": "latency", "dist": "lognormal:5ms,1.2"},
//	  {"kind": "outage", "start": "10s", "duration": "20s"},
//	  {"kind": "status", "times": 2}
//	]}
type Scenario struct {
	Seed      uint64          `json:"seed"`
	MaxActive int             `json:"max_active"`
	Faults    []ScenarioFault `json:"faults"`
}

// ScenarioFault is one fault of a Scenario: fault.Fault's fields, with
// names as words and durations as strings ("2s").
type ScenarioFault struct {
	Kind           string            `json:"kind"`
	Rate           float64           `json:"rate"`
	Match          ScenarioMatch     `json:"match"`
	Skip           int               `json:"skip"`
	Times          int               `json:"times"`
	Start          string            `json:"start"`
	Duration       string            `json:"duration"`
	Status         int               `json:"status"`
	Header         map[string]string `json:"header"`
	RetryAfter     string            `json:"retry_after"`
	RetryAfterDate bool              `json:"retry_after_date"`
	Stage          string            `json:"stage"`
	Bytes          int64             `json:"bytes"`
	Delay          string            `json:"delay"`
	Dist           string            `json:"dist"`
	Limit          int               `json:"limit"`
	Window         string            `json:"window"`
}

// ScenarioMatch is fault.Match in a Scenario.
type ScenarioMatch struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Host   string `json:"host"`
	Header string `json:"header"`
	Value  string `json:"value"`
}

// ParseScenario reads a scenario file's content. Unknown fields are errors,
// so that a misspelt one is not silently ignored.
func ParseScenario(data []byte) (Scenario, []fault.Fault, error) {
	var sc Scenario
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return sc, nil, &SpecError{"scenario", err.Error(), "a JSON object of seed, max_active and faults"}
	}
	if sc.MaxActive < 0 {
		return sc, nil, &SpecError{"max_active", strconv.Itoa(sc.MaxActive), "at least 0 (0 leaves --max-active's)"}
	}
	out := make([]fault.Fault, len(sc.Faults))
	for i, s := range sc.Faults {
		where := fmt.Sprintf("faults[%d]", i)
		f := fault.Fault{Rate: s.Rate, Skip: s.Skip, Times: s.Times, Status: s.Status, RetryAfterDate: s.RetryAfterDate, Bytes: s.Bytes, Limit: s.Limit,
			Match: fault.Match{Method: s.Match.Method, Path: s.Match.Path, Host: s.Match.Host, Header: http.CanonicalHeaderKey(s.Match.Header), Value: s.Match.Value}}
		var err error
		if s.Kind != "" {
			if f.Kind, err = fault.ParseKind(s.Kind); err != nil {
				return sc, nil, &SpecError{where + ".kind", s.Kind, err.Error()}
			}
		}
		if s.Stage != "" {
			if f.Stage, err = fault.ParseStage(s.Stage); err != nil {
				return sc, nil, &SpecError{where + ".stage", s.Stage, "before-headers, after-headers or mid-body"}
			}
		}
		if s.Dist != "" {
			if f.Dist, err = fault.ParseDistribution(s.Dist); err != nil {
				return sc, nil, &SpecError{where + ".dist", s.Dist, LatencySyntax}
			}
		}
		for _, d := range []struct {
			name, v string
			p       *time.Duration
		}{{"start", s.Start, &f.Start}, {"duration", s.Duration, &f.Duration}, {"retry_after", s.RetryAfter, &f.RetryAfter}, {"delay", s.Delay, &f.Delay}, {"window", s.Window, &f.Window}} {
			if d.v == "" {
				continue
			}
			if *d.p, err = time.ParseDuration(d.v); err != nil {
				return sc, nil, &SpecError{where + "." + d.name, d.v, "a duration such as 2s"}
			}
		}
		if len(s.Header) > 0 {
			f.Header = http.Header{}
			for k, v := range s.Header {
				f.Header.Set(k, v)
			}
		}
		out[i] = f
	}
	if err := (&fault.Injector{Faults: out}).Validate(); err != nil {
		var fe *fault.FieldError
		if errors.As(err, &fe) {
			return sc, nil, &SpecError{scenarioField(fe.Field), fe.Value, fe.Accepted}
		}
		return sc, nil, &SpecError{"faults", err.Error(), "valid faults"}
	}
	return sc, out, nil
}

// scenarioField returns the name in a scenario file of a fault.Fault's
// field, as Validate names it: "Faults[2].RetryAfter" is
// "faults[2].retry_after", and the fields of Dist, a string in the file,
// are "dist".
func scenarioField(field string) string {
	if i := strings.Index(field, ".Dist."); i >= 0 {
		field = field[:i] + ".Dist"
	}
	var b strings.Builder
	for i, r := range field {
		if 'A' <= r && r <= 'Z' {
			if i > 0 && field[i-1] != '.' {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
