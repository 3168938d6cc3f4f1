package calc

import (
	"errors"
	"maps"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/backoff/plan"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"500ms", 500 * time.Millisecond},
		{"1.5s", 1500 * time.Millisecond},
		{"2m", 2 * time.Minute},
		{"1h30m", 90 * time.Minute},
		{"500", 500 * time.Millisecond}, // a bare number means milliseconds, as in the seed
		{"0.5", 500 * time.Microsecond},
		{"1e3", time.Second},
		{"+7", 7 * time.Millisecond},
		{".25", 250 * time.Microsecond},
		{"0", 0},
		{"-0", 0},
		{" 250 ", 250 * time.Millisecond},
		{"2562047h47m16.854775807s", math.MaxInt64},
		{"9223372036854", 9223372036854 * time.Millisecond},
		{"9223372036854.7758074", math.MaxInt64},
		{"5.", 5 * time.Millisecond},
		// Below the nanosecond both forms of a number round alike, half up.
		{"0.0000019", 2},
		{"1.9e-6", 2},
		{"0.0000015", 2},
		{"1.5e-6", 2},
		{"0.0000014", 1},
		{"-0.0", 0},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDuration(tt.in)
			if err != nil || got != tt.want {
				t.Errorf("ParseDuration(%q) = %v, %v; want %v, nil", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseDurationRejects(t *testing.T) {
	for _, in := range []string{
		"", " ", "abc", "5 s", "-5s", "-1", "-0.001", "NaN", "nan", "Inf", "+Inf", "-Inf", "infinity",
		"0x10", "0x1p3", "1_000", "1e300", "9223372036855", "9223372036854.7758075", "2562048h",
		"-0.0000001", "-1e-400", "1.5.5", "e3", "5e", "ms",
	} {
		t.Run(in, func(t *testing.T) {
			got, err := ParseDuration(in)
			var ie *InputError
			if !errors.As(err, &ie) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("ParseDuration(%q) = %v, %v; want an *InputError matching ErrInvalid", in, got, err)
			}
			if ie.Value != in || !strings.Contains(err.Error(), "bare number of milliseconds") {
				t.Errorf("ParseDuration(%q) error = %q; want the value and the accepted syntax", in, err)
			}
		})
	}
}

// FuzzParseDuration checks that no text makes ParseDuration panic or return
// a negative duration, and that every duration it returns reads back the
// same from its Go form.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"500ms", "1.5s", "500", "0.5", "-1", "NaN", "1e300", "2562047h47m16.854775807s", "0x10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("ParseDuration(%q) error %v does not match ErrInvalid", s, err)
			}
			return
		}
		if d < 0 {
			t.Fatalf("ParseDuration(%q) = %v, want >= 0", s, d)
		}
		if back, err := ParseDuration(d.String()); err != nil || back != d {
			t.Fatalf("ParseDuration(%q) = %v, but ParseDuration(%q) = %v, %v", s, d, d.String(), back, err)
		}
	})
}

func TestParseDefaults(t *testing.T) {
	for _, v := range []Values{nil, {}, DefaultValues(), {FieldInitial: "", FieldDeadline: ""}} {
		in, err := Parse(v)
		if err != nil {
			t.Fatalf("Parse(%v) error: %v", v, err)
		}
		want := Input{Policy: backoff.Default(), Seed: plan.DefaultSeed}
		if !reflect.DeepEqual(in, want) {
			t.Errorf("Parse(%v) = %+v, want %+v", v, in, want)
		}
	}
}

