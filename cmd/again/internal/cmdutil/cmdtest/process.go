package cmdtest

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
)

// HelperEnv makes the test binary act as the child command of `again run`
// (see runHelper) instead of running the tests; MainEnv makes it act as
// the again program itself, signals and all (see AgainProcess), with
// GraceEnv's duration, if set, as its cmdutil.Env.KillGrace.
const (
	HelperEnv = "AGAIN_RUN_TEST_HELPER"
	MainEnv   = "AGAIN_RUN_TEST_MAIN"
	GraceEnv  = "AGAIN_RUN_TEST_GRACE"
)

// runHelper is the child process. Its modes:
//
//	exit N          exit with status N
//	count FILE N    add one to the count in FILE; exit 1 until it reaches N, then 0
//	statuses FILE L add one to the count in FILE, n, and exit with the nth
//	                status of the comma-separated list L (its last, past its end)
//	block           print "ready PGID" (its process group), then wait to be
//	                killed (SIGTERM kills it)
//	trap-int N      print "ready PGID", exit N on SIGINT
//	trap-term N     print "ready PGID", exit N on SIGTERM
//	kill-self       die of SIGKILL
//	cat             copy stdin to stdout
//	yes             write lines to stdout until that fails
//	count-int       print "ready PGID" (its process group), then
//	                "interrupted" at the first SIGINT;
//	                then exit 130 when a line arrives on stdin, or 3 (and
//	                print "interrupted again") at a second SIGINT
//	tty-child       print "ready PGID", read two lines and print "read LINE"
//	                for each, then as count-int
//	dev-tty         print "ready", read a line from /dev/tty, print "read LINE"
func runHelper(args []string) int {
	switch args[0] {
	case "exit":
		n, _ := strconv.Atoi(args[1])
		return n
	case "count":
		n, ok := bump(args[1])
		if !ok {
			return 100
		}
		if want, _ := strconv.Atoi(args[2]); n < want {
			return 1
		}
		return 0
	case "statuses":
		n, ok := bump(args[1])
		if !ok {
			return 100
		}
		list := strings.Split(args[2], ",")
		status, _ := strconv.Atoi(list[min(n, len(list))-1])
		return status
	case "block", "trap-int", "trap-term":
		ch := make(chan os.Signal, 1)
		switch args[0] {
		case "trap-int":
			signal.Notify(ch, os.Interrupt)
		case "trap-term":
			signal.Notify(ch, syscall.SIGTERM)
		}
		fmt.Printf("ready %d\n", syscall.Getpgrp())
		select {
		case <-ch:
			n, _ := strconv.Atoi(args[1])
			return n
		case <-time.After(time.Hour): // killed long before
			return 99
		}
	case "kill-self":
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	case "cat":
		_, _ = io.Copy(os.Stdout, os.Stdin)
		return 0
	case "dev-tty":
		tty, err := os.Open("/dev/tty")
		if err != nil {
			return 101
		}
		fmt.Println("ready")
		var line string
		_, _ = fmt.Fscanln(tty, &line)
		fmt.Println("read " + line)
		return 0
	case "yes":
		for {
			if _, err := os.Stdout.WriteString("y\n"); err != nil {
				return 1 // SIGPIPE kills the helper first: fd 1 is a broken pipe
			}
		}
	case "count-int", "tty-child":
		ch := make(chan os.Signal, 2)
		signal.Notify(ch, os.Interrupt)
		fmt.Printf("ready %d\n", syscall.Getpgrp())
		for range map[bool]int{true: 2}[args[0] == "tty-child"] {
			var line string
			_, _ = fmt.Scanln(&line)
			fmt.Println("read " + line)
		}
		<-ch
		fmt.Println("interrupted")
		line := make(chan struct{})
		go func() {
			_, _ = fmt.Scanln()
			close(line)
		}()
		select {
		case <-ch:
			fmt.Println("interrupted again")
			return 3
		case <-line:
			return 130
		}
	}
	return 100
}

// bump adds one to the count in file and returns it, or false if it could
// not write it.
func bump(file string) (int, bool) {
	b, _ := os.ReadFile(file)
	n, _ := strconv.Atoi(string(b))
	n++
	return n, os.WriteFile(file, []byte(strconv.Itoa(n)), 0o600) == nil
}

// Helper returns the command line that runs the helper in mode args.
func Helper(t *testing.T, args ...string) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(HelperEnv, "1")
	// A race-enabled binary sleeps 1 s before exiting, to let late races
	// report; the helper has none to report, and every attempt would wait.
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	return append([]string{exe}, args...)
}

// AgainProcess starts the test binary as the again program (signals taken
// over by cmdutil.NotifyContext, as in cmd/again) with args, in a process group of
// its own as a shell starts a job, with stdin a pipe. It returns the
// process, the write end of its stdin and what it writes on stdout and
// stderr.
func AgainProcess(t *testing.T, args ...string) (*exec.Cmd, io.WriteCloser, *WaitWriter) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), MainEnv+"=1", HelperEnv+"=1", "GORACE=atexit_sleep_ms=0")
	out := NewWaitWriter("")
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return cmd, stdin, out
}

// AgainBinary returns the command line of the again program for a
// process of its own: this test binary, which acts as again when MainEnv
// is set (see Main).
func AgainBinary(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// AgainCommand is exec.Command for the again program with args.
func AgainCommand(t testing.TB, args ...string) *exec.Cmd {
	cmd := exec.Command(AgainBinary(t), args...)
	cmd.Env = append(os.Environ(), MainEnv+"=1", "GORACE=atexit_sleep_ms=0")
	return cmd
}

// Main makes the test binary act as the again program, running the
// command line with run (such as a root of the package's command, or
// root's RunEnv) when MainEnv is set, or as the child command of `again
// run` (see runHelper) when HelperEnv is set; otherwise it returns and the
// tests run. Call it from an init function of the package's tests, since
// the process is the test binary started anew by AgainProcess, AgainCommand
// or Helper.
func Main(run func(ctx context.Context, args []string, env cmdutil.Env) int) {
	if os.Getenv(MainEnv) == "1" {
		os.Unsetenv(MainEnv) // the command it runs is the helper
		var env cmdutil.Env
		if g := os.Getenv(GraceEnv); g != "" {
			d, err := time.ParseDuration(g)
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s=%q: %v\n", GraceEnv, g, err)
				os.Exit(100)
			}
			env.KillGrace = d
			os.Unsetenv(GraceEnv)
		}
		os.Exit(cmdutil.RunProcess(env, run))
	}
	if os.Getenv(HelperEnv) == "1" {
		os.Exit(runHelper(os.Args[1:]))
	}
}
