package fetch

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
)

// output is where the final response goes: stdout, or the file of -o.
//
// A regular -o FILE is never written in place: each attempt writes a file
// of its own beside FILE, which is renamed over FILE only when the fetch
// ends with a response whose body was written whole, and removed
// otherwise. An attempt that is not the last (a body cut mid-way, then a
// failure) or a fetch stopped by a signal leaves FILE as it was, or
// absent; a reader of FILE sees the old content or the new, never a part;
// and a -d @FILE that is also the -o FILE is not overwritten before the
// request is sent. The temporary file is created before anything is sent,
// so that a directory that cannot be written is a usage error rather than
// a response lost after the server acted on the request.
//
// The replacement keeps FILE's permissions, not its owner or other hard
// links to it (as with any editor's save); a symbolic link is followed, so
// its target is replaced and the link stays. On Linux the temporary file
// has no name until it replaces FILE (O_TMPFILE), so a fetch killed even
// with SIGKILL leaves nothing behind; elsewhere, or on a file system
// without O_TMPFILE, SIGKILL leaves it (".FILE.again-…").
//
// A FILE that is not a regular file (a device such as /dev/null, a named
// pipe) cannot be replaced: it is opened now and written in place.
type output struct {
	w      io.Writer
	target string               // the file that -o names, symbolic links resolved; "" for stdout
	tmp    *cmdutil.PendingFile // the file renamed over target, nil if none
	file   *os.File             // target itself when it is not a regular file, nil if not
	wrote  bool                 // something was written since start
}

// Write writes to the output, noting that it did.
func (o *output) Write(p []byte) (int, error) {
	o.wrote = o.wrote || len(p) > 0
	return o.w.Write(p)
}

func openOutput(path string, stdout io.Writer) (*output, error) {
	if path == "-" {
		return &output{w: stdout}, nil
	}
	fail := func(err error) error {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return cmdutil.Usagef("--output: cannot create %q: %v", path, err)
	}
	target, err := resolveLinks(path)
	if err != nil {
		return nil, fail(err)
	}
	perm := fs.FileMode(0o666)
	switch st, err := os.Stat(target); {
	case err == nil && st.IsDir():
		return nil, fail(syscall.EISDIR)
	case err == nil && !st.Mode().IsRegular():
		file, err := os.OpenFile(target, os.O_WRONLY, 0)
		if err != nil {
			return nil, fail(err)
		}
		return &output{w: file, target: target, file: file}, nil
	case err == nil:
		perm = st.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fail(err)
	}
	tmp, err := cmdutil.CreateBeside(filepath.Dir(target), filepath.Base(target), perm)
	if err == nil && perm != 0o666 {
		// The umask applies to a new file, not to an existing file's
		// permissions, which the replacement keeps.
		err = tmp.Chmod(perm)
	}
	if err != nil {
		if tmp != nil {
			tmp.Discard()
		}
		return nil, fail(err)
	}
	return &output{w: tmp, target: target, tmp: tmp}, nil
}

// resolveLinks returns the file that path names once symbolic links are
// followed, as writing to path would: the file replaced is the link's
// target, and the link stays. A dangling link names the file it would
// create.
func resolveLinks(path string) (string, error) {
	for range 40 { // as Linux's limit on links in one lookup
		st, err := os.Lstat(path)
		if err != nil || st.Mode()&fs.ModeSymlink == 0 {
			return path, nil // a missing file is created; Stat reports other errors
		}
		link, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(path), link)
		}
		path = link
	}
	return "", &fs.PathError{Op: "open", Path: path, Err: syscall.ELOOP}
}

// start readies the output for the final response: the temporary file is
// emptied, in case an earlier attempt wrote to it.
func (o *output) start() error {
	o.wrote = false
	if o.tmp == nil {
		return nil
	}
	if err := o.tmp.Truncate(0); err != nil {
		return fmt.Errorf("cannot write the response: %w", err)
	}
	if _, err := o.tmp.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("cannot write the response: %w", err)
	}
	return nil
}

// rewindable reports whether start can empty the output for another
// attempt's body: a regular -o file can, stdout and a device cannot.
func (o *output) rewindable() bool { return o.tmp != nil }

// close ends the output: with complete, the final response's body was
// written whole, and the temporary file replaces the -o file; otherwise it
// is removed.
func (o *output) close(complete bool) error {
	switch {
	case o.file != nil:
		if err := o.file.Close(); err != nil {
			return fmt.Errorf("cannot write the response: %w", err)
		}
	case o.tmp != nil && complete:
		if err := o.tmp.Replace(o.target); err != nil {
			return fmt.Errorf("cannot write the response: %w", err)
		}
	case o.tmp != nil:
		o.tmp.Discard()
	}
	return nil
}
