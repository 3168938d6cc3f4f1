package root

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The countable claims of README.md, CONTRIBUTING.md, retry's package doc
// and docs/library.md, checked against what they count: the library's
// packages, the go.mod files, scripts/test and package retry's options. A
// claim these tests do not recognise (a new "Go 1.N") fails them, so that
// a new claim comes with its check.

// readDoc returns the repository file rel, or its package doc for a Go
// file, with every run of white space made one space, so that a claim
// reads the same however it is wrapped.
func readDoc(t *testing.T, rel string) string {
	t.Helper()
	path := filepath.Join(repoRoot, rel)
	var text string
	if strings.HasSuffix(rel, ".go") {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		text = f.Doc.Text()
	} else {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		text = string(b)
	}
	return strings.Join(strings.Fields(text), " ")
}

// goVersion returns the language version (1.N) that the go.mod or go.work
// file rel states.
func goVersion(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, rel))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (1\.\d+)(\.\d+)?$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s has no go line", rel)
	}
	return string(m[1])
}

// newerGo reports whether the version 1.N a is newer than b.
func newerGo(a, b string) bool {
	minor := func(v string) int {
		_, m, _ := strings.Cut(v, ".")
		n, _ := strconv.Atoi(m)
		return n
	}
	return minor(a) > minor(b)
}

