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
// made for p. A group already gone is not an error.
func signalGroup(p *os.Process, sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return p.Signal(sig)
	}
	err := syscall.Kill(-p.Pid, s)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// killGroup kills whatever is left of p's group once p itself has exited:
// processes that ignored SIGTERM or that the command left running in the
// background. The group's id cannot be reused while any of them lives.
func killGroup(p *os.Process) {
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
}
