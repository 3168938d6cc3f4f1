package cmdutil

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// openAnonymous opens a new file in dir with no name (O_TMPFILE), readable
// so that it can be copied should linking it fail. base names it in error
// messages only.
func openAnonymous(dir, base string, perm fs.FileMode) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, uint32(perm))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(dir, base)+" (unnamed)"), nil
}

// linkAnonymous gives the anonymous file f the new name, through
// /proc/self/fd: linking by descriptor (AT_EMPTY_PATH) would need
// CAP_DAC_READ_SEARCH. An existing name is an error matching fs.ErrExist.
func linkAnonymous(f *os.File, name string) error {
	proc := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	if err := unix.Linkat(unix.AT_FDCWD, proc, unix.AT_FDCWD, name, unix.AT_SYMLINK_FOLLOW); err != nil {
		return &os.LinkError{Op: "link", Old: f.Name(), New: name, Err: err}
	}
	return nil
}
