//go:build !unix

package run

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcAttr does nothing here: without process groups, a timeout or a
// signal stops only the command itself, not the processes it started, and
// nothing kills the command if again dies (documented limitations of
// `again run` on this system).
func setProcAttr(*exec.Cmd, *os.File) {}

// signalGroup sends sig to the command pid; a signal the system cannot
// send (all but os.Kill on Windows) kills it.
func signalGroup(pid int, sig os.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	defer p.Release()
	if err := p.Signal(sig); err != nil {
		return p.Kill()
	}
	return nil
}

// killGroup does nothing: see setProcAttr.
func killGroup(int) {}

// groupAlive reports false: without groups there is nothing to stop
// once the command has exited.
func groupAlive(int) bool { return false }

// waitCommand waits for cmd to exit and returns its status.
func waitCommand(cmd *exec.Cmd, _ *os.File) (syscall.WaitStatus, error) {
	err := cmd.Wait()
	if cmd.ProcessState == nil {
		return syscall.WaitStatus{}, err
	}
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ws, nil
}

// foregroundTerminal returns nil: on this system `again run` does not hand
// the terminal to the command.
func foregroundTerminal(...any) *os.File { return nil }

func reclaimTerminal(*os.File, int) {}
