package pagegen

import (
	"strings"
	"testing"

	"github.com/again-go/again/cmd/again/internal/web/internal/catalog"
)

func TestHTML(t *testing.T) {
	tests := []struct {
		tmpl, want string
	}{
		// Both languages, each in a span of its lang.
		{`<h3>{{t html.goCode}}</h3>`, `<h3><span lang="en">Go code</span><span lang="ru">Код на Go</span></h3>`},
		// One language, as in an attribute; html.* strings are HTML.
		{`<b title="{{ru html.p99}}">{{en html.tableNote}}</b>`, `<b title="99-й процентиль">` + catalog.Text("en", "html.tableNote") + `</b>`},
		// The scripts' strings are text, escaped for HTML.
		{`{{en js.copied}}`, `Copied.`},
	}
	for _, tt := range tests {
		got, err := HTML([]byte(tt.tmpl))
		if err != nil || string(got) != tt.want {
			t.Errorf("HTML(%q) = %q, %v; want %q", tt.tmpl, got, err, tt.want)
		}
	}
	if !strings.Contains(catalog.Text("en", "html.tableNote"), "<span") {
		t.Fatal("html.tableNote no longer holds markup; pick another key for this test")
	}
	for _, bad := range []string{`{{t html.none}}`, `{{en go.nothing}}`, `{{x html.goCode}}`, `{{t}}`} {
		if _, err := HTML([]byte(bad)); err == nil {
			t.Errorf("HTML(%q) returned no error", bad)
		}
	}
}

func TestScript(t *testing.T) {
	js, err := Script()
	if err != nil {
		t.Fatal(err)
	}
	s := string(js)
	for _, want := range []string{"export const TEXT = {", "export const PRESETS = [", `"js.late": "retry {n} may start late"`, `"id": "grpc-conn"`, `"jitter": "grpc:0.2"`, `"preset.aws.name": "AWS SDKs, standard mode (2026), transient errors"`} {
		if !strings.Contains(s, want) {
			t.Errorf("text.js lacks %q", want)
		}
	}
	// Only what the scripts use: no HTML and no Go formats.
	for _, bad := range []string{`"html.`, `"go.`, `"calc.`, `\u003c`} {
		if strings.Contains(s, bad) {
			t.Errorf("text.js holds %q", bad)
		}
	}
}
