package calc

import (
	"slices"
	"strconv"
	"strings"

	"github.com/again-go/again/retry"
)

// Preset is a named retry policy to start from: the documented defaults of
// a widely used retry library or service, or the worked example. `again
// calc --preset NAME` and the web page's preset menu offer the same ones,
// from Presets. The zero Preset is no preset: it sets no field. A Preset
// is a value whose Values map the caller owns: share one between
// goroutines only to read it.
type Preset struct {
	// Name is what --preset takes and the page's URL and menu use: "aws".
	Name string
	// Values holds the policy's fields (initial, multiplier, max, retries,
	// jitter) in the calculator's syntax; a preset never sets the deadline,
	// which belongs to the caller, not to the policy.
	Values Values
	// Source is the address of the documentation the values come from, or
	// "" when the preset is this calculator's own.
	Source string
	// AsOf is the month the values were checked against Source: "2026-11";
	// "" for this calculator's own presets (the worked example, and
	// again's backoff.Default(), which the calculator computes from the
	// code itself), whose values no date can make stale.
	AsOf string
	// Classes are the preset's classes of failure, each with a schedule
	// of its own (see retry.Class and Input.Classes), or nil when the
	// preset has one schedule for every failure. The aws preset's are
	// retry.AWSClasses.
	Classes []retry.Class
}

// PolicyFields returns the fields a preset sets, in the command line's
// order.
func PolicyFields() []string {
	return []string{FieldInitial, FieldMultiplier, FieldMax, FieldRetries, FieldJitter}
}

// Presets returns every preset, in the order a menu shows them. Each call
// returns a new slice with new Values, so that callers may change them.
func Presets() []Preset {
	p := func(name, initial, multiplier, max, retries, jitter, source string) Preset {
		asOf := "2026-11"
		if name == "example" || name == "again" {
			asOf = ""
		}
		return Preset{Name: name, Source: source, AsOf: asOf, Values: Values{
			FieldInitial: initial, FieldMultiplier: multiplier, FieldMax: max, FieldRetries: retries, FieldJitter: jitter,
		}}
	}
	// AWS's two schedules are retry.AWSClasses', one fact in one place:
	// the call's policy is the transient one, and the classes show both.
	aws := func(name string, c retry.Class) Preset {
		pr := resolve(c.Policy)
		return p(name, pr.Initial.String(), strconv.FormatFloat(pr.Multiplier, 'g', -1, 64), pr.Max.String(),
			strconv.Itoa(retry.AWSMaxAttempts-1), pr.JitterText(), "https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html")
	}
	awsClasses := retry.AWSClasses()
	withClasses := aws("aws", awsClasses[1])
	withClasses.Classes = awsClasses
	return []Preset{
		p("example", "500ms", "2", "30s", "8", "full", ""),
		p("again", "500ms", "2", "10s", "3", "full", "https://pkg.go.dev/github.com/again-go/again/backoff#Default"),
		withClasses,
		aws("aws-throttle", awsClasses[0]),
		p("grpc-retry", "100ms", "2", "1s", "3", "full", "https://github.com/grpc/proposal/blob/master/A6-client-retries.md"),
		// grpc-go's internal/backoff: the first wait is BaseDelay, without
		// jitter, and the ±20 % follows the cap (waits reach 144 s): the
		// grpc jitter, checked against its formula by TestPresetGRPCConn.
		p("grpc-conn", "1s", "1.6", "120s", "10", "grpc:0.2", "https://github.com/grpc/grpc/blob/master/doc/connection-backoff.md"),
		p("gcloud", "100ms", "1.3", "60s", "30", "full", "https://github.com/googleapis/googleapis"),
		p("polly", "2s", "1", "0", "3", "none", "https://www.pollydocs.org/strategies/retry.html"),
		p("cenkalti", "500ms", "1.5", "60s", "25", "proportional:0.5", "https://pkg.go.dev/github.com/cenkalti/backoff/v5#ExponentialBackOff"),
		p("urllib3", "1s", "2", "120s", "2", "none", "https://urllib3.readthedocs.io/en/stable/reference/urllib3.util.html"),
		p("curl", "1s", "2", "10m", "5", "none", "https://curl.se/docs/manpage.html#--retry"),
	}
}

// PresetNames returns the presets' names in Presets' order.
func PresetNames() []string {
	var names []string
	for _, p := range Presets() {
		names = append(names, p.Name)
	}
	return names
}

// FieldPreset is the name of the flag that picks a preset. It is not a
// field of Values: a preset's Values are the fields it stands for.
const FieldPreset = "preset"

// PresetByName returns the preset called name. For any other name it
// returns an *InputError for FieldPreset (matching ErrInvalid) that lists
// the names: `--preset "x": want one of example, again, ... or curl`.
func PresetByName(name string) (Preset, error) {
	ps := Presets()
	if i := slices.IndexFunc(ps, func(p Preset) bool { return p.Name == name }); i >= 0 {
		return ps[i], nil
	}
	names := PresetNames()
	choices := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	return Preset{}, &InputError{Field: FieldPreset, Value: name, Key: KeyOneOf, Args: map[string]string{"choices": choices}}
}

// Command returns the preset's fields as `again calc` flags:
// "--initial 500ms --multiplier 2 --max 30s --retries 8 --jitter full".
func (p Preset) Command() string {
	var parts []string
	for _, f := range PolicyFields() {
		parts = append(parts, "--"+f+" "+p.Values[f])
	}
	return strings.Join(parts, " ")
}
