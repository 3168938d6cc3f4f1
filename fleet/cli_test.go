package fleet

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildCLI builds the fleet's again command (fleet/cmd/again) into a
// temporary directory and returns its path.
func buildCLI(t *testing.T) string {
	t.Helper()
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("building fleet/cmd/again needs the go command: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "again")
	out, err := exec.Command(gocmd, "build", "-o", bin, "./cmd/again").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./cmd/again: %v\n%s", err, out)
	}
	return bin
}

// TestCLIRunBudget runs `again run --budget` as containers would: two
// processes at once, each retrying a command that always fails. Sharing one
// budget, they retry as much as one process alone (4 times from a full
// bucket of 10 tokens); with a budget each, twice as much.
func TestCLIRunBudget(t *testing.T) {
	s := startServer(t)
	bin := buildCLI(t)
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
			cmds[i] = exec.Command(bin, "run", "--initial", "1ms", "--max", "2ms", "--retries", "9", "--budget", url,
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
			if strings.Contains(logs[i].String(), "did not answer") {
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

// TestCLIBudgetUsage checks the fleet build's usage errors for --budget: a
// bad URL is named without its password.
func TestCLIBudgetUsage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fleet/cmd/again; skipped under -short")
	}
	bin := buildCLI(t)
	for _, sub := range [][]string{{"run", "--", "true"}, {"fetch", "http://127.0.0.1:1/"}} {
		args := []string{sub[0], "--budget", "redis://:hunter2@127.0.0.1:1/0"}
		cmd := exec.Command(bin, append(args, sub[1:]...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		want := "again " + sub[0] + ": --budget: fleet: a budget URL must name the budget with ?key=NAME, as in redis://HOST:PORT/DB?key=NAME\n"
		if err == nil || cmd.ProcessState.ExitCode() != 2 || stderr.String() != want {
			t.Errorf("again %q: %v, stderr %q; want exit 2 and %q", args, err, stderr.String(), want)
		}
	}
}
