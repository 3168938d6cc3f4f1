package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
	"github.com/spf13/cobra"
)

// Exit statuses of `again run` besides the child's own, as shells use them.
const (
	ExitCannotExecute = 126 // the command exists but cannot be run
	ExitNotFound      = 127 // the command was not found
)

// killGrace is how long a child that overstays its --timeout (or the
// --deadline) has after SIGTERM before it gets SIGKILL.
const killGrace = 2 * time.Second

func newRunCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run [flags] -- CMD [ARGS...]",
		Short: "Run a command, retrying it with exponential backoff while it fails",
		Long: `run runs CMD with ARGS and, while it exits with a non-zero status, runs it
again after a backoff delay drawn from the policy flags, at most --retries
times. The command inherits again's stdin, stdout and stderr unbuffered.

Each retry prints one line on stderr, such as
  again: attempt 2/4 failed (exit status 7); retrying in 400ms
and --quiet silences them.

--timeout limits each attempt: the command gets SIGTERM, then SIGKILL 2s
later, and the attempt counts as failed (with status 143, as if SIGTERM
had killed it, if the command exits 0). --deadline limits the whole run:
again never starts a wait that would end after it, and stops a command
still running when it passes. --retry-on-exit retries only the listed exit
statuses (a command killed by signal N has status 128+N); a timed-out
attempt is always retried.

SIGINT and SIGTERM sent to again are forwarded to the command, and no
further attempt is made. (Ctrl-C in a terminal also reaches the command
directly, as it reaches every process of the foreground job.)

Exit status: the last attempt's (128+N if signal N killed it; 128+N also
when signal N stops again between attempts), 127 if the command is not
found, 126 if it cannot be executed, 2 for a usage error.

Durations are Go syntax (500ms, 1.5s, 2m) or a bare number of milliseconds.`,
		Example: `  # Wait for a database in a container entrypoint: up to 10 retries, 30 s in all.
  again run --retries 10 --deadline 30s -- pg_isready -h db

  # Retry a flaky download, each attempt limited to 20 s.
  again run --timeout 20s -- curl -fsS -o data.json https://example.com/data.json

  # Retry only exit status 75 (EX_TEMPFAIL), without the progress lines.
  again run --retry-on-exit 75 --quiet -- ./sync.sh`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return Usagef("missing the command to run; usage: again run [flags] -- CMD [ARGS...] (see 'again run --help')")
			}
			return nil
		},
	}
	fs := cmd.Flags()
	// Everything after CMD belongs to it, even without "--".
	fs.SetInterspersed(false)
	pf := AddPolicyFlags(fs)
	timeout := ""
	fs.Var(textFlag{s: &timeout, typ: "duration"}, "timeout", "limit on each attempt, after which the command is stopped (default none)")
	retryOn := ""
	fs.Var(textFlag{s: &retryOn, typ: "list"}, "retry-on-exit", "comma-separated exit statuses to retry (default any non-zero)")
	quiet := fs.Bool("quiet", false, "print no line per retry")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		in, err := pf.Parse()
		if err != nil {
			return err
		}
		r := &runner{env: env, name: args[0], args: args[1:], quiet: *quiet, grace: killGrace, deadline: in.Deadline}
		if r.timeout, err = durationFlag("timeout", timeout, true); err != nil {
			return err
		}
		if r.retryOn, err = parseExitList(retryOn); err != nil {
			return err
		}
		if r.path, err = lookPath(args[0]); err != nil {
			return err
		}
		return r.run(cmd.Context(), in.Policy)
	}
	return cmd
}

// parseExitList parses --retry-on-exit: "" means any non-zero status.
func parseExitList(s string) (map[int]bool, error) {
	if s == "" {
		return nil, nil
	}
	set := map[int]bool{}
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 255 {
			return nil, Usagef("--retry-on-exit must be a comma-separated list of exit statuses from 1 to 255, got %q", s)
		}
		set[n] = true
	}
	return set, nil
}

// lookPath finds the command as a shell would, and reports a command that
// cannot run with the shell's status and a message naming it.
func lookPath(name string) (string, error) {
	path, err := exec.LookPath(name)
	switch {
	case err == nil:
		return path, nil
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
		return "", notFound(name)
	}
	return "", cannotExecute(name, err)
}

