//go:build linux

package run

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
	"go.uber.org/goleak"
)

// liveInGroupT is liveInGroup for a test, which needs /proc.
func liveInGroupT(t *testing.T, pgid int) []string {
	t.Helper()
	live, ok := liveInGroup(pgid)
	if !ok {
		t.Fatal("cannot read /proc")
	}
	return live
}

// waitGroupGone fails the test unless every process of group pgid has died
// within 10 s of the call (SIGKILL is sent before it; dying takes the
// kernel a moment). It polls /proc: no signal or wait says when processes
// that are not our children die.
func waitGroupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		live := liveInGroupT(t, pgid)
		if len(live) == 0 {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(-pgid, syscall.SIGKILL) // leave nothing behind
			t.Fatalf("processes of the attempt's group %d still run: %v", pgid, live)
		}
		<-tick.C
	}
}

// alive reports whether process pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// trees returns the processes that the tree scripts below printed, one
// "shell-pid grandchild-pid" line per attempt: the shell's pid is also its
// group's id.
func trees(t *testing.T, out string) [][2]int {
	t.Helper()
	var ids [][2]int
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			t.Fatalf("unexpected output line %q in %q", line, out)
		}
		sh, _ := strconv.Atoi(f[0])
		grandchild, _ := strconv.Atoi(f[1])
		ids = append(ids, [2]int{sh, grandchild})
	}
	return ids
}

// waitTreeGone fails the test unless the shell and grandchild of tree, and
// any other process of the shell's group, have died within 10 s.
func waitTreeGone(t *testing.T, tree [2]int) {
	t.Helper()
	waitGroupGone(t, tree[0])
	for _, pid := range tree {
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL) // leave nothing behind
			t.Errorf("process %d of the attempt still ran", pid)
		}
	}
}

// The tree scripts: a shell that starts a grandchild in the background,
// prints "$$ $!" (its pid, which is its group's id, and the grandchild's)
// and waits. In the second, the grandchild ignores SIGTERM.
const (
	treeScript         = `sleep 1000 & echo "$$ $!"; wait`
	stubbornTreeScript = `(trap '' TERM; exec sleep 1000) & echo "$$ $!"; wait`
)

// A --attempt-timeout stops the whole tree of each attempt, not just its first
// process: nothing of an attempt runs beside the next one, or after again.
func TestRunTimeoutStopsTree(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, script := range []string{treeScript, stubbornTreeScript} {
		t.Run(script, func(t *testing.T) {
			stdout := cmdtest.NewWaitWriter("")
			var stderr bytes.Buffer
			r := &runner{env: &cmdutil.Env{Stdout: stdout, Stderr: &stderr}, name: "sh", path: "/bin/sh",
				args: []string{"-c", script}, timeout: time.Second, grace: time.Minute}
			start := time.Now()
			err := r.run(t.Context(), policyRetries(1))
			if code, _ := cmdutil.ExitCode(err); code != ExitTimedOut {
				t.Errorf("status %d, want 124; stderr %q", code, stderr.String())
			}
			// The stubborn grandchild must not cost the whole grace: it is
			// killed when the shell has exited.
			if took := time.Since(start); took > time.Minute {
				t.Errorf("took %v; the grace of 1m per attempt was waited out", took)
			}
			ids := trees(t, stdout.String())
			if len(ids) != 2 {
				t.Fatalf("%d attempts printed their processes, want 2: %q", len(ids), stdout.String())
			}
			for _, tree := range ids {
				waitTreeGone(t, tree)
			}
		})
	}
}

// A SIGTERM sent to again reaches every process the command started.
func TestRunSignalStopsTree(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, script := range []string{treeScript, stubbornTreeScript} {
		t.Run(script, func(t *testing.T) {
			ch := make(chan os.Signal, 1)
			stdout := cmdtest.NewWaitWriter("")
			var stderr bytes.Buffer
			done := make(chan int)
			go func() {
				done <- againRun(cmdutil.WithSignals(t.Context(), ch), []string{"run", "--", "sh", "-c", script}, nil, stdout, &stderr)
			}()
			cmdtest.WaitFor(t, stdout, "\n")
			ch <- syscall.SIGTERM
			if code := <-done; code != 128+15 {
				t.Errorf("status %d, want 143; stderr %q", code, stderr.String())
			}
			waitTreeGone(t, trees(t, stdout.String())[0])
		})
	}
}

