package web

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
)

// TestWebRunExport runs web's Options without cobra: an export writes the
// page into a new directory and says so; into a directory that holds a
// file of the user's it is a usage error unless Force, which keeps that
// file.
func TestWebRunExport(t *testing.T) {
	tests := []struct {
		name     string
		theirs   bool // the directory holds a file of the user's
		force    bool
		wantCode int // 0: exported
	}{
		{"new directory", false, false, 0},
		{"not empty", true, false, cmdutil.ExitUsage},
		{"not empty, forced", true, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "site")
			if tt.theirs {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var out bytes.Buffer
			err := webRun(t.Context(), &Options{Env: &cmdutil.Env{Stdout: &out}, Export: dir, Force: tt.force})
			if tt.wantCode != 0 {
				var ee *cmdutil.ExitError
				if !errors.As(err, &ee) || ee.Code != tt.wantCode {
					t.Fatalf("error %v, want exit status %d", err, tt.wantCode)
				}
				if _, err := os.Stat(filepath.Join(dir, "index.html")); err == nil {
					t.Errorf("a refused export wrote index.html")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, "index.html")); err != nil {
				t.Errorf("no index.html: %v", err)
			}
			if want := "Wrote the calculator page to " + dir + "\n"; out.String() != want {
				t.Errorf("stdout %q, want %q", out.String(), want)
			}
			if tt.theirs {
				if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "mine" {
					t.Errorf("the user's file: %q, %v; want it kept", b, err)
				}
			}
		})
	}
}
