//go:build linux

package run

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
)

// openPTY returns the two ends of a new pseudo-terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err) // a kernel without devpts; CI has one
	}
	var unlock int32
	var n uint32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); errno != 0 {
		t.Fatalf("unlocking the pseudo-terminal: %v", errno)
	}
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); errno != 0 {
		t.Fatalf("naming the pseudo-terminal: %v", errno)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return master, slave
}

// With stdin the terminal, the command gets the terminal: it reads what is
// typed (in the background it would be stopped by SIGTTIN), Ctrl-Z does not
// leave it stopped with the terminal, and Ctrl-C typed there reaches it
// once and ends the retries.
func TestRunInteractiveTerminal(t *testing.T) {
	cmd, master, out, copied := againOnPTY(t, true, "run", "--initial", "0", "--", "tty-child")
	cmdtest.WaitFor(t, out, "ready")
	if _, err := io.WriteString(master, "hello\n"); err != nil {
		t.Fatal(err)
	}
	cmdtest.WaitFor(t, out, "read hello")
	// Ctrl-Z stops the command. again's own job cannot stop here (a
	// session leader's group is orphaned: SIGTSTP is discarded), so it
	// continues the command, in the foreground, which reads on.
	if _, err := master.Write([]byte{26}); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(master, "world\n"); err != nil {
		t.Fatal(err)
	}
	cmdtest.WaitFor(t, out, "read world")
	if _, err := master.Write([]byte{3}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	cmdtest.WaitFor(t, out, "interrupted")
	if _, err := io.WriteString(master, "done\n"); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	<-copied
	got := strings.ReplaceAll(out.String(), "\r\n", "\n")
	if strings.Contains(got, "interrupted again") || !strings.Contains(got, "again run: attempt 1/4 failed (exit status 130); not retrying: interrupted (list 130 in --retry-on-exit to retry it)") {
		t.Errorf("output %q; want one interrupt and no retry", got)
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("status %d (%v), want 130", code, err)
	}
}

// With stdin a pipe but the output on the terminal, the command still gets
// the terminal: a prompt it reads from /dev/tty (a password, say) works.
func TestRunTerminalOnOutputOnly(t *testing.T) {
	cmd, master, out, copied := againOnPTY(t, false, "run", "--", "dev-tty")
	cmdtest.WaitFor(t, out, "ready")
	if _, err := io.WriteString(master, "secret\n"); err != nil {
		t.Fatal(err)
	}
	cmdtest.WaitFor(t, out, "read secret")
	if err := cmd.Wait(); err != nil {
		t.Errorf("again: %v; output %q", err, out.String())
	}
	<-copied
}

// againOnPTY starts the test binary as the again program with args (the
// argument after "--" is a mode of the helper, run as the command) in a
// session of its own whose controlling terminal is a new pseudo-terminal,
// in the foreground, as a shell starts it. Its stdout and stderr are the
// terminal; its stdin too with stdinTTY, else a pipe that stays open. It
// returns the process, the terminal's master end, what arrives there, and
// a channel closed once the session has ended.
func againOnPTY(t *testing.T, stdinTTY bool, args ...string) (*exec.Cmd, *os.File, *cmdtest.WaitWriter, <-chan struct{}) {
	t.Helper()
	master, slave := openPTY(t)
	t.Cleanup(func() { master.Close() })
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range args {
		if a == "--" {
			args = append(append(append([]string{}, args[:i+1]...), exe), args[i+1:]...)
			break
		}
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), cmdtest.MainEnv+"=1", cmdtest.HelperEnv+"=1", "GORACE=atexit_sleep_ms=0")
	cmd.Stdout, cmd.Stderr = slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 1}
	if stdinTTY {
		cmd.Stdin = slave
	} else {
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stdin.Close() })
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	out := cmdtest.NewWaitWriter("")
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(out, master) // ends with EIO when the session is gone
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})
	return cmd, master, out, copied
}
