package run

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
)

// runAgain runs `again args...` in-process and returns the status and what
// it wrote.
func runAgain(ctx context.Context, stdin io.Reader, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = againRun(ctx, args, stdin, &out, &errb)
	return code, out.String(), errb.String()
}

func TestRunStatusAndLines(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	zero := []string{"run", "--initial", "0", "--retries", "2"}
	tests := []struct {
		name   string
		flags  []string
		child  []string
		code   int
		stderr string
		count  string // the final count for the count mode
	}{
		{"success", zero, []string{"exit", "0"}, 0, "", ""},
		{"always fails", zero, []string{"exit", "7"}, 7, cmdtest.Lines(
			"again run: attempt 1/3 failed (exit status 7); retrying in 0s",
			"again run: attempt 2/3 failed (exit status 7); retrying in 0s",
			"again run: attempt 3/3 failed (exit status 7); giving up"), ""},
		{"quiet", append(zero, "--quiet"), []string{"exit", "7"}, 7, "", ""},
		{"succeeds on the third attempt", []string{"run", "--initial", "0", "--retries", "5"}, []string{"count", filepath.Join(dir, "third"), "3"}, 0, cmdtest.Lines(
			"again run: attempt 1/6 failed (exit status 1); retrying in 0s",
			"again run: attempt 2/6 failed (exit status 1); retrying in 0s"), "3"},
		{"status not in --retry-on-exit", append(zero, "--retry-on-exit", "3,75"), []string{"exit", "7"}, 7, cmdtest.Lines(
			"again run: attempt 1/3 failed (exit status 7); not retrying: status not in --retry-on-exit"), ""},
		{"status in --retry-on-exit", append(zero, "--retry-on-exit", "3, 75"), []string{"exit", "75"}, 75, cmdtest.Lines(
			"again run: attempt 1/3 failed (exit status 75); retrying in 0s",
			"again run: attempt 2/3 failed (exit status 75); retrying in 0s",
			"again run: attempt 3/3 failed (exit status 75); giving up"), ""},
		{"killed by a signal", []string{"run", "--initial", "0", "--retries", "1"}, []string{"kill-self"}, 128 + 9, cmdtest.Lines(
			"again run: attempt 1/2 failed (killed by SIGKILL); retrying in 0s",
			"again run: attempt 2/2 failed (killed by SIGKILL); giving up"), ""},
		// --attempt-timeout is the time kept for an attempt before the deadline: a
		// 1 h deadline leaves less than that after the first attempt.
		{"no wait past the deadline", []string{"run", "--initial", "2h", "--max", "0", "--jitter", "none", "--deadline", "1h", "--attempt-timeout", "1h"}, []string{"exit", "1"}, 124, cmdtest.Lines(
			"again run: stopped by the --deadline 1h after 1 attempt: exit status 1"), ""},
		{"--deadline without --retries retries until the deadline", []string{"run", "--initial", "0", "--deadline", "1m"}, []string{"count", filepath.Join(dir, "sixth"), "6"}, 0, cmdtest.Lines(
			"again run: attempt 1 failed (exit status 1); retrying in 0s",
			"again run: attempt 2 failed (exit status 1); retrying in 0s",
			"again run: attempt 3 failed (exit status 1); retrying in 0s",
			"again run: attempt 4 failed (exit status 1); retrying in 0s",
			"again run: attempt 5 failed (exit status 1); retrying in 0s"), "6"},
		{"--retries and --deadline: whichever comes first", append(zero, "--deadline", "1m"), []string{"exit", "7"}, 7, cmdtest.Lines(
			"again run: attempt 1/3 failed (exit status 7); retrying in 0s",
			"again run: attempt 2/3 failed (exit status 7); retrying in 0s",
			"again run: attempt 3/3 failed (exit status 7); giving up"), ""},
		{"real delays", []string{"run", "--initial", "1ms", "--multiplier", "1", "--retries", "1", "--jitter", "none"}, []string{"exit", "7"}, 7, cmdtest.Lines(
			"again run: attempt 1/2 failed (exit status 7); retrying in 1ms",
			"again run: attempt 2/2 failed (exit status 7); giving up"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append(append([]string{}, tt.flags...), "--"), cmdtest.Helper(t, tt.child...)...)
			code, stdout, stderr := runAgain(t.Context(), nil, args...)
			if code != tt.code {
				t.Errorf("again %v: status %d, want %d", tt.flags, code, tt.code)
			}
			if stderr != tt.stderr {
				t.Errorf("stderr =\n%s\nwant\n%s", stderr, tt.stderr)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if tt.count != "" {
				if b, _ := os.ReadFile(tt.child[1]); string(b) != tt.count {
					t.Errorf("the command ran %s times, want %s", b, tt.count)
				}
			}
		})
	}
}