// section returns the text of markdown from the heading line heading to
// the next heading of any level.
func section(t *testing.T, markdown, heading string) string {
	t.Helper()
	_, rest, ok := strings.Cut(markdown, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("no section %q", heading)
	}
	if i := strings.Index(rest, "\n#"); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// spans returns the code spans of text.
func spans(text string) []string {
	var out []string
	for _, m := range codeSpan.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// sortedSet returns the distinct strings of s, sorted.
func sortedSet(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

// libraryPackages returns the directories, relative to the repository's
// root, of the library module's importable packages: not internal, not a
// command, not in a nested module.
func libraryPackages(t *testing.T) []string {
	t.Helper()
	var pkgs []string
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			name := d.Name()
			if name == "internal" || name == "testdata" || strings.HasPrefix(name, ".") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a module of its own
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || filepath.Dir(rel) == "." {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly)
		if err != nil {
			return err
		}
		if f.Name.Name != "main" {
			pkgs = append(pkgs, filepath.ToSlash(filepath.Dir(rel)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sortedSet(pkgs)
}

var numberWords = []string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
	"ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen"}

// TestREADMEPackageCount checks that the README's library section states
// as many packages as its table lists, and that the table, and the
// Modules table's row of the library, list every importable package of
// the library module.
func TestREADMEPackageCount(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lib := section(t, string(readme), "## The library")
	want := libraryPackages(t)

	var table []string
	for _, m := range regexp.MustCompile("(?m)^\\| \\[`github.com/again-go/again/([^`]+)`\\]").FindAllStringSubmatch(lib, -1) {
		table = append(table, m[1])
	}
	if got := sortedSet(table); !slices.Equal(got, want) {
		t.Errorf("README's library table lists %v, want the library's packages %v", got, want)
	}
	m := regexp.MustCompile(`(?m)^(\w+) packages`).FindStringSubmatch(lib)
	if m == nil {
		t.Fatal(`README's library section does not start with "N packages"`)
	}
	if n := slices.Index(numberWords, strings.ToLower(m[1])); n != len(table) {
		t.Errorf("README says %q packages above a table of %d", m[1], len(table))
	}

	modules := section(t, string(readme), "## Modules")
	row := regexp.MustCompile("(?m)^\\| `github.com/again-go/again` \\|.*$").FindString(modules)
	if row == "" {
		t.Fatal("README's Modules table has no row for github.com/again-go/again")
	}
	cells := strings.Split(row, "|")
	if got := sortedSet(spans(cells[len(cells)-2])); !slices.Equal(got, want) {
		t.Errorf("README's Modules table says the library holds %v, want %v", got, want)
	}
}

// goClaims are the sentences of the README and CONTRIBUTING that state a
// Go version, each with the go.mod (or go.work) files whose newest version
// it must be.
var goClaims = []struct {
	doc   string
	claim *regexp.Regexp
	files []string
}{
	{"README.md", regexp.MustCompile(`The library module requires Go (1\.\d+)`), []string{"go.mod"}},
	{"README.md", regexp.MustCompile(`the command needs Go (1\.\d+)`), []string{"cmd/again/go.mod"}},
	{"README.md", regexp.MustCompile(`From a clone of this repository, with Go (1\.\d+) or newer`), []string{"go.work"}},
	{"README.md", regexp.MustCompile(`\(it requires grpc-go; Go (1\.\d+) is enough\)`), []string{"retrygrpc/go.mod"}},
	{"CONTRIBUTING.md", regexp.MustCompile(`With Go (1\.\d+) or newer \(the workspace's go.work needs it`), []string{"go.work"}},
	{"CONTRIBUTING.md", regexp.MustCompile(`the library modules themselves build with Go (1\.\d+)`), []string{"go.mod", "fleet/go.mod", "otelagain/go.mod", "retrygrpc/go.mod"}},
}

// TestDocsGoVersions checks every Go version that README.md and
// CONTRIBUTING.md state against the go.mod files, and the workspace's
// against every module's (go.work must need the newest).
func TestDocsGoVersions(t *testing.T) {
	for _, doc := range []string{"README.md", "CONTRIBUTING.md"} {
		text := readDoc(t, doc)
		checked := map[int]bool{} // offsets of the versions a claim covers
		for _, c := range goClaims {
			if c.doc != doc {
				continue
			}
			m := c.claim.FindStringSubmatchIndex(text)
			if m == nil {
				t.Errorf("%s no longer says %q; change goClaims with it", doc, c.claim)
				continue
			}
			checked[m[2]] = true
			stated, want := text[m[2]:m[3]], ""
			for _, f := range c.files {
				if v := goVersion(t, f); want == "" || newerGo(v, want) {
					want = v
				}
			}
			if stated != want {
				t.Errorf("%s: %q states Go %s, but %v need Go %s", doc, text[m[0]:m[1]], stated, c.files, want)
			}
		}
		for _, m := range regexp.MustCompile(`Go (1\.\d+)`).FindAllStringSubmatchIndex(text, -1) {
			if !checked[m[2]] {
				t.Errorf("%s: %q states a Go version that no claim of goClaims checks", doc, text[max(0, m[0]-60):m[1]])
			}
		}
	}
	work := goVersion(t, "go.work")
	for _, f := range []string{"go.mod", "fleet/go.mod", "otelagain/go.mod", "retrygrpc/go.mod", "cmd/again/go.mod", "bench/go.mod", "scripts/mkproxy/go.mod"} {
		if v := goVersion(t, f); newerGo(v, work) {
			t.Errorf("%s needs Go %s, newer than go.work's %s", f, v, work)
		}
	}
}

// TestDocsWhatTheTestScriptInstalls checks the Debian packages that
// README.md and CONTRIBUTING.md say scripts/test installs against the
// packages it installs, and that CONTRIBUTING shows the staticcheck it
// installs.
func TestDocsWhatTheTestScriptInstalls(t *testing.T) {
	script, err := os.ReadFile(filepath.Join(repoRoot, "scripts/test"))
	if err != nil {
		t.Fatal(err)
	}
	var installs []string
	for _, m := range regexp.MustCompile(`need\+=\(([a-z0-9-]+)\)`).FindAllStringSubmatch(string(script), -1) {
		installs = append(installs, m[1])
	}
	installs = sortedSet(installs)
	if len(installs) < 2 {
		t.Fatalf("found %v installed by scripts/test; the pattern must have stopped matching", installs)
	}
	list := regexp.MustCompile("the Debian packages ((?:`[a-z0-9-]+`(?:, | and )?)+)")
	for _, doc := range []string{"README.md", "CONTRIBUTING.md"} {
		m := list.FindStringSubmatch(readDoc(t, doc))
		if m == nil {
			t.Errorf("%s does not list what scripts/test installs as \"the Debian packages `a`, `b` and `c`\"", doc)
			continue
		}
		if got := sortedSet(spans(m[1])); !slices.Equal(got, installs) {
			t.Errorf("%s says scripts/test installs %v, but it installs %v", doc, got, installs)
		}
	}

	staticcheck := regexp.MustCompile(`go install honnef.co/go/tools/cmd/staticcheck@v[0-9.]+`).FindString(string(script))
	if staticcheck == "" {
		t.Fatal("scripts/test no longer installs staticcheck with go install; change this test")
	}
	if !strings.Contains(readDoc(t, "CONTRIBUTING.md"), "`"+staticcheck+"`") {
		t.Errorf("CONTRIBUTING.md does not show how scripts/test installs staticcheck: `%s`", staticcheck)
	}
}

// TestREADMEBuildFromCloneFirst checks that, until a version is released,
// the README's first shell block builds from a clone rather than asking
// the module proxy for a version that does not exist; and that the
// version it names as about to be released is the one the sibling
// modules require.
func TestREADMEBuildFromCloneFirst(t *testing.T) {
	// A release renames CHANGELOG's Unreleased section to its version
	// (RELEASING.md); git's tags are not in every checkout (a shallow clone
	// in CI has none).
	changelog, err := os.ReadFile(filepath.Join(repoRoot, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^## \[\d+\.\d+\.\d+\]`).Match(changelog) {
		first := regexp.MustCompile("(?s)```sh\n(.*?)```").FindSubmatch(readme)
		switch {
		case first == nil:
			t.Error("README has no shell block")
		case !strings.HasPrefix(string(first[1]), "git clone "):
			t.Errorf("no version is released (CHANGELOG.md), but README's first shell block is not a git clone:\n%s", first[1])
		}
	}
	fleet, err := os.ReadFile(filepath.Join(repoRoot, "fleet/go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	req := regexp.MustCompile(`github.com/again-go/again (v\S+)`).FindSubmatch(fleet)
	if req == nil {
		t.Fatal("fleet/go.mod does not require github.com/again-go/again")
	}
	for _, v := range sortedSet(regexp.MustCompile(`\bv\d+\.\d+\.\d+\b`).FindAllString(string(readme), -1)) {
		if v != string(req[1]) {
			t.Errorf("README names %s, but the version about to be released (fleet/go.mod's requirement) is %s", v, req[1])
		}
	}
}

// TestRetryOptionsListed checks that retry's package doc and
// docs/library.md list every option of package retry: every exported
// function named With....
func TestRetryOptionsListed(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(repoRoot, "retry", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var options []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.IsExported() && strings.HasPrefix(fn.Name.Name, "With") {
				options = append(options, fn.Name.Name)
			}
		}
	}
	options = sortedSet(options)
	if len(options) < 5 {
		t.Fatalf("found the options %v in retry; the parse must have gone wrong", options)
	}
	with := regexp.MustCompile(`\bWith[A-Z]\w*`)
	for _, c := range []struct {
		doc  string
		list *regexp.Regexp
	}{
		{"retry/doc.go", regexp.MustCompile(`Options \(([^)]*)\) change how it retries`)},
		{"docs/library.md", regexp.MustCompile("Options all read `retry.WithX`: (.*?)\\. A `retry.Budget`")},
	} {
		m := c.list.FindStringSubmatch(readDoc(t, c.doc))
		if m == nil {
			t.Errorf("%s no longer lists the options as %q; change this test with it", c.doc, c.list)
			continue
		}
		if got := sortedSet(with.FindAllString(m[1], -1)); !slices.Equal(got, options) {
			t.Errorf("%s lists the options %v, but package retry has %v", c.doc, got, options)
		}
	}
}

// TestREADMECommandPackages checks the number of packages the README says
// the first build of the command compiles: `go list -deps ./cmd/again` on
// linux/amd64 with cgo, the machine the README describes.
func TestREADMECommandPackages(t *testing.T) {
	m := regexp.MustCompile("The first run compiles the command: (\\d+) packages \\(`go list -deps ./cmd/again`\\)").FindStringSubmatch(readDoc(t, "README.md"))
	if m == nil {
		t.Fatal("README no longer says \"The first run compiles the command: N packages (`go list -deps ./cmd/again`)\"; change this test with it")
	}
	cmd := exec.Command("go", "list", "-deps", "./cmd/again")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=1", "GOFLAGS=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/again: %v", err)
	}
	if got := strconv.Itoa(strings.Count(string(out), "\n")); got != m[1] {
		t.Errorf("README says the command compiles %s packages; go list -deps ./cmd/again lists %s", m[1], got)
	}
}
