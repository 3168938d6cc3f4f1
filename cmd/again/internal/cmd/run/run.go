// Package run is `again run`: it runs a command again while it fails.
//
// It waits a backoff delay before each new run, and runs the command in a
// process group of its own, with timeouts, signals passed on and the
// terminal handed over (child.go and its system-specific halves).
package run

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/retry"
	"github.com/spf13/cobra"
)

// Exit statuses of `again run` besides the child's own, as shells use them.
const (
	// ExitTimedOut: --attempt-timeout stopped the last attempt, or the --deadline
	// ended the run (cmdutil.ExitDeadline), as GNU timeout exits; a
	// SIGTERM from outside gives 143 (128+15).
	ExitTimedOut      = cmdutil.ExitDeadline
	ExitCannotExecute = 126 // the command exists but cannot be run
	ExitNotFound      = 127 // the command was not found
)

// killGrace is how long a child has after SIGTERM before it gets SIGKILL:
// one that overstays its --attempt-timeout (or the --deadline), what is left of a
// failed attempt, and a command to which again forwarded a signal
// (cmdutil.Env.KillGrace replaces it in tests).
const killGrace = 2 * time.Second

// NewCmd returns `again run`: its flags and the command become an
// Options, which runRun validates and runs.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run [flags] -- CMD [ARGS...]",
		Short: "Run a command, retrying it with exponential backoff while it fails",
		Long: `run runs a command and runs it again while it fails, on a backoff schedule and
within an optional --deadline; it exits with the last attempt's status. Guide:
docs/cli.md (run).`,
		Example: `  # Wait for a database in a container entrypoint for up to a minute.
  again run --deadline 1m -- pg_isready -h db

  # Up to 10 retries, 30 s in all: whichever comes first.
  again run --retries 10 --deadline 30s -- pg_isready -h db

  # Retry a flaky download, each attempt limited to 20 s.
  again run --attempt-timeout 20s -- curl -fsS -o data.json https://example.com/data.json

  # Retry only exit statuses 1 and 75, 75 (EX_TEMPFAIL: busy) on a slower schedule, quietly.
  again run --retry-on-exit 1,75 --on-overload initial=5s,max=1m --quiet -- ./sync.sh

  # Every container's entrypoint shares one retry budget.
  again run --deadline 1m --budget 'redis://redis:6379/0?key=db-wait' -- pg_isready -h db`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmdutil.Usagef("missing the command to run; usage: again run [flags] -- CMD [ARGS...] (see 'again run --help')")
			}
			return nil
		},
	}
	fs := cmd.Flags()
	// Everything after CMD belongs to it, even without "--".
	fs.SetInterspersed(false)
	pf := cmdutil.AddPolicyFlags(fs)
	timeout := ""
	fs.Var(cmdutil.Text(&timeout, "duration"), "attempt-timeout", "limit on each attempt, after which the command is stopped (default none)")
	retryOn := ""
	fs.Var(cmdutil.Text(&retryOn, "list"), "retry-on-exit", "comma-separated exit statuses to retry (default any non-zero but 130, 131 and 141)")
	overloadExit := ""
	fs.Var(cmdutil.Text(&overloadExit, "list"), "overload-exit", "comma-separated exit statuses that mean the command was refused for load, retried on --on-overload's schedule (default 75, EX_TEMPFAIL)")
	classes := cmdutil.AddClassFlags(fs, "the exit statuses of --overload-exit", "other exit statuses, timeouts")
	quiet := fs.BoolP("quiet", "q", false, "print no line per retry")
	budgetURL := cmdutil.AddBudgetFlag(fs)
	cmdutil.Alias(cmd, "timeout", "attempt-timeout")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return runRun(cmd.Context(), &Options{Env: env, Policy: pf, Timeout: timeout, RetryOnExit: retryOn,
			OverloadExit: overloadExit, Classes: classes, Quiet: *quiet, BudgetURL: *budgetURL, Command: args})
	}
	return cmd
}

// Options is what one `again run` was asked: its flags as given, and the
// command to run.
type Options struct {
	Env          *cmdutil.Env
	Policy       *cmdutil.PolicyFlags // the policy flags, --deadline a time limit
	Timeout      string               // --attempt-timeout, "" for none
	RetryOnExit  string               // --retry-on-exit, "" for the default
	OverloadExit string               // --overload-exit, "" for the default (75)
	Classes      *cmdutil.ClassFlags  // --on-overload, --on-transient; nil for neither
	Quiet        bool                 // --quiet
	BudgetURL    string               // --budget, "" for none
	Command      []string             // CMD and its ARGS; not empty
}

