//go:build unix

package wait

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// execCommand replaces again with the command: same PID, the signals go
// straight to it, and nothing of again is left to wait for it.
func execCommand(path string, argv, env []string) error {
	return syscall.Exec(path, argv, env)
}

// terminalWidth reports the width of w if it is a terminal.
func terminalWidth(w io.Writer) (int, bool) {
	f, ok := w.(*os.File)
	if !ok {
		return 0, false
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0, false
	}
	return int(ws.Col), true
}