// TestParseZeroMeansNone checks that the calculator keeps the seed's
// meaning of 0 (no wait, no cap, no retries) although backoff.Policy reads
// a zero field as its default, and that the report echoes the user's 0.
func TestParseZeroMeansNone(t *testing.T) {
	in, err := Parse(Values{FieldInitial: "0", FieldMax: "0", FieldRetries: "0"})
	if err != nil {
		t.Fatal(err)
	}
	p := in.Policy
	if p.Initial >= 0 || p.Max != backoff.NoCap || p.Retries != backoff.NoRetries {
		t.Errorf("Parse(initial=0, max=0, retries=0).Policy = %+v, want a negative Initial, NoCap and NoRetries", p)
	}
	if got := p.MaxAttempts(); got != 1 {
		t.Errorf("MaxAttempts() = %d, want 1 for --retries 0", got)
	}
	in, err = Parse(Values{FieldInitial: "0", FieldMax: "0", FieldRetries: "3"})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := (PolicyReport{Multiplier: 2, Retries: 3, Jitter: "full"}); rep.Policy != want {
		t.Errorf("Report.Policy = %+v, want the user's zeros echoed: %+v", rep.Policy, want)
	}
	if rep.Total.Max != 0 {
		t.Errorf("Total.Max = %v with --initial 0, want 0 (no wait)", rep.Total.Max)
	}
	in, _ = Parse(Values{FieldInitial: "8s", FieldMax: "0", FieldRetries: "3", FieldJitter: "none"})
	if rep, _ = Compute(in); rep.Total.Max != Millis(56*time.Second) {
		t.Errorf("Total.Max = %v with --max 0, want 56000 (8+16+32 s, no cap)", rep.Total.Max)
	}
	// A deadline of 0 is none, as an empty one.
	for _, zero := range []string{"0", "0s", "0ms"} {
		if in, err := Parse(Values{FieldDeadline: zero}); err != nil || in.Deadline != 0 {
			t.Errorf("Parse(deadline=%s) = deadline %v, %v; want none", zero, in.Deadline, err)
		}
	}
}

