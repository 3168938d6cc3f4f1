package srcsum

import (
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSumFollowsDependencies builds a small module whose main package
// imports a library, and checks that the fingerprint changes with the
// library's source, ignores its tests and files of other platforms, and is
// stable otherwise.
func TestSumFollowsDependencies(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "go.mod", "module example.com/m\n\ngo 1.25\n")
	write(t, dir, "lib/lib.go", "package lib\n\nfunc F() int { return 1 }\n")
	write(t, dir, "lib/lib_test.go", "package lib\n")
	write(t, dir, "lib/other_linux.go", "package lib\n\nvar onLinux = 1\n")
	write(t, dir, "wasm/main.go", "//go:build js && wasm\n\npackage main\n\nimport \"example.com/m/lib\"\n\nfunc main() { _ = lib.F() }\n")
	sum := func() string {
		t.Helper()
		s, err := Sum(dir, "./wasm")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	base := sum()
	if again := sum(); again != base {
		t.Fatalf("Sum is not stable: %s, then %s", base, again)
	}
	write(t, dir, "lib/lib_test.go", "package lib\n\n// a test changed\n")
	write(t, dir, "lib/other_linux.go", "package lib\n\nvar onLinux = 2\n")
	if got := sum(); got != base {
		t.Errorf("Sum changed with a test file or a file the wasm build excludes")
	}
	write(t, dir, "lib/lib.go", "package lib\n\nfunc F() int { return 2 }\n")
	if got := sum(); got == base {
		t.Errorf("Sum did not change when a dependency's source did")
	}
	if _, err := Sum(dir, "./nonexistent"); err == nil {
		t.Errorf("Sum of a missing package = nil error")
	}
}
