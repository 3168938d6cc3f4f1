package page

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/again-go/again/cmd/again/internal/web/internal/catalog"
)

// TestGoStringsInCatalogue checks that this package's messages come from
// the catalogue: every key it looks up is there in both languages, and no
// string literal outside the input parser (which reads back the page's own
// Russian units) holds Russian text.
func TestGoStringsInCatalogue(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	lookup := regexp.MustCompile(`\bl\.(?:t|f|plural)\("([a-zA-Z0-9_.]+)"`)
	typedBack := []string{"humanPart", "humanUnits", "humanDuration"} // what a user may type back
	fset := token.NewFileSet()
	n := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range lookup.FindAllStringSubmatch(string(src), -1) {
			n++
			key := m[1]
			if strings.HasSuffix(key, ".") {
				continue // completed at run time: checked by the tests of what it makes
			}
			for _, lang := range catalog.Languages() {
				if _, ok := catalog.Lookup(lang, key); !ok {
					t.Errorf("%s looks up %q, which the %s catalogue lacks", name, key, lang)
				}
			}
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if declares(d, typedBack...) {
				continue
			}
			ast.Inspect(d, func(x ast.Node) bool {
				if lit, ok := x.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					if strings.ContainsFunc(s, func(r rune) bool { return unicode.Is(unicode.Cyrillic, r) }) {
						t.Errorf("%s: the literal %s is Russian text outside the catalogue", fset.Position(lit.Pos()), lit.Value)
					}
				}
				return true
			})
		}
	}
	if n < 40 {
		t.Errorf("found %d catalogue lookups, want the page's 40 and more", n)
	}
}

// declares reports whether d declares one of names.
func declares(d ast.Decl, names ...string) bool {
	switch d := d.(type) {
	case *ast.FuncDecl:
		return slices.Contains(names, d.Name.Name)
	case *ast.GenDecl:
		for _, s := range d.Specs {
			if v, ok := s.(*ast.ValueSpec); ok {
				for _, id := range v.Names {
					if slices.Contains(names, id.Name) {
						return true
					}
				}
			}
		}
	}
	return false
}
