package run

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
	"github.com/again-go/again/fleet/fleettest"
)

// TestCLIRunBudget runs `again run --budget` as containers would: two
// processes at once, each retrying a command that always fails. Sharing one
// budget, they retry as much as one process alone (4 times from a full
// bucket of 10 tokens); with a budget each, twice as much.
func TestCLIRunBudget(t *testing.T) {
	s := fleettest.Start(t)
	dir := t.TempDir()
	// retries counts the retries of two concurrent runs with these keys,
	// from the lines the command appends to a file at each attempt.
	retries := func(keys ...string) int {
		t.Helper()
		cmds := make([]*exec.Cmd, len(keys))
		logs := make([]bytes.Buffer, len(keys))
		files := make([]string, len(keys))
		for i, key := range keys {
			files[i] = filepath.Join(dir, fmt.Sprintf("%s-%d", key, i))
			// A generous timeout: a loaded machine must not make the
			// budget fall back to a local bucket.
			url := "redis://" + s.Addr() + "/0?key=" + key + "&timeout=2s"
			cmds[i] = cmdtest.AgainCommand(t, "run", "--initial", "1ms", "--max", "2ms", "--retries", "9", "--budget", url,
				"--", "sh", "-c", `echo attempt >> "$0"; exit 1`, files[i])
			cmds[i].Stderr = &logs[i]
			if err := cmds[i].Start(); err != nil {
				t.Fatal(err)
			}
		}
		attempts := 0
		for i, cmd := range cmds {
			if err := cmd.Wait(); err == nil || cmd.ProcessState.ExitCode() != 1 {
				t.Fatalf("again run: %v (exit %d), want exit 1; stderr:\n%s", err, cmd.ProcessState.ExitCode(), logs[i].String())
			}
			if strings.Contains(logs[i].String(), "Redis cannot be used") {
				t.Fatalf("the budget fell back to a local one; stderr:\n%s", logs[i].String())
			}
			data, err := os.ReadFile(files[i])
			if err != nil {
				t.Fatal(err)
			}
			attempts += strings.Count(string(data), "attempt\n")
		}
		return attempts - len(keys)
	}
	shared := retries("cli-shared", "cli-shared")
	separate := retries("cli-one", "cli-two")
	if shared != 4 || separate != 8 {
		t.Errorf("two again run --budget sharing one budget retried %d times, with a budget each %d; want 4 and 8", shared, separate)
	}
}
