//go:build !linux

package cmdutil

import (
	"errors"
	"io/fs"
	"os"
)

// openAnonymous needs Linux's O_TMPFILE: elsewhere pending files have a
// name from the start.
func openAnonymous(dir, base string, perm fs.FileMode) (*os.File, error) {
	return nil, errors.ErrUnsupported
}

func linkAnonymous(f *os.File, name string) error { return errors.ErrUnsupported }
