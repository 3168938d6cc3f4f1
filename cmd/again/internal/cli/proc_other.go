//go:build !unix

package cli

import (
	"os"
	"os/exec"
	"syscall"
)

// startInGroup does nothing here: without process groups, a timeout or a
// signal stops only the command itself, not the processes it started (a
// documented limitation of `again run` on this system).
func startInGroup(*exec.Cmd, *os.File) {}

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

// killGroup does nothing: see startInGroup.
func killGroup(int) {}

// waitCommand waits for cmd to exit and returns its status.
func waitCommand(cmd *exec.Cmd, _ *os.File) (syscall.WaitStatus, error) {
	err := cmd.Wait()
	if cmd.ProcessState == nil {
		return syscall.WaitStatus{}, err
	}
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ws, nil
}
