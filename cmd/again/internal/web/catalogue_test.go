package web_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/again-go/again/cmd/again/internal/web"
	"github.com/again-go/again/cmd/again/internal/web/internal/catalog"
	"github.com/again-go/again/cmd/again/internal/web/internal/pagegen"
)

// TestGeneratedFilesUpToDate checks that the committed index.html and
// text.js are what `go generate` writes from index.tmpl, the catalogue and
// the presets, so that an edited string reaches the page.
func TestGeneratedFilesUpToDate(t *testing.T) {
	tmpl, err := os.ReadFile("index.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	html, err := pagegen.HTML(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	script, err := pagegen.Script()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]byte{"index.html": html, "text.js": script} {
		got, err := os.ReadFile(filepath.Join("static", name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("static/%s is not what index.tmpl, internal/catalog and calc's presets make (%v); run `go generate ./cmd/again/internal/web` and commit the result", name, err)
		}
	}
	if _, err := pagegen.HTML([]byte(`<p>{{t html.noSuchKey}}</p>`)); err == nil || !strings.Contains(err.Error(), "html.noSuchKey") {
		t.Errorf("a template naming a missing key: error %v, want one naming the key", err)
	}
}

// modules returns the page's scripts: app.js and every module it imports,
// directly or not, by name.
func modules(t *testing.T) []string {
	imports := regexp.MustCompile(`(?m)^import [^;]*? from '\./([a-z0-9_-]+\.js)';$`)
	seen := []string{"app.js"}
	for i := 0; i < len(seen); i++ {
		src, err := os.ReadFile(filepath.Join("static", seen[i]))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range imports.FindAllStringSubmatch(string(src), -1) {
			if !slices.Contains(seen, m[1]) {
				seen = append(seen, m[1])
			}
		}
	}
	return seen
}

// TestModulesServed checks what a browser needs to run the page's ES
// modules: index.html loads app.js as a module, and the server sends each
// module the page imports as JavaScript (browsers refuse a module of any
// other type) under the CSP, whose script-src 'self' admits them.
func TestModulesServed(t *testing.T) {
	html, err := os.ReadFile("static/index.html")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(html, []byte(`<script type="module" src="app.js"></script>`)) {
		t.Error("index.html does not load app.js as a module")
	}
	mods := modules(t)
	if len(mods) < 8 {
		t.Errorf("app.js imports only %v", mods)
	}
	h := web.Handler()
	for _, m := range mods {
		res := get(t, h, "GET", "/"+m, nil)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/javascript; charset=utf-8" || res.Header.Get("Content-Security-Policy") != web.CSP {
			t.Errorf("GET /%s: status %d, Content-Type %q; want 200 and JavaScript under the CSP", m, res.StatusCode, res.Header.Get("Content-Type"))
		}
	}
}

// textNode matches the text between two tags.
var textNode = regexp.MustCompile(`>([^<]*)<`)

// TestNoStringOutsideCatalogue checks that every string the page shows
// comes from the catalogue: the template's text and its attributes that a
// reader sees or hears are actions, and the scripts hold no words of
// their own in either language. What is left is names and signs that
// read the same in both languages.
func TestNoStringOutsideCatalogue(t *testing.T) {
	tmpl, err := os.ReadFile("index.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	page := regexp.MustCompile(`\{\{[^}]*\}\}`).ReplaceAllString(string(tmpl), "")
	page = regexp.MustCompile(`(?s)<!--.*?-->`).ReplaceAllString(page, "")
	same := []string{"again", "–", "*", "p50", "p90", "p99"} // the brand, empty figures, the estimate mark, percentiles
	for _, m := range textNode.FindAllStringSubmatch(page, -1) {
		if s := strings.TrimSpace(m[1]); s != "" && !slices.Contains(same, s) {
			t.Errorf("index.tmpl shows %q outside the catalogue", s)
		}
	}
	for _, m := range regexp.MustCompile(`(?:title|aria-label|alt|placeholder|content)="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if strings.ContainsFunc(m[1], unicode.IsLetter) && !strings.Contains(m[0], "content=") {
			t.Errorf("index.tmpl has the attribute %s outside the catalogue", m[0])
		}
	}
	if regexp.MustCompile(`<meta name="description" content="[^"{]`).MatchString(string(tmpl)) {
		t.Error("index.tmpl's description is outside the catalogue")
	}
	// In the scripts: no Cyrillic at all, and no string literal with two
	// words in a row (a phrase), comments aside.
	literal := regexp.MustCompile("'[^'\n]*'|\"[^\"\n]*\"|`[^`]*`")
	phrase := regexp.MustCompile(`[A-Za-z]{2,} [A-Za-z]{2,}`)
	comment := regexp.MustCompile(`(?m)^\s*//.*$|\s//\s.*$`)
	// Not text: attribute values, class names, a directive, and the
	// worker's answer to a call of a function it lacks, which only a
	// mistake in these scripts can cause.
	notText := []string{"'noreferrer noopener'", "'prefers-reduced-motion: reduce'", "'.legend .needs-deadline'", "'end-label mean-label'", "'use strict'", "'no function '"}
	for _, m := range append(modules(t), "worker.js") {
		src, err := os.ReadFile(filepath.Join("static", m))
		if err != nil {
			t.Fatal(err)
		}
		if m == "text.js" {
			continue
		}
		if strings.ContainsFunc(string(src), func(r rune) bool { return unicode.Is(unicode.Cyrillic, r) }) {
			t.Errorf("%s has Cyrillic text: Russian belongs in the catalogue", m)
		}
		for _, lit := range literal.FindAllString(comment.ReplaceAllString(string(src), ""), -1) {
			if phrase.MatchString(lit) && !slices.ContainsFunc(notText, func(s string) bool { return strings.Contains(lit, strings.Trim(s, "'")) }) {
				t.Errorf("%s has the text %s outside the catalogue", m, lit)
			}
		}
	}
}

// TestScriptKeysExist checks that every key the scripts look up is in
// both catalogues, and that every js.* string is looked up.
func TestScriptKeysExist(t *testing.T) {
	lookup := regexp.MustCompile("\\bt\\(['`]([a-zA-Z0-9_.]+)(\\$\\{|['`])")
	used := map[string]bool{}
	for _, m := range modules(t) {
		src, _ := os.ReadFile(filepath.Join("static", m))
		for _, k := range lookup.FindAllStringSubmatch(string(src), -1) {
			if k[2] == "${" || strings.HasSuffix(k[1], ".") {
				used[k[1]+"*"] = true // a prefix, completed at run time
				continue
			}
			used[k[1]] = true
			for _, lang := range catalog.Languages() {
				if _, ok := catalog.Lookup(lang, k[1]); !ok {
					t.Errorf("%s looks up %q, which the %s catalogue lacks", m, k[1], lang)
				}
			}
		}
	}
	for _, k := range catalog.Keys("en") {
		if !strings.HasPrefix(k, "js.") || used[k] {
			continue
		}
		prefixed := false
		for u := range used {
			prefixed = prefixed || strings.HasSuffix(u, "*") && strings.HasPrefix(k, strings.TrimSuffix(u, "*"))
		}
		if !prefixed {
			t.Errorf("the catalogue's %q is used by no script", k)
		}
	}
}