func TestParse(t *testing.T) {
	in, err := Parse(Values{
		FieldInitial: "250", FieldMultiplier: "1.5", FieldMax: "0", FieldRetries: "10000",
		FieldJitter: "proportional:0.5", FieldDeadline: "1m", FieldSolve: "multiplier", FieldTarget: "p99", FieldSeed: "18446744073709551615",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Input{
		Policy: backoff.Policy{
			Initial: 250 * time.Millisecond, Multiplier: 1.5, Max: backoff.NoCap, Retries: 10000,
			Jitter: backoff.ProportionalJitter, JitterFactor: 0.5,
		},
		Deadline: time.Minute, Solve: true, Param: plan.ParamMultiplier, Target: plan.TargetP99, Seed: math.MaxUint64,
	}
	if !reflect.DeepEqual(in, want) {
		t.Errorf("Parse = %+v, want %+v", in, want)
	}
	for _, tt := range []struct {
		solve string
		want  plan.Param
	}{{"initial", plan.ParamInitial}, {"multiplier", plan.ParamMultiplier}, {"retries", plan.ParamRetries}} {
		in, err := Parse(Values{FieldSolve: tt.solve, FieldDeadline: "10s"})
		if err != nil || !in.Solve || in.Param != tt.want {
			t.Errorf("Parse(solve %s) = %+v, %v; want Param %v", tt.solve, in, err, tt.want)
		}
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		field, value string
		want         string // the whole message after "calc: "
	}{
		{FieldInitial, "abc", `--initial "abc": want a duration of 0 or more, with no limit short of 292 years (Go syntax such as 500ms, 1.5s or 2m, or a bare number of milliseconds)`},
		{FieldInitial, "-5s", `--initial "-5s": want a duration of 0 or more, with no limit short of 292 years (Go syntax such as 500ms, 1.5s or 2m, or a bare number of milliseconds)`},
		{FieldInitial, "NaN", `--initial "NaN": want a duration of 0 or more, with no limit short of 292 years (Go syntax such as 500ms, 1.5s or 2m, or a bare number of milliseconds)`},
		{FieldMax, "-1", `--max "-1": want a duration of 0 or more, 0 meaning no cap (Go syntax such as 500ms, 1.5s or 2m, or a bare number of milliseconds)`},
		{FieldMax, "Inf", `--max "Inf": want a duration of 0 or more, 0 meaning no cap (Go syntax such as 500ms, 1.5s or 2m, or a bare number of milliseconds)`},
		{FieldDeadline, "soon", `--deadline "soon": want a duration of 0 or more, with no limit short of 292 years (Go syntax such as 500ms, 1.5s or 2m, or a bare number of milliseconds)`},
		{FieldMultiplier, "0.5", `--multiplier "0.5": want a finite number >= 1`},
		{FieldMultiplier, "0", `--multiplier "0": want a finite number >= 1`},
		{FieldMultiplier, "-2", `--multiplier "-2": want a finite number >= 1`},
		{FieldMultiplier, "NaN", `--multiplier "NaN": want a finite number >= 1`},
		{FieldMultiplier, "+Inf", `--multiplier "+Inf": want a finite number >= 1`},
		{FieldMultiplier, "1e400", `--multiplier "1e400": want a finite number >= 1`},
		{FieldMultiplier, "two", `--multiplier "two": want a finite number >= 1`},
		{FieldRetries, "-1", `--retries "-1": want a whole number from 0 to 100000`},
		{FieldRetries, "100001", `--retries "100001": want a whole number from 0 to 100000`},
		{FieldRetries, "1.5", `--retries "1.5": want a whole number from 0 to 100000`},
		{FieldRetries, "99999999999999999999", `--retries "99999999999999999999": want a whole number from 0 to 100000`},
		{FieldJitter, "gaussian", `--jitter "gaussian": want none, full, equal, decorrelated, proportional:F or grpc:F with F in (0, 1]`},
		{FieldJitter, "proportional:2", `--jitter "proportional:2": want none, full, equal, decorrelated, proportional:F or grpc:F with F in (0, 1]`},
		{FieldJitter, "full:0.5", `--jitter "full:0.5": want none, full, equal, decorrelated, proportional:F or grpc:F with F in (0, 1]`},
		{FieldSolve, "max", `--solve "max": want one of initial, multiplier or retries`},
		{FieldTarget, "p50", `--target "p50": want one of max or p99`},
		{FieldSeed, "-1", `--seed "-1": want a whole number from 0 to 18446744073709551615`},
		{FieldSolve, "initial", `--solve requires --deadline: the solver finds the largest initial whose total wait fits a deadline`},
		{"timeout", "1s", `--timeout is not a calculator field; want one of initial, multiplier, max, retries, jitter, deadline, solve, target or seed`},
	}
	for _, tt := range tests {
		t.Run(tt.field+"="+tt.value, func(t *testing.T) {
			_, err := Parse(Values{tt.field: tt.value})
			var ie *InputError
			if !errors.As(err, &ie) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse(%s=%q) error = %v, want an *InputError matching ErrInvalid", tt.field, tt.value, err)
			}
			if ie.Field != tt.field {
				t.Errorf("Parse(%s=%q) error names field %q", tt.field, tt.value, ie.Field)
			}
			if got := ie.Message(); got != tt.want {
				t.Errorf("Parse(%s=%q) error =\n%s\nwant\n%s", tt.field, tt.value, got, tt.want)
			}
			if got := err.Error(); got != "calc: "+tt.want {
				t.Errorf("Error() = %q, want the message prefixed with calc:", got)
			}
		})
	}
}

// FuzzParse checks that any text in any field either gives a valid policy
// within the documented bounds or an *InputError naming a field.
func FuzzParse(f *testing.F) {
	f.Add("500ms", "2", "30s", "8", "full", "", "", "", "")
	f.Add("1h", "10", "0", "100", "decorrelated", "1m", "retries", "p99", "7")
	f.Add("-1", "0", "NaN", "-3", "proportional:0", "0", "x", "y", "z")
	f.Fuzz(func(t *testing.T, initial, multiplier, max, retries, jitter, deadline, solve, target, seed string) {
		v := Values{
			FieldInitial: initial, FieldMultiplier: multiplier, FieldMax: max, FieldRetries: retries,
			FieldJitter: jitter, FieldDeadline: deadline, FieldSolve: solve, FieldTarget: target, FieldSeed: seed,
		}
		in, err := Parse(v)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("Parse(%v) error %v is not an *InputError", v, err)
			}
			if _, known := DefaultValues()[ie.Field]; !known {
				t.Fatalf("Parse(%v) error names unknown field %q", v, ie.Field)
			}
			return
		}
		p := in.Policy
		if err := p.Validate(); err != nil {
			t.Fatalf("Parse(%v) gave an invalid policy: %v", v, err)
		}
		if p.Multiplier < 1 || p.Retries > MaxRetries || in.Deadline < 0 || in.Solve && in.Deadline == 0 {
			t.Fatalf("Parse(%v) = %+v, out of the documented bounds", v, in)
		}
	})
}

