package run

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/retry"
)

// child is the command of one attempt of `again run`, from its start to
// the end of everything it started: it runs in a process group of its
// own, whose id is its pid, so that a timeout or a forwarded signal
// reaches everything the command starts (a script's sleep, a pipeline), as
// GNU timeout does. With tty, the terminal again has in the foreground,
// the group takes the terminal for the attempt, and again takes it back
// after. On Linux and FreeBSD the command is also killed (SIGKILL) if
// again itself dies, even of SIGKILL (see setProcAttr for what that does
// not cover).
//
// The system-specific half (child_unix.go, child_other.go) provides
// setProcAttr, signalGroup, killGroup, groupAlive, waitCommand,
// reclaimTerminal and foregroundTerminal. Without process groups (Windows)
// a timeout or a signal stops the command but not what it started.
//
// A child is used by one goroutine, but for signal and kill, which the
// goroutine forwarding signals (and the SIGKILL that follows) also call.
type child struct {
	cmd *exec.Cmd
	pid int
	tty *os.File
}

// startChild starts path (argv[0] name) with args and the given streams
// (nil: the null device) in a new process group.
func startChild(path, name string, args []string, stdin, stdout, stderr *os.File, tty *os.File) (*child, error) {
	cmd := exec.Command(path, args...)
	cmd.Args[0] = name
	// Only non-nil files: a nil *os.File in the interface would give the
	// command a closed descriptor instead of os/exec's null device.
	if stdin != nil {
		cmd.Stdin = stdin
	}
	if stdout != nil {
		cmd.Stdout = stdout
	}
	if stderr != nil {
		cmd.Stderr = stderr
	}
	setProcAttr(cmd, tty)
	if err := cmd.Start(); err != nil {
		// lookPath found the command before the first attempt; if it has
		// gone since, it is not found, as a shell would say. A missing
		// interpreter (#!) fails the same way, but the file is still there.
		if _, serr := os.Stat(path); errors.Is(serr, fs.ErrNotExist) {
			return nil, notFound(name)
		}
		return nil, cannotExecute(name, err)
	}
	return &child{cmd: cmd, pid: cmd.Process.Pid, tty: tty}, nil
}

// wait waits for the command (not its group) to exit, following it
// through stops from the terminal (see waitCommand), and says how it ended.
func (c *child) wait() (exitInfo, error) {
	ws, err := waitCommand(c.cmd, c.tty)
	if err != nil {
		return exitInfo{}, err
	}
	e := exitInfo{status: ws.ExitStatus()}
	if ws.Signaled() {
		e.signal = ws.Signal()
	}
	return e, nil
}

// signal sends sig to the command's group. A group already gone is not an
// error.
func (c *child) signal(sig os.Signal) { _ = signalGroup(c.pid, sig) }

// kill kills whatever is left of the group once the command has exited:
// processes that ignored SIGTERM, or that the command left running in the
// background. The group's id cannot be reused while any of them lives.
func (c *child) kill() { killGroup(c.pid) }

// stop ends what is left of the group of a command that failed by itself:
// SIGTERM, then SIGKILL if anything is left after grace, and it returns
// once the group is empty (or after another grace, for processes that
// take a while to die), so that a failed attempt's background processes
// do not run beside the next attempt, nor after again. A command that
// left nothing costs no wait. The group is watched by polling, since no
// signal tells when processes that are not again's children die.
func (c *child) stop(grace time.Duration) {
	if !groupAlive(c.pid) {
		return
	}
	c.signal(syscall.SIGTERM)
	if !c.awaitEmpty(grace) {
		c.kill()
		c.awaitEmpty(grace)
	}
}

// awaitEmpty waits up to grace for the group to be empty, and reports
// whether it is.
func (c *child) awaitEmpty(grace time.Duration) bool {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	end := time.NewTimer(grace)
	defer end.Stop()
	for groupAlive(c.pid) {
		select {
		case <-tick.C:
		case <-end.C:
			return false
		}
	}
	return true
}

// release takes the terminal back, if the group had it, and frees the
// process handle. Nothing of the child may be used after it.
func (c *child) release() {
	reclaimTerminal(c.tty, c.pid)
	c.cmd.Process.Release()
}

// exitInfo is how an attempt's command ended.
type exitInfo struct {
	status int            // its exit status, if it exited by itself
	signal syscall.Signal // the signal that killed it, 0 if none
}