// notFound is the error for a command that does not exist: status 127.
func notFound(name string) error {
	return Exit(ExitNotFound, fmt.Errorf("%s: command not found", name))
}

// cannotExecute is the error for a command that exists but cannot run:
// status 126.
func cannotExecute(name string, err error) error {
	return Exit(ExitCannotExecute, fmt.Errorf("%s: cannot execute: %w", name, unwrapPathError(err)))
}

// unwrapPathError drops the repetition of the command's name from the
// errors of os/exec ("exec: \"x\": permission denied" becomes "permission denied").
func unwrapPathError(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		err = ee.Err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err
}

// runner is one `again run`.
type runner struct {
	env      *Env
	name     string // the command as given, the child's argv[0]
	path     string // the command found in $PATH
	args     []string
	timeout  time.Duration // per attempt; 0 means none
	deadline time.Duration // for the whole run; 0 means none
	grace    time.Duration // between SIGTERM and SIGKILL
	retryOn  map[int]bool  // nil: every non-zero status
	quiet    bool

	mu      sync.Mutex
	proc    *os.Process // the running child, if any
	signal  os.Signal   // the first signal received, if any
	stopped bool        // whether a signal arrived while no child ran
}

// attemptError is a failed attempt: the status again exits with if it is
// the last, and why it failed ("exit status 7", "timed out after 2s").
type attemptError struct {
	status int
	why    string
}

func (e *attemptError) Error() string { return e.why }

func (r *runner) run(ctx context.Context, p backoff.Policy) error {
	// The child's life is bounded by the deadline and the timeout only; a
	// signal reaches it by forwarding, so that it can exit in its own way.
	procCtx := context.WithoutCancel(ctx)
	if r.deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.deadline)
		defer cancel()
		dl, _ := ctx.Deadline()
		procCtx, cancel = context.WithDeadline(procCtx, dl)
		defer cancel()
	}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { r.forward(Signals(ctx), stop, done) })
	defer wg.Wait()
	defer close(done)

	_, err := retry.Do(ctx, p, func(context.Context) (struct{}, error) {
		return struct{}{}, r.attempt(procCtx)
	}, retry.WithOnRetry(r.report))
	if err == nil {
		return nil
	}
	var re *retry.Error
	if !errors.As(err, &re) {
		return err
	}
	r.mu.Lock()
	sig, stopped := r.signal, r.stopped
	r.mu.Unlock()
	var se *SignalError
	if sig == nil && errors.As(re.Cause, &se) {
		// NotifyContext cancels the context before it relays the signal,
		// so Do can stop before forward has seen it; no child runs now.
		sig, stopped = se.Signal, true
	}
	var last *attemptError
	if !errors.As(re.Last, &last) {
		if re.Attempts == 0 && sig != nil {
			return Exit(signalStatus(sig), nil) // stopped before the first attempt
		}
		// A start error: Last is an *ExitError (126) inside Permanent,
		// whose message is the ExitError's; retry's own account of the
		// stop would only bury the command's name.
		if re.Last == nil {
			return err // stopped before the first attempt, not by a signal
		}
		return re.Last
	}
	status := last.status
	if stopped {
		status = signalStatus(sig)
	}
	if !r.quiet {
		fmt.Fprintf(r.env.Stderr, "again: attempt %d/%d failed (%s); %s\n", re.Attempts, p.MaxAttempts(), last.why, r.stopReason(re, sig))
	}
	return Exit(status, nil)
}

// stopReason says why no retry follows the failed attempt.
func (r *runner) stopReason(re *retry.Error, sig os.Signal) string {
	switch {
	case sig != nil:
		return "stopping: received " + signalName(sig)
	case errors.Is(re, retry.ErrExhausted):
		return "giving up"
	case errors.Is(re, retry.ErrPermanent):
		return "not retrying: status not in --retry-on-exit"
	case errors.Is(re, retry.ErrDeadline):
		return fmt.Sprintf("giving up: the next attempt would start after the --deadline %v", r.deadline)
	case errors.Is(re.Cause, context.DeadlineExceeded):
		return fmt.Sprintf("stopping: the --deadline %v passed", r.deadline)
	}
	return fmt.Sprintf("stopping: %v", re.Cause)
}