// TestJitterSyntaxMatchesBackoff keeps the calculator's JitterSyntax equal to
// what backoff.ParseJitter says it accepts.
func TestJitterSyntaxMatchesBackoff(t *testing.T) {
	_, _, err := backoff.ParseJitter("gaussian")
	var fe *backoff.FieldError
	if !errors.As(err, &fe) || fe.Accepted != JitterSyntax {
		t.Errorf("ParseJitter(\"gaussian\") error = %v; want Accepted = JitterSyntax %q", err, JitterSyntax)
	}
}

// TestInputErrorStructured checks that an error carries its field, the
// rejected value and a language-free key with arguments, so that the page
// can say it in Russian, and that every key has an English message.
func TestInputErrorStructured(t *testing.T) {
	tests := []struct {
		field, value string
		key          Key
		args         map[string]string
	}{
		{FieldInitial, "abc", KeyDuration, nil},
		{FieldMax, "-1", KeyDurationNoCap, nil},
		{FieldDeadline, "-1s", KeyDuration, nil},
		{FieldMultiplier, "0.5", KeyNumberAtLeast, map[string]string{"min": "1"}},
		{FieldRetries, "100001", KeyWholeNumber, map[string]string{"min": "0", "max": "100000"}},
		{FieldJitter, "gaussian", KeyJitter, nil},
		{FieldTarget, "p50", KeyOneOf, map[string]string{"choices": "max or p99"}},
		{FieldSolve, "initial", KeyRequiresDeadline, map[string]string{"param": "initial"}},
	}
	for _, tt := range tests {
		_, err := Parse(Values{tt.field: tt.value})
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Fatalf("Parse(%s=%q) = %v, want an *InputError", tt.field, tt.value, err)
		}
		if ie.Field != tt.field || ie.Value != tt.value || ie.Key != tt.key || !maps.Equal(ie.Args, tt.args) {
			t.Errorf("Parse(%s=%q) error = %+v, want key %q, args %v", tt.field, tt.value, ie, tt.key, tt.args)
		}
	}
	for _, k := range []Key{KeyDuration, KeyDurationNoCap, KeyNumberAtLeast, KeyWholeNumber,
		KeyJitter, KeyOneOf, KeyUnknownField, KeyRequiresDeadline, KeyInvalidPolicy} {
		if english[k] == "" && accepted[k] == "" {
			t.Errorf("key %q has no English message", k)
		}
	}
}

// TestLongValueShortened checks that a very long rejected value is cut in
// the message, which still says how long it was.
func TestLongValueShortened(t *testing.T) {
	long := strings.Repeat("x", 10_000)
	_, err := Parse(Values{FieldMultiplier: long})
	msg := err.Error()
	if len(msg) > 200 || !strings.Contains(msg, "(10000 bytes)") {
		t.Errorf("error for a 10,000-byte value = %q (%d bytes), want it cut and the length named", msg, len(msg))
	}
}

// TestDetailWith checks that a page can show the rejected value in its own
// style, with the same words, and that IsNumber tells which values Detail
// shows unquoted.
func TestDetailWith(t *testing.T) {
	_, err := Parse(Values{FieldInitial: "fast"})
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Fatal(err)
	}
	if got, want := ie.DetailWith(func(v string) string { return "“" + v + "”" }), strings.Replace(ie.Detail(), `"fast"`, "“fast”", 1); got != want || got == ie.Detail() {
		t.Errorf("DetailWith = %q, want %q", got, want)
	}
	for s, want := range map[string]bool{"1e309": true, "-1": true, ".5": true, "0.5": true, "fast": false, "": false, "NaN": false, "0x10": false, "1_000": false} {
		if IsNumber(s) != want {
			t.Errorf("IsNumber(%q) = %v, want %v", s, !want, want)
		}
	}
}

// TestJitterNames checks that every name JitterNames lists is accepted by
// --jitter and names its own kind.
func TestJitterNames(t *testing.T) {
	names := JitterNames()
	if len(names) != 6 {
		t.Fatalf("JitterNames() = %v, want the six kinds", names)
	}
	for i, name := range names {
		j, _, err := backoff.ParseJitter(name)
		if err != nil || int(j) != i || !strings.Contains(JitterSyntax, name) {
			t.Errorf("JitterNames()[%d] = %q: ParseJitter gives %v, %v; want kind %d, named in JitterSyntax", i, name, j, err, i)
		}
	}
}
