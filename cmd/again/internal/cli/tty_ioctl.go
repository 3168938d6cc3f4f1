//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package cli

import (
	"os"
	"os/signal"
	"syscall"
	"time"
	"unsafe"
)

// foregroundTerminal returns the first of again's streams (stdin, stdout,
// stderr) that is a terminal whose foreground process group is again's
// own: the terminal that `again run` hands to the command for each
// attempt, so that it can read it (a prompt for a password on /dev/tty
// included) while its output goes elsewhere. It returns nil otherwise (no
// terminal, or again running in the background), and then the command's
// group stays in the background, where the terminal's Ctrl-C never
// reaches it directly.
func foregroundTerminal(streams ...any) *os.File {
	for _, s := range streams {
		f, ok := s.(*os.File)
		if !ok || f == nil {
			continue
		}
		if pgrp, err := tcgetpgrp(f.Fd()); err == nil && pgrp == syscall.Getpgrp() {
			return f
		}
	}
	return nil
}

func tcgetpgrp(fd uintptr) (int, error) {
	var pgrp int32
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(syscall.TIOCGPGRP), uintptr(unsafe.Pointer(&pgrp)))
	if errno != 0 {
		return 0, errno
	}
	return int(pgrp), nil
}

// reclaimTerminal puts again's process group back in the foreground of tty
// once the command's group (pgid) has exited or stopped, unless another
// live group has the terminal: after a bg, the shell has it, and keeps it.
// (A terminal whose foreground group has gone reports that group's id on
// Linux, and no group at all on BSD and macOS.)
func reclaimTerminal(tty *os.File, pgid int) {
	if tty == nil {
		return
	}
	fg, err := tcgetpgrp(tty.Fd())
	if err != nil || fg == syscall.Getpgrp() {
		return
	}
	if fg != pgid && fg > 0 && syscall.Kill(-fg, 0) != syscall.ESRCH {
		return // a live group, perhaps not ours to signal (EPERM)
	}
	tcsetpgrp(tty, syscall.Getpgrp())
}

// tcsetpgrp makes pgrp the foreground process group of tty. again may be
// in the background then, and the call would stop it with SIGTTOU unless
// that signal is ignored; it is ignored only for the call, since a command
// started later would inherit the ignoring.
func tcsetpgrp(tty *os.File, pgrp int) {
	if !signal.Ignored(syscall.SIGTTOU) {
		signal.Ignore(syscall.SIGTTOU)
		defer signal.Reset(syscall.SIGTTOU)
	}
	id := int32(pgrp)
	_, _, _ = syscall.Syscall(syscall.SYS_IOCTL, tty.Fd(), uintptr(syscall.TIOCSPGRP), uintptr(unsafe.Pointer(&id)))
}

// stopDiscarded is how long suspend waits for again's own stop before it
// concludes that the system discarded it: far longer than a signal takes.
const stopDiscarded = 500 * time.Millisecond

// suspend handles a command (group pgid) stopped by sig while it had the
// terminal, as a shell's job control would see it: again takes the
// terminal back and stops its own job with the same signal, so that the
// shell regains the terminal. Once continued (fg or bg), it gives the
// terminal back to the command if again is in the foreground again, and
// continues the command's group. If again's job cannot be stopped (an
// orphaned process group discards SIGTSTP), the command continues at once
// rather than staying stopped with no one to continue it.
func suspend(pgid int, tty *os.File, sig syscall.Signal) {
	reclaimTerminal(tty, pgid)
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, syscall.SIGCONT)
	defer signal.Stop(cont)
	_ = syscall.Kill(0, sig)
	// The stop reaches again through one of its threads, maybe not this
	// one, which may run on for a moment: wait until again has been
	// stopped and continued (SIGCONT), or a while if the stop was discarded.
	// A stopped process's timers do not fire before it is continued.
	select {
	case <-cont:
	case <-time.After(stopDiscarded):
	}
	if fg, err := tcgetpgrp(tty.Fd()); err == nil && fg == syscall.Getpgrp() {
		tcsetpgrp(tty, pgid)
	}
	_ = syscall.Kill(-pgid, syscall.SIGCONT)
}