// runRun validates opts and runs the command, retrying it, within ctx (its
// signals reach the command). Its span and metrics are exported if the
// environment asks for them.
func runRun(ctx context.Context, opts *Options) (err error) {
	env, args := opts.Env, opts.Command
	ctx, tel := cmdutil.StartTelemetry(ctx, "run", env)
	defer func() { err = tel.End(ctx, err) }()
	in, err := opts.Policy.ParseTimed()
	if err != nil {
		return err
	}
	r := &runner{env: env, name: args[0], args: args[1:], quiet: opts.Quiet, grace: killGrace, deadline: in.Deadline,
		tty: foregroundTerminal(env.Stdin, env.Stdout, env.Stderr)}
	if env.KillGrace > 0 {
		r.grace = env.KillGrace
	}
	if r.timeout, err = cmdutil.DurationFlag("attempt-timeout", opts.Timeout, true); err != nil {
		return err
	}
	if r.exits.retryOn, err = parseExitList("retry-on-exit", opts.RetryOnExit); err != nil {
		return err
	}
	classes, err := opts.Classes.ParseTimed(in.Policy)
	if err != nil {
		return err
	}
	if r.exits.overload, err = r.exits.overloads(opts.OverloadExit, classes, opts.Classes.OnOverload()); err != nil {
		return err
	}
	r.classes = retry.WithClasses(classes...)
	if r.path, err = lookPath(args[0]); err != nil {
		return err
	}
	budget, closer, err := cmdutil.OpenBudget(env, "run", opts.BudgetURL)
	if err != nil {
		return err
	}
	defer cmdutil.CloseBudget(tel.BeforeClose(ctx, closer))
	r.budget = budget
	return r.run(ctx, in.Policy)
}

// parseExitList parses a list of exit statuses, the value of the flag
// name (--retry-on-exit, --overload-exit): "" (nil) means the flag's
// default.
func parseExitList(name, s string) (map[int]bool, error) {
	if s == "" {
		return nil, nil
	}
	set := map[int]bool{}
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 255 {
			return nil, cmdutil.BadValue("--"+name, s, "a comma-separated list of exit statuses from 1 to 255")
		}
		set[n] = true
	}
	return set, nil
}

// exTempFail is the exit status of --overload-exit's default: sysexits.h's
// EX_TEMPFAIL, "a temporary failure; try again later", which mail
// transfer agents and job runners return when a server defers them.
const exTempFail = 75

// exitRules is how run judges an attempt's exit status: whether it is
// retried (--retry-on-exit) and whether it is an overload (--overload-exit).
type exitRules struct {
	retryOn  map[int]bool // nil: every non-zero status but those notRetried names
	overload map[int]bool // the statuses retried on --on-overload's schedule
}

// retried reports whether a failed attempt's status is retried.
func (x exitRules) retried(status int) bool {
	if x.retryOn != nil {
		return x.retryOn[status]
	}
	return notRetried(status) == ""
}

// overloads parses --overload-exit (given, "" for the default, 75) for the
// classes of --on-overload and --on-transient (onOverload: the first was
// given). It refuses what would make the flags say nothing: statuses named
// with neither class flag, a status named that is not retried (its
// schedule would never be used), and --on-overload when none of the
// overload statuses is retried.
func (x exitRules) overloads(given string, classes []retry.Class, onOverload bool) (map[int]bool, error) {
	set, err := parseExitList("overload-exit", given)
	if err != nil {
		return nil, err
	}
	if given != "" && len(classes) == 0 {
		return nil, cmdutil.Usagef("--overload-exit says which exit statuses are retried on --on-overload's schedule and which on --on-transient's: give one of them with it")
	}
	if set == nil {
		set = map[int]bool{exTempFail: true}
	}
	statuses := slices.Sorted(maps.Keys(set))
	if given != "" {
		for _, s := range statuses {
			if !x.retried(s) {
				return nil, cmdutil.Usagef("--overload-exit %d is not retried (%s): list it in --retry-on-exit too, or leave it out of --overload-exit", s, x.whyNot(s))
			}
		}
	}
	if onOverload && !slices.ContainsFunc(statuses, x.retried) {
		return nil, cmdutil.Usagef("--on-overload would never apply: the overload exit status 75 (EX_TEMPFAIL, --overload-exit's default) is not retried (%s); list it in --retry-on-exit, or name the overload statuses with --overload-exit", x.whyNot(exTempFail))
	}
	return set, nil
}

