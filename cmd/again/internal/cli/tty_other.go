//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package cli

import (
	"os"
	"syscall"
)

// foregroundTerminal returns nil: on this system `again run` does not hand
// the terminal to the command (see tty_ioctl.go).
func foregroundTerminal(...any) *os.File { return nil }

func reclaimTerminal(*os.File, int) {}

// suspend is never called: without a terminal, waitCommand does not watch
// for stops.
func suspend(int, *os.File, syscall.Signal) {}
