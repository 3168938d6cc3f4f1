package calc

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPresetsParse checks that every preset is a valid policy that sets
// exactly the policy fields, under a unique name.
func TestPresetsParse(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Presets() {
		if p.Name == "" || seen[p.Name] || strings.ContainsAny(p.Name, " \t") {
			t.Errorf("preset name %q is empty, repeated or has spaces", p.Name)
		}
		seen[p.Name] = true
		if len(p.Values) != len(PolicyFields()) {
			t.Errorf("preset %s sets %v, want exactly %v", p.Name, p.Values, PolicyFields())
		}
		for _, f := range PolicyFields() {
			if p.Values[f] == "" {
				t.Errorf("preset %s lacks %s", p.Name, f)
			}
		}
		if _, err := Parse(p.Values); err != nil {
			t.Errorf("preset %s: %v", p.Name, err)
		}
		// A date only for values checked against someone else's
		// documentation: the worked example and again's own default
		// cannot go stale.
		own := p.Name == "example" || p.Name == "again"
		if own != (p.AsOf == "") || (p.Source != "" && !strings.HasPrefix(p.Source, "https://")) {
			t.Errorf("preset %s: source %q, as of %q; want an https address or none, and a date unless the preset is the calculator's own", p.Name, p.Source, p.AsOf)
		}
	}
}

func TestPresetByName(t *testing.T) {
	p, err := PresetByName("aws")
	if err != nil || p.Values[FieldInitial] != "50ms" || p.Command() != "--initial 50ms --multiplier 2 --max 20s --retries 2 --jitter full" {
		t.Errorf("PresetByName(aws) = %+v, %v; want AWS's 50 ms standard mode", p, err)
	}
	// The worked example explained on the page and in the help.
	if p, _ := PresetByName("example"); p.Command() != "--initial 500ms --multiplier 2 --max 30s --retries 8 --jitter full" {
		t.Errorf("example preset = %s", p.Command())
	}
	_, err = PresetByName("azure")
	var ie *InputError
	if !errors.As(err, &ie) || !errors.Is(err, ErrInvalid) || ie.Field != FieldPreset {
		t.Fatalf("PresetByName(azure) error = %v, want an *InputError for preset matching ErrInvalid", err)
	}
	want := `--preset "azure": want one of example, again, aws, aws-throttle, grpc-retry, grpc-conn, gcloud, polly, cenkalti, urllib3 or curl`
	if ie.Message() != want {
		t.Errorf("message = %q, want %q", ie.Message(), want)
	}
}

// TestPresetsFresh checks that a caller changing a preset changes no
// other caller's.
func TestPresetsFresh(t *testing.T) {
	a := Presets()
	a[0].Values[FieldRetries] = "99"
	if b := Presets(); b[0].Values[FieldRetries] == "99" || !slices.Equal(PresetNames(), []string{"example", "again", "aws", "aws-throttle", "grpc-retry", "grpc-conn", "gcloud", "polly", "cenkalti", "urllib3", "curl"}) {
		t.Errorf("Presets shares its values between calls, or the names changed: %v", PresetNames())
	}
}

// grpcBackoff is grpc-go's connection backoff, internal/backoff's
// Exponential.Backoff with grpc/backoff.DefaultConfig (grpc-go at
// 4793ad047), with its rand.Float64() as u: the wait after retries
// failures.
func grpcBackoff(retries int, u float64) time.Duration {
	const base, multiplier, jitter, maxDelay = float64(time.Second), 1.6, 0.2, float64(120 * time.Second)
	if retries == 0 {
		return time.Duration(base)
	}
	backoff := base
	for backoff < maxDelay && retries > 0 {
		backoff *= multiplier
		retries--
	}
	if backoff > maxDelay {
		backoff = maxDelay
	}
	backoff *= 1 + jitter*(u*2-1)
	if backoff < 0 {
		return 0
	}
	return time.Duration(backoff)
}

// fixedRand returns its values in turn, and records how many were drawn.
type fixedRand struct {
	u     []float64
	drawn int
}

func (r *fixedRand) Float64() float64 {
	u := r.u[r.drawn%len(r.u)]
	r.drawn++
	return u
}

// TestPresetGRPCConn checks the grpc-conn preset against grpc-go's own
// formula: wait n is grpc-go's Backoff(n−1) for the same random draws
// (within a nanosecond per retry, for the float64 rounding of a power
// against repeated products), the first one drawing nothing, and the
// calculator's bounds are grpc-go's: 1 s exactly first, and up to 144 s
// once the 120 s cap is reached.
func TestPresetGRPCConn(t *testing.T) {
	preset, err := PresetByName("grpc-conn")
	if err != nil {
		t.Fatal(err)
	}
	preset.Values[FieldRetries] = "30"
	in, err := Parse(preset.Values)
	if err != nil {
		t.Fatal(err)
	}
	p := in.Policy
	for _, u := range []float64{0, 0.25, 0.5, 0.999999} {
		for n := 1; n <= 30; n++ {
			r := &fixedRand{u: []float64{u}}
			got, want := p.Sample(n, 0, r), grpcBackoff(n-1, u)
			if d := got - want; d < -time.Duration(n) || d > time.Duration(n) {
				t.Errorf("u %v: wait %d = %v, grpc-go's Backoff(%d) = %v", u, n, got, n-1, want)
			}
			if draws := min(n-1, 1); r.drawn != draws {
				t.Errorf("u %v: wait %d drew %d random numbers, grpc-go draws %d", u, n, r.drawn, draws)
			}
		}
	}
	rep, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	first, last := rep.Retries[0], rep.Retries[len(rep.Retries)-1]
	if first.Min != Millis(time.Second) || first.Max != Millis(time.Second) {
		t.Errorf("retry 1 in [%v, %v] ms; want exactly 1000 ms, grpc-go's BaseDelay", first.Min, first.Max)
	}
	if last.Min != Millis(96*time.Second) || last.Max != Millis(144*time.Second) {
		t.Errorf("retry 30 in [%v, %v] ms; want [96000, 144000], the 120 s cap ±20 %%", last.Min, last.Max)
	}
}
