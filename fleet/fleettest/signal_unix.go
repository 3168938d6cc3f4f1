//go:build unix

package fleettest

import "syscall"

// canStop reports whether Stop and Continue can pause a process: they
// need SIGSTOP and SIGCONT, which only Unix systems have.
const canStop = true

const sigStop, sigCont = syscall.SIGSTOP, syscall.SIGCONT