// A failed attempt's background processes are stopped (SIGTERM, then
// SIGKILL for one that ignores it) before the next attempt starts, and
// after the last: none runs beside the next attempt, nor after again.
// Each attempt's script says LIVE for any earlier attempt's process that
// still runs.
func TestRunFailedAttemptLeavesNothing(t *testing.T) {
	defer goleak.VerifyNone(t)
	for name, daemon := range map[string]string{"plain": "sleep 1000 &", "ignoring SIGTERM": "(trap '' TERM; exec sleep 1000) &"} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("PIDS", filepath.Join(t.TempDir(), "pids"))
			// A zombie (state Z) has died: it waits only for its reaper.
			script := `for p in $(cat "$PIDS" 2>/dev/null); do s=$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null); ` +
				`[ -n "$s" ] && [ "$s" != Z ] && echo "LIVE $p"; done; ` +
				daemon + ` echo $! >> "$PIDS"; echo "$$ $!"; exit 3`
			stdout := cmdtest.NewWaitWriter("")
			var stderr bytes.Buffer
			r := &runner{env: &cmdutil.Env{Stdout: stdout, Stderr: &stderr}, name: "sh", path: "/bin/sh",
				args: []string{"-c", script}, grace: 300 * time.Millisecond}
			err := r.run(t.Context(), policyRetries(2))
			if code, _ := cmdutil.ExitCode(err); code != 3 {
				t.Errorf("status %d, want 3; stderr %q", code, stderr.String())
			}
			if strings.Contains(stdout.String(), "LIVE") {
				t.Errorf("an earlier attempt's process ran beside a later one:\n%s", stdout.String())
			}
			ids := trees(t, stdout.String())
			if len(ids) != 3 {
				t.Fatalf("%d attempts printed their processes, want 3: %q", len(ids), stdout.String())
			}
			for _, tree := range ids {
				if alive(tree[1]) {
					t.Errorf("process %d of a failed attempt runs after again returned", tree[1])
				}
				waitTreeGone(t, tree)
			}
		})
	}
}

// What a successful attempt started in the background is left running, as
// someone starting a daemon expects.
func TestRunSuccessLeavesDaemon(t *testing.T) {
	defer goleak.VerifyNone(t)
	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	var stderr bytes.Buffer
	r := &runner{env: &cmdutil.Env{Stdout: out, Stderr: &stderr}, name: "sh", path: "/bin/sh",
		args: []string{"-c", `sleep 1000 & echo $!; exit 0`}, grace: 200 * time.Millisecond}
	if err := r.run(t.Context(), policyRetries(2)); err != nil {
		t.Fatalf("run: %v; stderr %q", err, stderr.String())
	}
	b, _ := os.ReadFile(out.Name())
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid <= 0 {
		t.Fatalf("script printed %q, want the daemon's pid", b)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	if !alive(pid) {
		t.Errorf("the daemon %d that a successful attempt started was stopped", pid)
	}
}

// An attempt dies with again, even when again is killed with SIGKILL and
// cannot stop it (PR_SET_PDEATHSIG).
func TestRunAttemptDiesWithAgain(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd, _, out := cmdtest.AgainProcess(t, "run", "--", exe, "count-int")
	cmdtest.WaitFor(t, out, "ready ")
	var pid int
	deadline := time.Now().Add(10 * time.Second)
	for pid == 0 && time.Now().Before(deadline) {
		if _, err := fmt.Sscanf(out.String()[strings.Index(out.String(), "ready "):], "ready %d\n", &pid); err != nil {
			time.Sleep(5 * time.Millisecond) // the line is still arriving
		}
	}
	if pid <= 0 || !alive(pid) {
		t.Fatalf("attempt pid %d not running; output %q", pid, out.String())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("attempt %d outlived again killed by SIGKILL", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
