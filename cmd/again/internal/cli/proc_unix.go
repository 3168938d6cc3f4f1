//go:build unix

package cli

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// startInGroup makes cmd start in a process group of its own, whose id is
// the child's pid, so that a timeout or a forwarded signal reaches
// everything the command starts (a script's sleep, a pipeline), as GNU
// timeout does. With tty, the terminal again has in the foreground, the new
// group takes the terminal: a child that reads it keeps working, and Ctrl-C
// reaches the command's processes once, from the terminal, and not again.
func startInGroup(cmd *exec.Cmd, tty *os.File) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if tty != nil {
		cmd.SysProcAttr.Foreground = true
		cmd.SysProcAttr.Ctty = int(tty.Fd())
	}
}

// signalGroup sends sig to every process of the group that startInGroup
// made for the command pid. A group already gone is not an error.
func signalGroup(pid int, sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return errors.New("cannot send " + sig.String())
	}
	err := syscall.Kill(-pid, s)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// killGroup kills whatever is left of the group of the command pid once
// the command itself has exited: processes that ignored SIGTERM or that the
// command left running in the background. The group's id cannot be reused
// while any of them lives.
func killGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}

// waitCommand waits for cmd, started by startInGroup, to exit, and returns
// its status. With tty, a command stopped from the terminal (Ctrl-Z) stops
// again's own job as well, so that the shell gets the terminal back; when
// that job is continued, the command is continued too, with the terminal
// if again has it (fg), without it otherwise (bg).
func waitCommand(cmd *exec.Cmd, tty *os.File) (syscall.WaitStatus, error) {
	options := 0
	if tty != nil {
		options = syscall.WUNTRACED
	}
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(cmd.Process.Pid, &ws, options, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return ws, err
		case ws.Stopped():
			suspend(cmd.Process.Pid, tty, ws.StopSignal())
			continue
		}
		return ws, nil
	}
}
