//go:build !unix

package fleettest

import "syscall"

// canStop reports whether Stop and Continue can pause a process: they
// need SIGSTOP and SIGCONT, which this system does not have, so that they
// fail the test there. The rest of the package builds, so that a module
// that imports it still vets and builds everywhere.
const canStop = false

// sigStop and sigCont are never sent where canStop is false.
var sigStop, sigCont syscall.Signal