// report prints the line for a retry.
func (r *runner) report(e retry.Event) {
	if !r.quiet {
		fmt.Fprintf(r.env.Stderr, "again: attempt %d/%d failed (%v); retrying in %s\n", e.Attempt, e.MaxAttempts, e.Err, roundDelay(e.Delay))
	}
}

// roundDelay shortens a jittered delay for people: 1.234567891s is 1.23s.
func roundDelay(d time.Duration) time.Duration {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Microsecond)
}

// forward relays each signal to the running child and stops further
// attempts, until done is closed.
func (r *runner) forward(sigs <-chan os.Signal, stop context.CancelCauseFunc, done <-chan struct{}) {
	for {
		select {
		case s := <-sigs:
			r.mu.Lock()
			if r.signal == nil {
				r.signal = s
			}
			if r.proc != nil {
				_ = r.proc.Signal(s)
			} else {
				r.stopped = true
			}
			r.mu.Unlock()
			stop(&SignalError{Signal: s})
		case <-done:
			return
		}
	}
}

// setProc records the running child; a signal that arrived while it was
// starting is passed on at once.
func (r *runner) setProc(p *os.Process) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.proc = p
	if p != nil && r.signal != nil {
		r.stopped = false
		_ = p.Signal(r.signal)
	}
}

// attempt runs the command once, within procCtx (the --deadline). It
// returns nil on exit status 0, an *attemptError for a failure, wrapped with
// retry.Permanent if its status is not to be retried.
func (r *runner) attempt(procCtx context.Context) error {
	ctx := procCtx
	if r.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, r.path, r.args...)
	cmd.Args[0] = r.name
	cmd.Stdin, cmd.Stdout, cmd.Stderr = r.env.Stdin, r.env.Stdout, r.env.Stderr
	// cancelled records that the timeout or the deadline struck while the
	// child ran, rather than just after it exited by itself.
	var cancelled atomic.Bool
	cmd.Cancel = func() error {
		cancelled.Store(true)
		return cmd.Process.Signal(syscall.SIGTERM)
	}
	cmd.WaitDelay = r.grace
	if err := cmd.Start(); err != nil {
		// lookPath found the command before the first attempt; if it has
		// gone since, it is not found, as a shell would say. A missing
		// interpreter (#!) fails the same way, but the file is still there.
		if _, serr := os.Stat(r.path); errors.Is(serr, fs.ErrNotExist) {
			return retry.Permanent(notFound(r.name))
		}
		return retry.Permanent(cannotExecute(r.name, err))
	}
	r.setProc(cmd.Process)
	_ = cmd.Wait() // the ProcessState says all that matters
	r.setProc(nil)
	st := cmd.ProcessState
	ae := &attemptError{status: st.ExitCode(), why: fmt.Sprintf("exit status %d", st.ExitCode())}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		ae.status = signalStatus(ws.Signal())
		ae.why = "killed by " + signalName(ws.Signal())
	}
	switch {
	case cancelled.Load() && procCtx.Err() == nil:
		// Whatever its status, a child stopped by --timeout failed; and it
		// is retried even with --retry-on-exit, as documented. One that
		// exits 0 on SIGTERM gets the status SIGTERM would have given it,
		// so that a run that timed out never exits 0.
		ae.why = fmt.Sprintf("timed out after %v", r.timeout)
		if ae.status == 0 {
			ae.status = signalStatus(syscall.SIGTERM)
		}
		return ae
	case ae.status == 0:
		return nil
	case r.retryOn != nil && !r.retryOn[ae.status]:
		return retry.Permanent(ae)
	}
	return ae
}

func signalStatus(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return ExitFailure
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGILL: "SIGILL", syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT",
	syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL",
	syscall.SIGSEGV: "SIGSEGV", syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM",
	syscall.SIGTERM: "SIGTERM",
}

// signalName returns "SIGTERM" for syscall.SIGTERM, "signal 10" for a
// signal without a name here.
func signalName(s os.Signal) string {
	n, ok := s.(syscall.Signal)
	if !ok {
		return s.String()
	}
	if name, ok := signalNames[n]; ok {
		return name
	}
	return "signal " + strconv.Itoa(int(n))
}
