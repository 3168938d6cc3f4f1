package fetch

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
)

// again fetch -o FILE killed with SIGKILL while writing the body leaves
// FILE as it was and nothing beside it (on Linux, where the temporary file
// has no name until it is complete).
func TestFetchKilledLeavesNothing(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a temporary file without a name needs Linux's O_TMPFILE")
	}
	srv := newFetchServer(t, map[string][]answer{"/": {{body: "partial", stall: true}}})
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("as it was"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, _, _ := cmdtest.AgainProcess(t, append(withArgs(fast, "-o", file), srv.URL+"/")...)
	// Wait until the body's first bytes are in the temporary file: a
	// descriptor of the process that names a file in dir and holds them.
	fds := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/fd"
	for deadline := time.Now().Add(10 * time.Second); !writing(fds, dir, int64(len("partial"))); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the partial body never reached a file in the output's directory")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if got, err := os.ReadDir(dir); err != nil || len(got) != 1 || got[0].Name() != "f" {
		t.Errorf("after SIGKILL the directory holds %v (%v); want only f", got, err)
	}
	if b, _ := os.ReadFile(file); string(b) != "as it was" {
		t.Errorf("f holds %q; want it as it was", b)
	}
}

// writing reports whether a descriptor in fds names a file in dir (other
// than one still named in it) that holds size bytes.
func writing(fds, dir string, size int64) bool {
	entries, _ := os.ReadDir(fds)
	for _, e := range entries {
		link, err := os.Readlink(filepath.Join(fds, e.Name()))
		if err != nil || !strings.HasPrefix(link, dir+"/") {
			continue
		}
		if st, err := os.Stat(filepath.Join(fds, e.Name())); err == nil && st.Mode().IsRegular() && st.Size() == size {
			return true
		}
	}
	return false
}