// whyNot says why status is not retried.
func (x exitRules) whyNot(status int) string {
	if x.retryOn != nil {
		return "not in --retry-on-exit"
	}
	return notRetried(status)
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
	return cmdutil.Exit(ExitNotFound, fmt.Errorf("%s: command not found", name))
}

// cannotExecute is the error for a command that exists but cannot run:
// status 126.
func cannotExecute(name string, err error) error {
	return cmdutil.Exit(ExitCannotExecute, fmt.Errorf("%s: cannot cmdutil.Execute: %w", name, unwrapPathError(err)))
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
	env      *cmdutil.Env
	name     string // the command as given, the child's argv[0]
	path     string // the command found in $PATH
	args     []string
	timeout  time.Duration // per attempt; 0 means none
	deadline time.Duration // for the whole run; 0 means none
	grace    time.Duration // between SIGTERM (or a forwarded signal) and SIGKILL
	exits    exitRules     // which statuses are retried, which are overloads
	classes  retry.Option  // --on-overload's and --on-transient's, or none
	quiet    bool
	tty      *os.File     // the terminal handed to each attempt, if any
	budget   retry.Budget // --budget's, or nil

	mu        sync.Mutex
	proc      *child      // the running child, nil if none
	signal    os.Signal   // the first signal received, if any
	signals   int         // how many signals were received
	forwarded bool        // whether the first signal reached a running child
	killer    *time.Timer // the SIGKILL that follows a forwarded signal
}

// attemptError is a failed attempt: the status again exits with if it is
// the last, and why it failed ("exit status 7", "timed out after 2s").
type attemptError struct {
	status     int
	why        string
	atDeadline bool // the --deadline stopped it
	overload   bool // its status is in --overload-exit
}

func (e *attemptError) Error() string { return e.why }

// Overload reports whether the command exited with an --overload-exit
// status: retry.IsOverload, which --on-overload's class matches, asks it.
func (e *attemptError) Overload() bool { return e.overload }

// notRetried says why status is not retried unless --retry-on-exit names
// it, or "" if it is retried: a command killed by SIGINT or SIGQUIT (or
// exiting 130 after its clean-up on Ctrl-C) was stopped by someone who
// wants it stopped, and one killed by SIGPIPE writes to a reader that has
// gone (again run -- yes | head -1): running it again would meet the same
// closed pipe.
func notRetried(status int) string {
	switch status {
	case 128 + int(syscall.SIGINT):
		return "interrupted"
	case 128 + int(syscall.SIGQUIT):
		return "quit"
	case 128 + int(syscall.SIGPIPE):
		return "nothing reads its output any more"
	}
	return ""
}

func (r *runner) run(ctx context.Context, p backoff.Policy) error {
	// The child's life is bounded by the deadline and the timeout only; a
	// signal reaches it by forwarding, so that it can exit in its own way
	// within the grace (see pass).
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
	wg.Go(func() { r.forward(cmdutil.Signals(ctx), stop, done) })
	defer wg.Wait()
	defer close(done)

	observe, budget, traced := runTelemetry(ctx, r.name, r.budget)
	attempts := 0
	_, err := retry.Do(ctx, p, func(context.Context) (struct{}, error) {
		attempts++
		return struct{}{}, traced(ctx, func() error { return r.attempt(procCtx) })
	}, retry.WithOnRetry(r.report), retry.WithBudget(budget), observe, retry.WithDeadlineReserve(r.timeout), r.classes)
	if sig, forwarded := r.received(ctx); sig != nil {
		return r.stoppedBy(sig, forwarded, err, attempts, p.MaxAttempts())
	}
	if err == nil {
		return nil
	}
	var re *retry.Error
	if !errors.As(err, &re) {
		return err
	}
	var last *attemptError
	if !errors.As(re.Last, &last) {
		// A start error: Last is an *cmdutil.ExitError (126) inside Permanent,
		// whose message is the cmdutil.ExitError's; retry's own account of the
		// stop would only bury the command's name.
		if re.Last == nil {
			return err // stopped before the first attempt, not by a signal
		}
		return re.Last
	}
	if r.deadline > 0 && (last.atDeadline || errors.Is(re, retry.ErrDeadline) || errors.Is(re.Cause, context.DeadlineExceeded)) {
		// Whichever timer noticed the --deadline first (the attempt's, or
		// the wait's), the end is the same: status 124 and one line, as
		// in every command.
		why := last.why
		if last.atDeadline {
			why = "the command was still running"
		}
		return cmdutil.DeadlinePassed(r.deadline, re.Attempts, why)
	}
	if !r.quiet {
		cmdutil.AttemptFailed(r.env.Stderr, "again run", re.Attempts, p.MaxAttempts(), last.why, r.stopReason(re))
	}
	return cmdutil.Exit(last.status, nil)
}

