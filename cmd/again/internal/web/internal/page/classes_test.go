package page

import (
	"encoding/json"
	"strings"
	"testing"
)

// classInputs gives overloads more retries than the call allows and
// network errors fewer, without jitter.
var classInputs = map[string]string{
	"retries": "4", "jitter": "none",
	"on-overload.initial": "1s", "on-overload.max": "30s", "on-overload.retries": "6", "on-overload.jitter": "none",
	"on-transient.initial": "50", "on-transient.retries": "2", "on-transient.jitter": "none",
}

func TestComputeClasses(t *testing.T) {
	r := Compute(classInputs, English)
	if len(r.Errors) > 0 {
		t.Fatalf("Compute: %v", r.Errors)
	}
	if len(r.Classes) != 2 {
		t.Fatalf("Compute: %d classes, want overloads and network errors", len(r.Classes))
	}
	o, tr := r.Classes[0], r.Classes[1]
	if o.Flag != "on-overload" || o.Worst != "15 s" || len(o.Rows) != 4 || o.Note == "" {
		t.Errorf("overloads = %+v; want 4 retries (the call's cap, noted) and a worst case of 15 s", o)
	}
	// A bare 50 is 50 ms on the page, as in its other fields.
	if tr.Flag != "on-transient" || tr.Worst != "150 ms" || len(tr.Rows) != 2 || tr.Note != "" {
		t.Errorf("network errors = %+v; want 2 retries within the call's 4 and a worst case of 150 ms", tr)
	}
	if want := " --on-overload initial=1s,max=30s,retries=6,jitter=none --on-transient initial=50ms,retries=2,jitter=none"; !strings.HasSuffix(r.Command, want) {
		t.Errorf("command %q does not end with %q", r.Command, want)
	}
	if r := Compute(map[string]string{"retries": "4"}, English); r.Classes != nil || strings.Contains(r.Command, "--on-") {
		t.Errorf("without per-class inputs: classes %v, command %q; want none", r.Classes, r.Command)
	}
	ru := Compute(classInputs, Russian).Classes
	if len(ru) != 2 || !strings.HasPrefix(ru[0].Totals, "4 повтора") || ru[0].Title == o.Title {
		t.Errorf("in Russian: %+v", ru)
	}
}

// The downloads hold the classes as again calc's JSON does.
func TestExportClasses(t *testing.T) {
	d := Export(classInputs, "json")
	var got struct {
		Classes []struct {
			Name       string `json:"name"`
			CallCapped bool   `json:"call_capped"`
		} `json:"classes"`
	}
	if d.Error != "" || json.Unmarshal([]byte(d.Text), &got) != nil || len(got.Classes) != 2 ||
		got.Classes[0].Name != "overload" || !got.Classes[0].CallCapped || got.Classes[1].Name != "transient" {
		t.Errorf("Export json: error %q, classes %+v; want overload (call-capped) and transient", d.Error, got.Classes)
	}
	bad := map[string]string{"on-transient.multiplier": "0.5"}
	if d := Export(bad, "csv"); !strings.HasPrefix(d.Error, "--on-transient multiplier: ") {
		t.Errorf("Export with a wrong class field: error %q, want one naming --on-transient multiplier", d.Error)
	}
}

// Every wrong per-class field is marked under its own input, and the
// others of its class are not.
func TestClassErrorsByField(t *testing.T) {
	v := map[string]string{"on-overload.multiplier": "0.5", "on-overload.retries": "-1", "on-overload.initial": "1s", "on-transient.jitter": "random"}
	r := Compute(v, English)
	fields := map[string]bool{}
	for _, e := range r.Errors {
		fields[e.Field] = true
	}
	for _, f := range []string{"on-overload.multiplier", "on-overload.retries", "on-transient.jitter"} {
		if !fields[f] {
			t.Errorf("Compute(%v): no error for %s, errors %v", v, f, r.Errors)
		}
	}
	if fields["on-overload.initial"] || len(r.Errors) != 3 {
		t.Errorf("Compute(%v) errors %v; want exactly the three wrong fields", v, r.Errors)
	}
}

// The Go code gives the call the classes the page shows: each with its own
// policy, matched as again fetch matches them (TestSnippetCompiles
// type-checks it).
func TestSnippetClasses(t *testing.T) {
	s := Compute(classInputs, English).Snippet
	for _, want := range []string{
		"classes := retry.WithClasses(\n\tretry.Class{Name: \"overload\", Match: retry.IsOverload, Policy: backoff.Policy{\n\t\tInitial:    time.Second,\n",
		"\t\tMax:        30 * time.Second,\n\t\tRetries:    6,\n\t\tJitter:     backoff.NoJitter,\n\t}},\n",
		"retry.Class{Name: \"transient\", Match: func(err error) bool { return !retry.IsOverload(err) }, Policy: backoff.Policy{\n\t\tInitial:    50 * time.Millisecond,\n",
		"}, classes)\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("snippet lacks %q:\n%s", want, s)
		}
	}
	if s := Compute(map[string]string{"retries": "4"}, English).Snippet; strings.Contains(s, "WithClasses") {
		t.Errorf("snippet without per-class inputs gives classes:\n%s", s)
	}
}
