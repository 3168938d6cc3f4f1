package calc

import (
	"errors"
	"slices"
	"strings"
	"testing"
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
	want := `--preset must be one of example, again, aws, aws-throttle, grpc-retry, grpc-conn, gcloud, polly, cenkalti, urllib3 or curl, got "azure"`
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
