package root

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docImports maps the package names that the documentation's Go blocks
// use to their import paths. A block that uses another package fails the
// test until the name is added here.
var docImports = map[string]string{
	"backoff":   "github.com/again-go/again/backoff",
	"plan":      "github.com/again-go/again/backoff/plan",
	"retry":     "github.com/again-go/again/retry",
	"retryhttp": "github.com/again-go/again/retryhttp",
	"breaker":   "github.com/again-go/again/breaker",
	"hedge":     "github.com/again-go/again/hedge",
	"fleet":     "github.com/again-go/again/fleet",
	"retrygrpc": "github.com/again-go/again/retrygrpc",
	"grpc":      "google.golang.org/grpc",
	"insecure":  "google.golang.org/grpc/credentials/insecure",
	"otelagain": "github.com/again-go/again/otelagain",
	"fault":     "github.com/again-go/again/fault",
	"httptest":  "net/http/httptest",
	"throttle":  "github.com/again-go/again/throttle",
	"limiter":   "github.com/again-go/again/limiter",
	"shed":      "github.com/again-go/again/shed",
	"context":   "context",
	"errors":    "errors",
	"fmt":       "fmt",
	"http":      "net/http",
	"iter":      "iter",
	"log":       "log",
	"slog":      "log/slog",
	"sql":       "database/sql",
	"time":      "time",
}

// docPrelude declares what the documentation's fragments take as given:
// a context, a database, a request, a logger and a few functions of the
// reader's own.
const docPrelude = `package readmecheck

import (
	"context"
	"database/sql"
	"log/slog"
	"net/http"
)

type User struct{ Name string }

type usersClient struct{}

func (usersClient) GetUser(ctx context.Context, id string) (*User, error) { return nil, nil }

type recorder struct{}

func (recorder) Record(int) {}

var (
	ctx      context.Context
	db       *sql.DB
	req      *http.Request
	logger   *slog.Logger
	id       string
	attempts recorder
	client   usersClient
	mux      *http.ServeMux
)

func fetchUser(ctx context.Context, id string) (*User, error) { return nil, nil }
func cachedUser(id string) *User                               { return nil }
func call(ctx context.Context) error                           { return nil }
func lookup(ctx context.Context) (*User, error)                { return nil, nil }
`

var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// TestDocsGoBlocksCompile compiles every Go code block of README.md and
// docs/*.md, so that what a reader copies builds against the code as it
// is. A fragment (a block without a package clause) becomes the body of a
// function of its own, with its imports found from the package names it
// uses; the variables it declares count as used, as they would be in the
// reader's program.
func TestDocsGoBlocksCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command over every block; skipped under -short")
	}
	root := "../../../../.."
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append([]string{filepath.Join(root, "README.md")}, docs...)

	dir := t.TempDir()
	pkgDir, err := filepath.Abs("internal-readmecheck") // never on disk: an overlay
	if err != nil {
		t.Fatal(err)
	}
	overlay := map[string]string{}
	add := func(name, src string) {
		tmp := filepath.Join(dir, name)
		if err := os.WriteFile(tmp, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		overlay[filepath.Join(pkgDir, name)] = tmp
	}
	add("prelude.go", docPrelude)
	origin := map[string]string{} // generated file -> where its block is
	blocks := 0
	for _, doc := range docs {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range goBlock.FindAllSubmatchIndex(text, -1) {
			code := string(text[m[2]:m[3]])
			line := 1 + strings.Count(string(text[:m[2]]), "\n")
			where := fmt.Sprintf("%s:%d", filepath.Base(doc), line)
			src, err := docFile(code, blocks)
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			name := fmt.Sprintf("block%d.go", blocks)
			add(name, src)
			origin[name] = where
			blocks++
		}
	}
	if blocks < 5 {
		t.Fatalf("found %d Go blocks in %v; the pattern must have stopped matching", blocks, docs)
	}
	ov, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		t.Fatal(err)
	}
	ovFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ovFile, ov, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-overlay", ovFile, "-o", os.DevNull, "./internal-readmecheck")
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := string(out)
		for name, where := range origin {
			msg = strings.ReplaceAll(msg, filepath.Join(dir, name), where+" (as "+name+")")
		}
		t.Errorf("the documentation's Go blocks do not compile:\n%s", msg)
	}
}

// docFile turns one Go block into a file of package readmecheck: as it is
// when it has a package clause (renamed), otherwise as the body of func
// blockN, with imports for the package names it uses and every variable
// it declares at its top level marked used.
func docFile(code string, n int) (string, error) {
	if strings.HasPrefix(code, "package ") {
		_, rest, _ := strings.Cut(code, "\n")
		return "package readmecheck\n" + rest, nil
	}
	body := fmt.Sprintf("func block%d() error {\n%s\nreturn nil\n}\n", n, code)
	f, err := parser.ParseFile(token.NewFileSet(), "", "package p\n"+body, parser.SkipObjectResolution)
	if err != nil {
		return "", fmt.Errorf("not a Go fragment: %v", err)
	}
	var imports, used []string
	fn := f.Decls[0].(*ast.FuncDecl)
	ast.Inspect(fn, func(node ast.Node) bool {
		if sel, ok := node.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok {
				if path, ok := docImports[x.Name]; ok && !slices.Contains(imports, path) {
					imports = append(imports, path)
				}
			}
		}
		return true
	})
	for _, stmt := range fn.Body.List {
		switch s := stmt.(type) {
		case *ast.AssignStmt:
			if s.Tok == token.DEFINE {
				for _, l := range s.Lhs {
					if id, ok := l.(*ast.Ident); ok && id.Name != "_" {
						used = append(used, id.Name)
					}
				}
			}
		case *ast.DeclStmt:
			if g, ok := s.Decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, spec := range g.Specs {
					for _, id := range spec.(*ast.ValueSpec).Names {
						used = append(used, id.Name)
					}
				}
			}
		}
	}
	var b strings.Builder
	b.WriteString("package readmecheck\n\n")
	for _, p := range imports {
		fmt.Fprintf(&b, "import %q\n", p)
	}
	fmt.Fprintf(&b, "\nfunc block%d() error {\n%s\n", n, code)
	for _, u := range used {
		fmt.Fprintf(&b, "_ = %s\n", u)
	}
	b.WriteString("return nil\n}\n")
	return b.String(), nil
}
