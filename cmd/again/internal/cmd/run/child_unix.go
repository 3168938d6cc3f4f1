//go:build unix

package run

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// setProcAttr makes cmd start in a process group of its own. With tty,
// the new group takes the terminal: a child that reads it keeps working,
// and Ctrl-C reaches the command's processes once, from the terminal, and
// not again.
//
// Where the system has it (Linux's PR_SET_PDEATHSIG, FreeBSD's
// PROC_PDEATHSIG_CTL, both SysProcAttr.Pdeathsig), the command is killed
// when again dies, SIGKILL included, so that `timeout -s KILL 1 again run
// -- ...` leaves no attempt running. It covers the command itself only:
// what the command started lives on in its group, as it would after the
// command died of SIGKILL, and the command gets it when the thread that
// started it ends, which in Go is when again ends. The field exists only
// on those systems, hence reflection rather than a file per system.
func setProcAttr(cmd *exec.Cmd, tty *os.File) {
	attr := &syscall.SysProcAttr{Setpgid: true}
	if f := reflect.ValueOf(attr).Elem().FieldByName("Pdeathsig"); f.IsValid() && f.Type() == reflect.TypeFor[syscall.Signal]() {
		f.Set(reflect.ValueOf(syscall.SIGKILL))
	}
	if tty != nil {
		attr.Foreground = true
		attr.Ctty = int(tty.Fd())
	}
	cmd.SysProcAttr = attr
}

// signalGroup sends sig to every process of the group of the command pid.
// A group already gone is not an error.
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

// killGroup sends SIGKILL to the group of the command pid.
func killGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}

// groupAlive reports whether a process of the group of the command pid
// still runs. A zombie does not count: it has died and only waits for its
// parent to collect its status, which an init that reaps slowly (as some
// containers' first process) may take long to do. Where /proc lists the
// processes (Linux) it tells zombies apart; elsewhere a zombie counts
// until reaped.
func groupAlive(pid int) bool {
	if errors.Is(syscall.Kill(-pid, 0), syscall.ESRCH) {
		return false
	}
	if runtime.GOOS != "linux" {
		return true
	}
	live, ok := liveInGroup(pid)
	return !ok || len(live) > 0
}

// liveInGroup returns the processes of group pgid that are not zombies,
// "pid (command)", read from Linux's /proc; ok is false if it cannot be
// read.
func liveInGroup(pgid int) (live []string, ok bool) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		return nil, false
	}
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // exited since the glob
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
		s := string(b)
		end := strings.LastIndexByte(s, ')')
		if end < 0 {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if len(fields) < 3 || fields[0] == "Z" || fields[0] == "X" {
			continue
		}
		if g, _ := strconv.Atoi(fields[2]); g == pgid {
			live = append(live, s[:end+1])
		}
	}
	return live, true
}

// waitCommand waits for cmd to exit, and returns its status. With tty, a
// command stopped from the terminal (Ctrl-Z) stops again's own job as
// well, so that the shell gets the terminal back; when that job is
// continued, the command is continued too, with the terminal if again has
// it (fg), without it otherwise (bg).
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
		if pgrp, err := tcgetpgrp(f); err == nil && pgrp == ownGroup() {
			return f
		}
	}
	return nil
}

func tcgetpgrp(tty *os.File) (int, error) {
	v, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCGPGRP)
	// The terminal writes a pid_t, 32 bits, at the start of the int: its
	// low half on a little-endian machine, its high half on a big-endian
	// 64-bit one.
	if v != int(int32(v)) {
		v = int(uint64(v) >> 32)
	}
	return v, err
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
	_ = unix.IoctlSetPointerInt(int(tty.Fd()), unix.TIOCSPGRP, pgrp)
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
	fg, err := tcgetpgrp(tty)
	if err != nil || fg == ownGroup() {
		return
	}
	if fg != pgid && fg > 0 && syscall.Kill(-fg, 0) != syscall.ESRCH {
		return // a live group, perhaps not ours to signal (EPERM)
	}
	tcsetpgrp(tty, ownGroup())
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
	if fg, err := tcgetpgrp(tty); err == nil && fg == ownGroup() {
		tcsetpgrp(tty, pgid)
	}
	_ = syscall.Kill(-pgid, syscall.SIGCONT)
}

// ownGroup returns again's process group id.
func ownGroup() int {
	pgid, _ := unix.Getpgid(0) // cannot fail for the calling process
	return pgid
}
