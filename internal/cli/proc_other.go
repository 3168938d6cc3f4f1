//go:build !unix

package cli

import (
	"os"
	"os/exec"
)

// startInGroup does nothing here: without process groups, a timeout or a
// signal stops only the command itself, not the processes it started (a
// documented limitation of `again run` on this system).
func startInGroup(*exec.Cmd, *os.File) {}

// signalGroup sends sig to p; a signal the system cannot send (all but
// os.Kill on Windows) kills p.
func signalGroup(p *os.Process, sig os.Signal) error {
	if err := p.Signal(sig); err != nil {
		return p.Kill()
	}
	return nil
}

// killGroup does nothing: see startInGroup.
func killGroup(*os.Process) {}
