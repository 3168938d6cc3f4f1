package root

import (
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// maxSynopsis is the longest package synopsis, in characters: what `go
// doc`, `go list` and pkg.go.dev show of a package in a list. The standard
// library's longest are under 100 (x/time/rate's is 37).
const maxSynopsis = 100

// TestPackageSynopses keeps every package's synopsis, in every module of
// the repository, one short sentence: "Package NAME ..." (or "Command NAME
// ..." for a program) of at most maxSynopsis characters, so that a
// listing shows it whole and what follows it is the doc's body.
func TestPackageSynopses(t *testing.T) {
	fset := token.NewFileSet()
	docs := map[string]string{} // directory -> package doc
	names := map[string]string{}
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != repoRoot && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		names[dir] = f.Name.Name
		if f.Doc != nil {
			if _, dup := docs[dir]; dup {
				t.Errorf("%s: a second package doc (%s); a package has one, in doc.go or its main file", dir, name)
			}
			docs[dir] = f.Doc.Text()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 40 {
		t.Fatalf("found %d packages under %s; the walk must have gone wrong", len(names), repoRoot)
	}
	dirs := make([]string, 0, len(names))
	for dir := range names {
		dirs = append(dirs, dir)
	}
	slices.Sort(dirs)
	for _, dir := range dirs {
		rel, _ := filepath.Rel(repoRoot, dir)
		text, ok := docs[dir]
		if !ok {
			t.Errorf("%s: package %s has no package doc", rel, names[dir])
			continue
		}
		want := "Package " + names[dir] + " "
		if names[dir] == "main" {
			want = "Command " + filepath.Base(dir) + " "
		}
		synopsis := new(doc.Package).Synopsis(text)
		switch {
		case !strings.HasPrefix(synopsis, want):
			t.Errorf("%s: synopsis %q does not start with %q", rel, synopsis, want)
		case utf8.RuneCountInString(synopsis) > maxSynopsis:
			t.Errorf("%s: synopsis is %d characters, want at most %d: one short sentence, the rest in the doc's body:\n%s",
				rel, utf8.RuneCountInString(synopsis), maxSynopsis, synopsis)
		}
	}
}

// repoRoot is the repository's root, from this package's directory,
// where go test runs the test.
const repoRoot = "../../../../.."
