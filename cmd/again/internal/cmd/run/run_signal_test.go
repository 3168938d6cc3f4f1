//go:build linux

package run

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
)

// These tests run the again program (the test binary, see againProcess)
// and send it real signals, as a supervisor or a terminal would; the grace
// between the forwarded signal and SIGKILL is set through cmdtest.GraceEnv. They
// wait for real events (a line, the process's exit) within generous
// bounds, and check that nothing of the command's group is left.

// exitBound is how long again may take to exit once it should: far more
// than it needs, far less than a grace of an hour.
const exitBound = time.Minute

// readyLine waits for the first line that the command prints, "ready PGID
// [PID]", and returns its numbers: the command's process group, and the
// pid of a process it started in the background, if it printed one. A
// test that fails leaves nothing of the group: it gets SIGKILL, before
// again's own (see againProcess), whose output it may hold open.
func readyLine(t *testing.T, out *cmdtest.WaitWriter) (pgid, bg int) {
	t.Helper()
	cmdtest.WaitFor(t, out, "\n")
	line, _, _ := strings.Cut(out.String(), "\n")
	if n, _ := fmt.Sscanf(line, "ready %d %d", &pgid, &bg); n < 1 || pgid <= 1 {
		t.Fatalf("first line %q, want ready PGID [PID]", line)
	}
	t.Cleanup(func() {
		if t.Failed() {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	})
	return pgid, bg
}

// exited waits up to exitBound for the again process cmd, whose command's
// group is pgid, to exit, and returns its status and how long it took
// after since. If again overstays the bound, both groups are killed, since
// what is left of the command's may hold again's output open.
func exited(t *testing.T, cmd *exec.Cmd, pgid int, since time.Time) (int, time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	timer := time.NewTimer(exitBound)
	defer timer.Stop()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode(), time.Since(since)
	case <-timer.C:
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-done
		t.Fatalf("again still ran %v after the signal", exitBound)
		return 0, 0
	}
}

// sendSignal sends sig to the again process alone (not its group, which the
// command is not in anyway), as kill(1) does.
func sendSignal(t *testing.T, cmd *exec.Cmd, sig syscall.Signal) time.Time {
	t.Helper()
	sent := time.Now()
	if err := syscall.Kill(cmd.Process.Pid, sig); err != nil {
		t.Fatal(err)
	}
	return sent
}

// The reviewer's case: a command that ignores SIGTERM, and what it
// started in the background ignores it too. again forwards the SIGTERM,
// waits the grace, SIGKILLs the whole group and exits 143, instead of
// waiting for the command however long it runs.
func TestRunSignalKillsAfterGrace(t *testing.T) {
	const grace = 500 * time.Millisecond
	t.Setenv(cmdtest.GraceEnv, grace.String())
	cmd, _, out := cmdtest.AgainProcess(t, "run", "--", "sh", "-c", `trap '' TERM; sleep 1000 & echo "ready $$ $!"; wait`)
	pgid, bg := readyLine(t, out)
	if bg <= 0 {
		t.Fatalf("output %q: no background process", out.String())
	}
	code, took := exited(t, cmd, pgid, sendSignal(t, cmd, syscall.SIGTERM))
	if code != 128+15 {
		t.Errorf("status %d, want 143; output %q", code, out.String())
	}
	if took < grace {
		t.Errorf("again exited %v after SIGTERM, before the grace of %v", took, grace)
	}
	_, got, _ := strings.Cut(out.String(), "\n")
	if want := "again run: stopped: received SIGTERM (attempt 1/4: killed by SIGKILL)\n"; got != want {
		t.Errorf("output after the ready line %q, want %q", got, want)
	}
	waitTreeGone(t, [2]int{pgid, bg})
}

// A second signal does not wait for the grace: the group gets SIGKILL at
// once. The command handles the first SIGINT (it prints "interrupted"),
// which shows that again has received and forwarded it, so that the
// second cannot merge with it; with a grace of an hour, only the second
// one can end the command within the bound.
func TestRunSecondSignalKills(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(cmdtest.GraceEnv, "1h")
	cmd, _, out := cmdtest.AgainProcess(t, "run", "--", exe, "count-int")
	pgid, _ := readyLine(t, out)
	sendSignal(t, cmd, syscall.SIGINT)
	cmdtest.WaitFor(t, out, "interrupted\n")
	code, _ := exited(t, cmd, pgid, sendSignal(t, cmd, syscall.SIGINT))
	if code != 128+2 {
		t.Errorf("status %d, want 130; output %q", code, out.String())
	}
	_, got, _ := strings.Cut(out.String(), "\n")
	if want := "interrupted\nagain run: stopped: received SIGINT (attempt 1/4: killed by SIGKILL)\n"; got != want {
		t.Errorf("output after the ready line %q, want %q (the second SIGINT kills, it is not forwarded)", got, want)
	}
	waitGroupGone(t, pgid)
}

// A command that exits at once on the forwarded SIGTERM, here with status
// 0, ends the wait at once, not after the grace (an hour), and again exits
// 143 all the same: it was stopped.
func TestRunSignalPromptExit(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(cmdtest.GraceEnv, "1h")
	cmd, _, out := cmdtest.AgainProcess(t, "run", "--", exe, "trap-term", "0")
	pgid, _ := readyLine(t, out)
	code, _ := exited(t, cmd, pgid, sendSignal(t, cmd, syscall.SIGTERM))
	if code != 128+15 {
		t.Errorf("status %d, want 143; output %q", code, out.String())
	}
	_, got, _ := strings.Cut(out.String(), "\n")
	if want := "again run: stopped: received SIGTERM (attempt 1/4: exit status 0)\n"; got != want {
		t.Errorf("output after the ready line %q, want %q", got, want)
	}
	waitGroupGone(t, pgid)
}