// judgeExit is the verdict on an attempt whose command ended as e: nil for
// a success, an *attemptError otherwise, wrapped with retry.Permanent when
// its status is not to be retried. timedOut says that --attempt-timeout (timeout)
// or the --deadline (atDeadline) stopped it while it ran; x says which
// statuses are retried (--retry-on-exit) and which of those are overloads
// (--overload-exit, the attemptError's Overload).
//
// Whatever its status, a command stopped by --attempt-timeout or --deadline
// failed, with status 124 as GNU timeout has it; and it is retried even
// with --retry-on-exit, as documented (--deadline leaves no time for a
// retry anyway). A command killed by signal N has status 128+N.
func judgeExit(e exitInfo, timedOut, atDeadline bool, timeout time.Duration, x exitRules) error {
	ae := &attemptError{status: e.status, why: "exit status " + strconv.Itoa(e.status)}
	if e.signal != 0 {
		ae.status = cmdutil.SignalStatus(e.signal)
		ae.why = "killed by " + cmdutil.SignalName(e.signal)
	}
	switch {
	case timedOut:
		ae.status = ExitTimedOut
		ae.atDeadline = atDeadline
		ae.why = cmdutil.TimedOutAfter(timeout)
		if atDeadline {
			ae.why = "timed out at the --deadline"
		}
		return ae
	case ae.status == 0:
		return nil
	case !x.retried(ae.status):
		return retry.Permanent(ae)
	}
	ae.overload = x.overload[ae.status]
	return ae
}

// childInput is what an attempt reads: the cmdutil.Env's reader itself when it is
// a file (or nothing), else a pipe that it is copied to, as os/exec would.
type childInput struct {
	file   *os.File      // the command's stdin; nil for /dev/null
	write  *os.File      // again's end of the pipe, nil for a file
	copied chan struct{} // closed when the copy ends
}

func newInput(r io.Reader) (*childInput, error) {
	if r == nil {
		return &childInput{}, nil
	}
	if f, ok := r.(*os.File); ok && f != nil {
		return &childInput{file: f}, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	in := &childInput{file: pr, write: pw, copied: make(chan struct{})}
	go func() {
		defer close(in.copied)
		_, _ = io.Copy(pw, r) // ends at EOF, or when finish closes pw
		pw.Close()
	}()
	return in, nil
}

// started closes again's copy of the command's end of the pipe.
func (in *childInput) started() {
	if in.write != nil {
		in.file.Close()
	}
}

// finish stops the copy once the command has exited: what it did not read
// is not given to the next attempt's command either (stdin is consumed as
// it is read, whoever reads it). A copy still blocked reading again's own
// stdin after grace is left to end with it.
func (in *childInput) finish(grace time.Duration) {
	if in.write == nil {
		return
	}
	in.write.Close()
	in.file.Close() // in case Start failed
	in.write = nil
	select {
	case <-in.copied:
	case <-time.After(grace):
	}
}

// childOutput is what an attempt writes to: the cmdutil.Env's writer itself when it
// is a file, else a pipe copied to it. Either way the command's output is a
// file, so waiting for the command ends when it exits, not when the last
// process that inherited the output closes it: again then kills what is
// left of a stopped attempt's group, and only then waits for the output to
// end.
type childOutput struct {
	file   *os.File
	copied chan struct{} // closed when the copy ends; nil for a file
	read   *os.File
}

func newOutput(w io.Writer) (*childOutput, error) {
	if f, ok := w.(*os.File); ok && f != nil {
		return &childOutput{file: f}, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	o := &childOutput{file: pw, read: pr, copied: make(chan struct{})}
	go func() {
		defer close(o.copied)
		_, _ = io.Copy(w, pr)
	}()
	return o, nil
}

// finish closes again's end of the pipe and waits for the copy to end: at
// once if the command's processes are gone, at most grace if a process
// outside its group (a daemon) still holds the pipe, whose later output is
// then dropped. Calling it again does nothing.
func (o *childOutput) finish(grace time.Duration) {
	if o.copied == nil {
		return
	}
	o.file.Close()
	select {
	case <-o.copied:
	case <-time.After(grace):
	}
	o.read.Close()
	<-o.copied
	o.copied = nil
}

// sameWriter reports whether a and b are the same writer, so that the
// command's stdout and stderr share one pipe and their copies never write
// to it at the same time, as os/exec does. Writers of types that cannot be
// compared are different.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}