func TestRunWithoutDash(t *testing.T) {
	// Flags after the command belong to it: --quiet goes to the child.
	code, _, stderr := runAgain(t.Context(), nil, append([]string{"run", "--retries", "0"}, cmdtest.Helper(t, "exit", "7", "--quiet")...)...)
	if want := cmdtest.Lines("again run: attempt 1/1 failed (exit status 7); giving up"); code != 7 || stderr != want {
		t.Errorf("status %d, stderr %q; want 7, %q", code, stderr, want)
	}
}

func TestRunStdio(t *testing.T) {
	defer goleak.VerifyNone(t)
	code, stdout, _ := runAgain(t.Context(), strings.NewReader("hello\n"), append([]string{"run", "--"}, cmdtest.Helper(t, "cat")...)...)
	if code != 0 || stdout != "hello\n" {
		t.Errorf("cat: status %d, stdout %q; want 0, %q", code, stdout, "hello\n")
	}
}

func TestRunCannotStart(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "data.txt")
	if err := os.WriteFile(notExec, []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Executable, but its interpreter does not exist.
	badInterp := filepath.Join(dir, "bad-interpreter")
	if err := os.WriteFile(badInterp, []byte("#!/nonexistent/interpreter\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Executable, so found in a search, but the kernel refuses to run it.
	badFormat := filepath.Join(dir, "bad-format")
	if err := os.WriteFile(badFormat, []byte{0, 1, 2, 3}, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		cmd    string
		code   int
		stderr string
	}{
		{"not found", "again-no-such-command", 127, "again run: again-no-such-command: command not found\n"},
		{"missing path", filepath.Join(dir, "missing"), 127, "again run: " + filepath.Join(dir, "missing") + ": command not found\n"},
		{"not executable", notExec, 126, "again run: " + notExec + ": cannot cmdutil.Execute: permission denied\n"},
		{"directory", dir, 126, "again run: " + dir + ": cannot cmdutil.Execute: is a directory\n"},
		{"bad interpreter", badInterp, 126, "again run: " + badInterp + ": cannot cmdutil.Execute: no such file or directory\n"},
		{"bad format", badFormat, 126, "again run: " + badFormat + ": cannot cmdutil.Execute: exec format error\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runAgain(t.Context(), nil, "run", "--", tt.cmd, "arg")
			if code != tt.code || stderr != tt.stderr || stdout != "" {
				t.Errorf("again run %s: status %d, stderr %q, stdout %q; want %d, %q, nothing", tt.cmd, code, stderr, stdout, tt.code, tt.stderr)
			}
		})
	}
}

// A command that disappears between attempts is "not found", as a shell
// would say, at whichever attempt that happens.
func TestRunCommandVanishes(t *testing.T) {
	script := filepath.Join(t.TempDir(), "once")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nrm -f -- \"$0\"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runAgain(t.Context(), nil, "run", "--initial", "0", "--retries", "2", "--", script)
	want := cmdtest.Lines(
		"again run: attempt 1/3 failed (exit status 1); retrying in 0s",
		"again run: "+script+": command not found")
	if code != ExitNotFound || stderr != want || stdout != "" {
		t.Errorf("status %d, stderr %q, stdout %q; want 127, %q, nothing", code, stderr, stdout, want)
	}
}

func TestRunUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"no command", []string{"run"}, "again run: missing the command to run; usage: again run [flags] -- CMD [ARGS...] (see 'again run --help')"},
		{"only dash", []string{"run", "--"}, "again run: missing the command to run; usage: again run [flags] -- CMD [ARGS...] (see 'again run --help')"},
		{"bad timeout", []string{"run", "--attempt-timeout", "soon", "--", "true"}, `again run: --attempt-timeout "soon": want a duration of 0 or more, with no limit short of 292 years (Go syntax such as 500ms, 1.5s or 2m)`},
		{"negative timeout", []string{"run", "--attempt-timeout", "-1s", "--", "true"}, `again run: --attempt-timeout "-1s": want a duration of 0 or more, with no limit short of 292 years (Go syntax such as 500ms, 1.5s or 2m)`},
		{"zero exit code", []string{"run", "--retry-on-exit", "0", "--", "true"}, `again run: --retry-on-exit "0": want a comma-separated list of exit statuses from 1 to 255`},
		{"exit code too big", []string{"run", "--retry-on-exit", "1,256", "--", "true"}, `again run: --retry-on-exit "1,256": want a comma-separated list of exit statuses from 1 to 255`},
		{"not a number", []string{"run", "--retry-on-exit", "1,,2", "--", "true"}, `again run: --retry-on-exit "1,,2": want a comma-separated list of exit statuses from 1 to 255`},
		{"bad policy", []string{"run", "--retries", "-1", "--", "true"}, "again run: --retries \"-1\": want a whole number from 0 to 100000"},
		{"unknown flag", []string{"run", "--retry", "3", "--", "true"}, "again run: unknown flag: --retry (see 'again run --help')"},
		{"bad deadline", []string{"run", "--deadline", "abc", "--", "true"}, `again run: --deadline "abc": want a duration of 0 or more, with no limit short of 292 years (Go syntax such as 500ms, 1.5s or 2m)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runAgain(t.Context(), nil, tt.args...)
			if code != cmdutil.ExitUsage || stderr != tt.msg+"\n" || stdout != "" {
				t.Errorf("again %q: status %d, stderr %q, stdout %q; want 2, %q, nothing", tt.args, code, stderr, stdout, tt.msg)
			}
		})
	}
}

// newTestRunner returns a runner for the helper in mode args with short
// limits: tests of timeouts wait for real child processes to be killed.
func newTestRunner(t *testing.T, env *cmdutil.Env, timeout time.Duration, args ...string) *runner {
	cmd := cmdtest.Helper(t, args...)
	// The helper dies at once on SIGTERM, so a long grace costs nothing; a
	// short one turned SIGTERM into SIGKILL (status 137) on a loaded machine.
	// TestRunTimeoutKill sets its own short grace for a child that ignores SIGTERM.
	return &runner{env: env, name: cmd[0], path: cmd[0], args: cmd[1:], timeout: timeout, grace: 10 * time.Second}
}

func TestRunTimeout(t *testing.T) {
	defer goleak.VerifyNone(t)
	var stderr bytes.Buffer
	r := newTestRunner(t, &cmdutil.Env{Stdout: io.Discard, Stderr: &stderr}, 100*time.Millisecond, "block", "0")
	err := r.run(t.Context(), backoff.Policy{Initial: -1, Retries: 1})
	if code, _ := cmdutil.ExitCode(err); code != ExitTimedOut {
		t.Errorf("status %d, want 124 (timed out)", code)
	}
	want := cmdtest.Lines(
		"again run: attempt 1/2 failed (timed out after 100ms); retrying in 0s",
		"again run: attempt 2/2 failed (timed out after 100ms); giving up")
	if stderr.String() != want {
		t.Errorf("stderr =\n%s\nwant\n%s", stderr.String(), want)
	}
}

func TestRunTimeoutKill(t *testing.T) {
	defer goleak.VerifyNone(t)
	// A shell ignores SIGTERM from its first instruction, so the timeout
	// cannot strike before the child is ready; sleep inherits the ignoring.
	var stderr bytes.Buffer
	r := &runner{env: &cmdutil.Env{Stdout: io.Discard, Stderr: &stderr}, name: "sh", path: "/bin/sh",
		args: []string{"-c", "trap '' TERM; exec sleep 3600"}, timeout: time.Second, grace: 50 * time.Millisecond}
	err := r.run(t.Context(), backoff.Policy{Retries: backoff.NoRetries})
	if code, _ := cmdutil.ExitCode(err); code != ExitTimedOut {
		t.Errorf("status %d, want 124 (timed out, even when SIGKILL ended it)", code)
	}
	if want := cmdtest.Lines("again run: attempt 1/1 failed (timed out after 1s); giving up"); stderr.String() != want {
		t.Errorf("stderr = %q, want %q", stderr.String(), want)
	}
}

// A command that exits 0 when --attempt-timeout sends it SIGTERM has still failed:
// it is retried, and a last attempt that timed out exits 124, never 0.
func TestRunTimeoutExitZero(t *testing.T) {
	defer goleak.VerifyNone(t)
	var stderr bytes.Buffer
	// The timeout leaves the helper time to install its handler; if it did
	// not, SIGTERM kills it, with the same status and lines.
	r := newTestRunner(t, &cmdutil.Env{Stdout: io.Discard, Stderr: &stderr}, 500*time.Millisecond, "trap-term", "0")
	r.grace = 10 * time.Second // a slow machine must not turn the exit into a SIGKILL
	err := r.run(t.Context(), backoff.Policy{Initial: -1, Retries: 1})
	if code, _ := cmdutil.ExitCode(err); code != ExitTimedOut {
		t.Errorf("status %d, want 124 (timed out)", code)
	}
	want := cmdtest.Lines(
		"again run: attempt 1/2 failed (timed out after 500ms); retrying in 0s",
		"again run: attempt 2/2 failed (timed out after 500ms); giving up")
	if stderr.String() != want {
		t.Errorf("stderr =\n%s\nwant\n%s", stderr.String(), want)
	}
}

func TestRunTimeoutNotInRetryList(t *testing.T) {
	var stderr bytes.Buffer
	r := newTestRunner(t, &cmdutil.Env{Stdout: io.Discard, Stderr: &stderr}, 50*time.Millisecond, "block", "0")
	r.exits.retryOn = map[int]bool{75: true}
	err := r.run(t.Context(), backoff.Policy{Initial: -1, Retries: 1})
	if code, _ := cmdutil.ExitCode(err); code != ExitTimedOut || strings.Count(stderr.String(), "timed out") != 2 {
		t.Errorf("status %d, stderr %q; want 124 and both attempts timed out (timeouts are always retried)", code, stderr.String())
	}
}

// signalled starts again run on the helper in mode args with a signal
// channel, waits until the writer sees ready, sends sig and returns the
// status and stderr.
func signalled(t *testing.T, policy []string, ready string, sig os.Signal, mode ...string) (int, string) {
	t.Helper()
	ch := make(chan os.Signal, 1)
	ctx := cmdutil.WithSignals(t.Context(), ch)
	stdout := cmdtest.NewWaitWriter(ready)
	stderr := cmdtest.NewWaitWriter("")
	watch := stdout
	if ready == "retrying" {
		stdout, stderr = cmdtest.NewWaitWriter(""), cmdtest.NewWaitWriter(ready)
		watch = stderr
	}
	args := append(append(append([]string{"run"}, policy...), "--"), cmdtest.Helper(t, mode...)...)
	done := make(chan int)
	// A command that handles the signal has a minute to exit before SIGKILL,
	// however loaded the machine.
	env := cmdutil.Env{Stdout: stdout, Stderr: stderr, KillGrace: time.Minute}
	go func() { done <- againRunEnv(ctx, args, env) }()
	select {
	case <-watch.Seen():
	case code := <-done:
		t.Fatalf("again exited with %d before %q; stderr %q", code, ready, stderr.String())
	}
	ch <- sig
	return <-done, stderr.String()
}

// A signal sent to again reaches the command, which may end as it likes;
// again then exits 128+N for the signal, whatever the command's status,
// with one line saying so and how the command ended.
func TestRunForwardsSignals(t *testing.T) {
	defer goleak.VerifyNone(t)
	code, stderr := signalled(t, []string{"--initial", "0"}, "ready", os.Interrupt, "trap-int", "42")
	if want := cmdtest.Lines("again run: stopped: received SIGINT (attempt 1/4: exit status 42)"); code != 128+2 || stderr != want {
		t.Errorf("SIGINT during an attempt: status %d, stderr %q; want 130, %q", code, stderr, want)
	}
	code, stderr = signalled(t, []string{"--initial", "0"}, "ready", syscall.SIGTERM, "block", "0")
	if want := cmdtest.Lines("again run: stopped: received SIGTERM (attempt 1/4: killed by SIGTERM)"); code != 128+15 || stderr != want {
		t.Errorf("SIGTERM during an attempt: status %d, stderr %q; want 143, %q", code, stderr, want)
	}
	// A command that exits 0 on SIGTERM has not succeeded: again was
	// stopped, as whoever sent the signal expects; --quiet keeps the line,
	// as it keeps again's other errors.
	code, stderr = signalled(t, []string{"--initial", "0", "--quiet"}, "ready", syscall.SIGTERM, "trap-term", "0")
	if want := cmdtest.Lines("again run: stopped: received SIGTERM (attempt 1/4: exit status 0)"); code != 128+15 || stderr != want {
		t.Errorf("SIGTERM, command exits 0: status %d, stderr %q; want 143, %q", code, stderr, want)
	}
}

func TestRunSignalDuringWait(t *testing.T) {
	defer goleak.VerifyNone(t)
	code, stderr := signalled(t, []string{"--initial", "1h", "--max", "0", "--jitter", "none"}, "retrying", syscall.SIGTERM, "exit", "3")
	want := cmdtest.Lines(
		"again run: attempt 1/4 failed (exit status 3); retrying in 1h",
		"again run: stopped: received SIGTERM")
	if code != 128+15 || stderr != want {
		t.Errorf("SIGTERM during a wait: status %d, stderr %q; want 143, %q", code, stderr, want)
	}
}

// A signal that arrives before the first attempt (again's context is
// already cancelled by it) stops the run with 128+N and its line without
// starting the command, however soon the relay goroutine gets to it.
func TestRunSignalBeforeFirstAttempt(t *testing.T) {
	defer goleak.VerifyNone(t)
	for range 20 { // the race it guards against is one of scheduling
		ch := make(chan os.Signal, 1)
		ch <- syscall.SIGTERM
		ctx, cancel := context.WithCancelCause(cmdutil.WithSignals(t.Context(), ch))
		cancel(&cmdutil.SignalError{Signal: syscall.SIGTERM})
		count := filepath.Join(t.TempDir(), "count")
		code, stdout, stderr := runAgain(ctx, nil, append([]string{"run", "--"}, cmdtest.Helper(t, "count", count, "1")...)...)
		if want := "again run: stopped: received SIGTERM\n"; code != 128+15 || stdout != "" || stderr != want {
			t.Fatalf("status %d, stdout %q, stderr %q; want 143, nothing, %q", code, stdout, stderr, want)
		}
		if _, err := os.Stat(count); err == nil {
			t.Fatal("the command ran after the signal")
		}
	}
}

func TestRoundDelay(t *testing.T) {
	tests := []struct{ in, want time.Duration }{
		{0, 0},
		{500 * time.Microsecond, 500 * time.Microsecond},
		{801206 * time.Nanosecond, 801 * time.Microsecond},
		{400*time.Millisecond + 123456, 400 * time.Millisecond},
		{1234567891, 1230 * time.Millisecond},
		{92*time.Second + 600*time.Millisecond, 93 * time.Second},
	}
	for _, tt := range tests {
		if got := cmdutil.RoundDelay(tt.in); got != tt.want {
			t.Errorf("cmdutil.RoundDelay(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestRunDeadlineDuringAttempt(t *testing.T) {
	defer goleak.VerifyNone(t)
	var stderr bytes.Buffer
	r := newTestRunner(t, &cmdutil.Env{Stdout: io.Discard, Stderr: &stderr}, time.Hour, "block", "0")
	r.deadline = 100 * time.Millisecond
	err := r.run(t.Context(), backoff.Policy{Retries: 3})
	if code, _ := cmdutil.ExitCode(err); code != ExitTimedOut {
		t.Errorf("status %d, want 124 (timed out at the deadline)", code)
	}
	if code, msg := cmdutil.ExitCode(err); msg != "stopped by the --deadline 100ms after 1 attempt: the command was still running" || stderr.Len() != 0 {
		t.Errorf("exit %d, %q, stderr %q; want the deadline's line alone", code, msg, stderr.String())
	}
}

func FuzzParseExitList(f *testing.F) {
	for _, s := range []string{"", "1", "3,75", " 3 , 75 ", "0", "256", "1,,2", "-1", "+7", "1e2", "٣"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		set, err := parseExitList("retry-on-exit", s)
		if err != nil {
			if code, _ := cmdutil.ExitCode(err); code != cmdutil.ExitUsage {
				t.Errorf("parseExitList(%q) error has status %d, want %d", s, code, cmdutil.ExitUsage)
			}
			return
		}
		if s == "" && set != nil {
			t.Errorf("parseExitList(\"\") = %v, want nil (any non-zero status)", set)
		}
		for n := range set {
			if n < 1 || n > 255 {
				t.Errorf("parseExitList(%q) accepted %d, want only 1 to 255", s, n)
			}
		}
		if s != "" && len(set) == 0 {
			t.Errorf("parseExitList(%q) = empty set without error", s)
		}
	})
}

// TestRunRetryOnExitDefaultHelp: the help of --retry-on-exit, and the
// paragraph about it, name the statuses that are not retried by default,
// those notRetried names, and no others.
func TestRunRetryOnExitDefaultHelp(t *testing.T) {
	var statuses []string
	for n := 1; n <= 255; n++ {
		if notRetried(n) != "" {
			statuses = append(statuses, strconv.Itoa(n))
		}
	}
	if len(statuses) < 2 {
		t.Fatalf("notRetried names %v; this test expects a list", statuses)
	}
	list := strings.Join(statuses[:len(statuses)-1], ", ") + " and " + statuses[len(statuses)-1]
	help := run(t, "run", "--help").Stdout
	flag := ""
	for line := range strings.Lines(help) {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "--retry-on-exit" {
			flag = strings.Join(f, " ")
		}
	}
	if want := "(default any non-zero but " + list + ")"; !strings.HasSuffix(flag, want) {
		t.Errorf("again run --help: %q, want it to end with %q", flag, want)
	}
	if want := "non-zero status is retried but " + list; !strings.Contains(strings.Join(strings.Fields(help+cmdtest.Guide(t)), " "), want) {
		t.Errorf("again run --help does not say %q", want)
	}
}

// A command killed by SIGPIPE (its reader has gone, as in `again run -- yes
// | head -1`) is not retried unless --retry-on-exit lists 141: every
// attempt would meet the same closed pipe.
func TestRunSIGPIPENotRetried(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tt := range []struct {
		flags  []string
		stderr string
	}{
		{nil, cmdtest.Lines("again run: attempt 1/4 failed (killed by SIGPIPE); not retrying: nothing reads its output any more (list 141 in --retry-on-exit to retry it)")},
		{[]string{"--retry-on-exit", "141", "--retries", "1"}, cmdtest.Lines(
			"again run: attempt 1/2 failed (killed by SIGPIPE); retrying in 0s",
			"again run: attempt 2/2 failed (killed by SIGPIPE); giving up")},
	} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close() // nothing reads: the first write gets SIGPIPE
		var stderr bytes.Buffer
		args := append(append(append([]string{"run", "--initial", "0"}, tt.flags...), "--"), cmdtest.Helper(t, "yes")...)
		code := againRun(t.Context(), args, nil, w, &stderr)
		w.Close()
		if code != 128+13 || stderr.String() != tt.stderr {
			t.Errorf("again %v: status %d, stderr %q; want 141, %q", tt.flags, code, stderr.String(), tt.stderr)
		}
	}
}

