package root

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of the help in testdata/help")

// TestHelpGolden keeps every help byte-identical to testdata/help: the
// root's, every subcommand's and every nested one's (each sim model, each
// completion shell, help). The files were written before the command line
// was split into a package per command, so that the split is seen to change
// no help; a help changed on purpose is rewritten with -update.
func TestHelpGolden(t *testing.T) {
	dir := filepath.Join("testdata", "help")
	want := map[string]bool{}
	// cobra adds the help command only when the command line runs.
	for _, path := range append(commandPaths(t), []string{"help"}) {
		name := strings.Join(append([]string{"again"}, path...), "_") + ".txt"
		want[name] = true
		r := run(t, append(path, "--help")...)
		if r.Code != 0 || r.Stderr != "" {
			t.Errorf("again %s --help: exit %d, stderr %q", strings.Join(path, " "), r.Code, r.Stderr)
			continue
		}
		file := filepath.Join(dir, name)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(r.Stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		golden, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("again %s --help: %v (write it with -update)", strings.Join(path, " "), err)
			continue
		}
		if r.Stdout != string(golden) {
			t.Errorf("again %s --help differs from %s:\n%s", strings.Join(path, " "), file, firstDifference(string(golden), r.Stdout))
		}
	}
	// A golden file without a command is a command that disappeared.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !want[e.Name()] {
			t.Errorf("%s: no such command any more", filepath.Join(dir, e.Name()))
		}
	}
}

// firstDifference shows the first line where got differs from want.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, wl, gl)
		}
	}
	return "(same lines, different bytes)"
}
