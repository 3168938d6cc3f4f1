package cmdutil

import (
	"io"
	"os"
)

// IsTerminal reports whether w is a terminal (a character device): where
// a command may print a live status line that rewrites itself.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