// Every attempt reads again's own stdin from where the previous attempt
// stopped, as the help says: a retry does not see the input again.
func TestRunStdinAcrossAttempts(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := w.WriteString("first\nsecond\n"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	code, stdout, _ := runAgain(t.Context(), r, "run", "--initial", "0", "--retries", "2", "--", "sh", "-c", `read -r line; echo "got $line"; exit 1`)
	if want := "got first\ngot second\ngot \n"; code != 1 || stdout != want {
		t.Errorf("status %d, stdout %q; want 1, %q", code, stdout, want)
	}
}

// Whether --attempt-timeout or --deadline fires first, a run that the deadline ends
// says so in the same words, and exits 124.
func TestRunDeadlineMessageWhicheverTimer(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, timeout := range []string{"150ms", "200ms", "190ms", "1h"} {
		t.Run(timeout, func(t *testing.T) {
			args := append([]string{"run", "--initial", "0", "--retries", "5", "--attempt-timeout", timeout, "--deadline", "200ms", "--"}, cmdtest.Helper(t, "block", "0")...)
			code, _, stderr := runAgain(t.Context(), nil, args...)
			// The last attempt was stopped at the deadline ("the command
			// was still running"), or by its --attempt-timeout with too little of
			// the deadline left for another ("timed out after 150ms").
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			last := lines[len(lines)-1]
			const want = "again run: stopped by the --deadline 200ms after "
			if code != ExitTimedOut || !strings.HasPrefix(last, want) ||
				!strings.HasSuffix(last, ": the command was still running") && !strings.HasSuffix(last, ": timed out after "+timeout) {
				t.Errorf("--attempt-timeout %s --deadline 200ms: status %d, stderr %q; want 124 and a last line starting %q", timeout, code, stderr, want)
			}
		})
	}
}

// One Ctrl-C in a terminal (SIGINT to every process of the foreground job)
// reaches the command once: it is in a group of its own, so only again's
// forwarding delivers it, and it can finish its clean-up.
func TestRunCtrlCReachesCommandOnce(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(cmdtest.GraceEnv, "1h") // the command's clean-up is not cut short on a slow machine
	cmd, stdin, out := cmdtest.AgainProcess(t, "run", "--initial", "0", "--", exe, "count-int")
	cmdtest.WaitFor(t, out, "ready")
	// The terminal's Ctrl-C goes to every process of again's group, the
	// foreground job; the command must not be one of them. (Two SIGINTs
	// sent together can arrive as one, so the group is checked as well as
	// the count.)
	ready := fmt.Sprintf("ready %d\n", cmd.Process.Pid)
	if strings.HasPrefix(out.String(), ready) {
		t.Fatalf("the command is in again's process group %d: %q", cmd.Process.Pid, out.String())
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	cmdtest.WaitFor(t, out, "interrupted\n")
	// A second delivery, if any, was sent with the first; by the time the
	// command has printed, it has arrived.
	if _, err := io.WriteString(stdin, "done\n"); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	_, got, _ := strings.Cut(out.String(), "\n") // after "ready PGID"
	want := "interrupted\nagain run: stopped: received SIGINT (attempt 1/4: exit status 130)\n"
	if code := cmd.ProcessState.ExitCode(); code != 130 || got != want {
		t.Errorf("status %d (%v), output %q; want 130, %q", code, err, out.String(), want)
	}
}

// policyRetries is a policy with no wait and n retries.
func policyRetries(n int) backoff.Policy {
	return backoff.Policy{Initial: -1, Retries: n}
}

// SIGHUP and SIGQUIT, like SIGINT and SIGTERM, reach the command and end
// the retries.
func TestRunForwardsHangupAndQuit(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGQUIT} {
		ch := make(chan os.Signal, 1)
		stdout := cmdtest.NewWaitWriter("")
		var stderr bytes.Buffer
		done := make(chan int)
		go func() {
			done <- againRun(cmdutil.WithSignals(t.Context(), ch), []string{"run", "--", "sh", "-c", "echo ready; exec sleep 1000"}, nil, stdout, &stderr)
		}()
		cmdtest.WaitFor(t, stdout, "ready")
		ch <- sig
		name := cmdutil.SignalName(sig)
		want := cmdtest.Lines("again run: stopped: received " + name + " (attempt 1/4: killed by " + name + ")")
		if code := <-done; code != 128+int(sig) || stderr.String() != want {
			t.Errorf("%s: status %d, stderr %q; want %d, %q", name, code, stderr.String(), 128+int(sig), want)
		}
	}
}