// received returns the first signal again received during the run, if
// any, and whether it reached a running command. cmdutil.NotifyContext cancels
// the context before it relays the signal, so Do can stop before forward
// has seen it: the signal is then ctx's cause, and reached no command.
func (r *runner) received(ctx context.Context) (sig os.Signal, forwarded bool) {
	r.mu.Lock()
	sig, forwarded = r.signal, r.forwarded
	r.mu.Unlock()
	if sig == nil {
		sig = cmdutil.SignalCause(ctx)
	}
	return sig, forwarded
}

// stoppedBy is the end of a run that signal sig stopped: status 128+N
// whatever the command's status, as a supervisor that sent SIGTERM
// expects (143), and one line in fetch's words, "stopped: received
// SIGTERM". When sig reached a running command, the line also says how
// that attempt (the attempts-th, err the end of the retries) ended, which
// the status no longer does: "(attempt 1/4: killed by SIGKILL)".
func (r *runner) stoppedBy(sig os.Signal, forwarded bool, err error, attempts, maxAttempts int) error {
	var re *retry.Error
	var last *attemptError
	why := ""
	switch {
	case !forwarded:
	case err == nil:
		why = "exit status 0"
	case errors.As(err, &re) && errors.As(re.Last, &last):
		why = last.why
	}
	if why != "" {
		why = fmt.Sprintf(" (attempt %s: %s)", cmdutil.AttemptOf(attempts, maxAttempts), why)
	}
	return cmdutil.Stopped(sig, why)
}

// stopReason says why no retry follows the failed attempt last, when the
// --deadline did not decide it (see run).
func (r *runner) stopReason(re *retry.Error) string {
	var last *attemptError
	errors.As(re.Last, &last)
	switch {
	case errors.Is(re, retry.ErrExhausted):
		return "giving up"
	case errors.Is(re, retry.ErrBudget):
		return cmdutil.BudgetSpent
	case errors.Is(re, retry.ErrPermanent) && r.exits.retryOn != nil:
		return "not retrying: status not in --retry-on-exit"
	case errors.Is(re, retry.ErrPermanent):
		return fmt.Sprintf("not retrying: %s (list %d in --retry-on-exit to retry it)", notRetried(last.status), last.status)
	}
	return fmt.Sprintf("stopping: %v", re.Cause)
}

// report prints the line for a retry.
func (r *runner) report(e retry.Event) {
	if !r.quiet {
		cmdutil.AttemptFailed(r.env.Stderr, "again run", e.Attempt, e.MaxAttempts, e.Err.Error(), cmdutil.RetryingIn(e.Delay))
	}
}

// forward stops further attempts at each signal received, and passes it
// on to the running child's process group (see pass), until done is
// closed.
func (r *runner) forward(sigs <-chan os.Signal, stop context.CancelCauseFunc, done <-chan struct{}) {
	for {
		select {
		case s := <-sigs:
			r.mu.Lock()
			if r.signal == nil {
				r.signal = s
			}
			r.signals++
			if r.proc != nil {
				r.pass(r.proc)
			}
			r.mu.Unlock()
			stop(&cmdutil.SignalError{Signal: s})
		case <-done:
			return
		}
	}
}

