//go:build linux

package cli

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

	"go.uber.org/goleak"
)

// liveInGroup returns the processes of group pgid that are still alive
// (zombies, which run nothing, are left out), read from /proc.
func liveInGroup(t *testing.T, pgid int) []string {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // exited since the glob
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 3 || fields[0] == "Z" || fields[0] == "X" {
			continue
		}
		if g, _ := strconv.Atoi(fields[2]); g == pgid {
			live = append(live, s[:strings.LastIndexByte(s, ')')+1])
		}
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
		live := liveInGroup(t, pgid)
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

// A --timeout stops the whole tree of each attempt, not just its first
// process: nothing of an attempt runs beside the next one, or after again.
func TestRunTimeoutStopsTree(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, script := range []string{treeScript, stubbornTreeScript} {
		t.Run(script, func(t *testing.T) {
			stdout := newWaitWriter("")
			var stderr bytes.Buffer
			r := &runner{env: &Env{Stdout: stdout, Stderr: &stderr}, name: "sh", path: "/bin/sh",
				args: []string{"-c", script}, timeout: time.Second, grace: time.Minute}
			start := time.Now()
			err := r.run(t.Context(), policyRetries(1))
			if code, _ := exitCode(err); code != ExitTimedOut {
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
			stdout := newWaitWriter("")
			var stderr bytes.Buffer
			done := make(chan int)
			go func() {
				done <- Run(WithSignals(t.Context(), ch), []string{"run", "--", "sh", "-c", script}, nil, stdout, &stderr)
			}()
			waitFor(t, stdout, "\n")
			ch <- syscall.SIGTERM
			if code := <-done; code != 128+15 {
				t.Errorf("status %d, want 143; stderr %q", code, stderr.String())
			}
			waitTreeGone(t, trees(t, stdout.String())[0])
		})
	}
}
