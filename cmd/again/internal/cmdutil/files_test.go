package cmdutil

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

// A pending file replaces its target whole when complete, and leaves the
// directory as it was when discarded; on Linux it has no name meanwhile.
func TestPendingFile(t *testing.T) {
	for _, complete := range []bool{true, false} {
		t.Run("complete="+strconv.FormatBool(complete), func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, "out")
			if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			p, err := CreateBeside(dir, "out", 0o600)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.WriteString("new"); err != nil {
				t.Fatal(err)
			}
			if got := names(t, dir); runtime.GOOS == "linux" && len(got) != 1 {
				t.Errorf("while writing, the directory holds %q; want only out (the pending file unnamed)", got)
			}
			want := "old"
			if complete {
				want = "new"
				if err := p.Replace(target); err != nil {
					t.Fatal(err)
				}
			} else {
				p.Discard()
			}
			if b, _ := os.ReadFile(target); string(b) != want {
				t.Errorf("out holds %q; want %q", b, want)
			}
			if got := names(t, dir); len(got) != 1 {
				t.Errorf("the directory holds %q; want only out", got)
			}
		})
	}
}

// When the system refuses to link the unnamed file (here: a file whose
// name was removed, which /proc cannot link back), its content is copied
// to a named file, which replaces the target with its permissions.
func TestPendingFileCopiedWhenLinkFails(t *testing.T) {
	dir := t.TempDir()
	f, err := os.OpenFile(filepath.Join(dir, "gone"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Chmod(0o640); err != nil {
		t.Fatal(err)
	}
	os.Remove(f.Name())
	if _, err := f.WriteString("content"); err != nil {
		t.Fatal(err)
	}
	p := &PendingFile{File: f, dir: dir, base: "out"}
	target := filepath.Join(dir, "out")
	if err := p.Replace(target); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(target)
	if b, _ := os.ReadFile(target); err != nil || string(b) != "content" || st.Mode().Perm() != 0o640 {
		t.Errorf("out holds %q (%v, %v); want content, mode 0640", b, st, err)
	}
	if got := names(t, dir); len(got) != 1 {
		t.Errorf("the directory holds %q; want only out", got)
	}
}

// names lists dir's entries.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, e := range entries {
		s = append(s, e.Name())
	}
	return s
}