// pass hands the signals received so far to c, the running child, with
// r.mu held, as timeout --kill-after and docker stop do: the first is
// forwarded to its group, which gets SIGKILL if the command has not
// exited after the grace; a second one sends SIGKILL at once. Every
// signal is one that asks a program to stop (see cmdutil.NotifyContext).
func (r *runner) pass(c *child) {
	if r.signals > 1 {
		if r.killer != nil {
			r.killer.Stop() // due now
		}
		c.kill()
		return
	}
	r.forwarded = true
	c.signal(r.signal)
	r.killer = time.AfterFunc(r.grace, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.proc == c { // not once the command has exited: see setProc
			c.kill()
		}
	})
}

// setProc records the running child, c (nil for none); signals that
// arrived while it was starting are passed on at once. Once the command
// has exited (c nil), its SIGKILL is no longer due: attempt kills what
// is left of a signalled group itself. It reports whether a signal was
// received.
func (r *runner) setProc(c *child) (signalled bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.proc = c
	if c != nil && r.signals > 0 {
		r.pass(c)
	}
	if c == nil && r.killer != nil {
		r.killer.Stop()
		r.killer = nil
	}
	return r.signal != nil
}

// attempt runs the command once, within procCtx (the --deadline). It
// returns nil on exit status 0, an *attemptError for a failure, wrapped with
// retry.Permanent if its status is not to be retried (see judgeExit).
//
// The command runs in a process group of its own (see child). An attempt
// stopped by the --attempt-timeout, the --deadline or a signal leaves nothing
// behind: the group gets SIGTERM (or the signal), then SIGKILL when the
// command has exited or the grace has passed, whichever comes first. An
// attempt that fails by itself leaves nothing either: its group gets
// SIGTERM as it ends, then SIGKILL once empty or after the grace. What a
// successful attempt started in the background is left running.
func (r *runner) attempt(procCtx context.Context) error {
	// One timer per attempt, at the earlier of its --attempt-timeout and the
	// --deadline, decided now: what stopped the attempt never depends on
	// which of two timers fired first.
	ctx, atDeadline := procCtx, true
	if r.timeout > 0 {
		end := time.Now().Add(r.timeout)
		dl, ok := procCtx.Deadline()
		atDeadline = ok && !end.Before(dl)
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, end)
		defer cancel()
	}
	// os/exec only starts the command: its Wait would neither report a
	// command stopped by Ctrl-Z nor return before every process that
	// inherited an output pipe has closed it. child.wait does the first,
	// childOutput the second, and the context's end is watched here.
	stdin, err := newInput(r.env.Stdin)
	if err != nil {
		return retry.Permanent(err)
	}
	defer stdin.finish(r.grace)
	stdout, err := newOutput(r.env.Stdout)
	if err != nil {
		return retry.Permanent(err)
	}
	defer stdout.finish(r.grace)
	stderr := stdout
	if !sameWriter(r.env.Stderr, r.env.Stdout) {
		if stderr, err = newOutput(r.env.Stderr); err != nil {
			return retry.Permanent(err)
		}
		defer stderr.finish(r.grace)
	}
	c, err := startChild(r.path, r.name, r.args, stdin.file, stdout.file, stderr.file, r.tty)
	if err != nil {
		return retry.Permanent(err)
	}
	stdin.started()
	r.setProc(c)
	// At the --attempt-timeout or the --deadline the group gets SIGTERM, then
	// SIGKILL after the grace. cancelled records that this happened while
	// the command ran, rather than just after it exited by itself.
	var cancelled, exited atomic.Bool
	var kill *time.Timer
	watched := make(chan struct{})
	stopWatch := context.AfterFunc(ctx, func() {
		defer close(watched)
		if exited.Load() {
			return // too late: the command ended by itself
		}
		cancelled.Store(true)
		kill = time.AfterFunc(r.grace, c.kill)
		c.signal(syscall.SIGTERM)
	})
	exit, werr := c.wait()
	exited.Store(true)
	if !stopWatch() {
		<-watched // the context ended: its function has run
		if kill != nil {
			kill.Stop()
		}
	}
	signalled := r.setProc(nil)
	verdict := judgeExit(exit, cancelled.Load(), atDeadline, r.timeout, r.exits)
	switch {
	case cancelled.Load() || signalled || werr != nil:
		c.kill()
	case verdict != nil:
		c.stop(r.grace)
	}
	stdout.finish(r.grace) // the group is gone (or left running): its output is complete
	stderr.finish(r.grace)
	c.release()
	if werr != nil {
		return retry.Permanent(fmt.Errorf("waiting for %s: %w", r.name, werr))
	}
	return verdict
}
