package cmdutil

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// PendingFile is content being written beside the file it will replace,
// which it replaces at once when complete (replace) or never (discard).
//
// Where the system allows (Linux, on a file system with O_TMPFILE), the
// file has no name until replace links it into the directory, just before
// renaming it over its target: a process killed meanwhile, even by
// SIGKILL, leaves nothing behind, since the kernel frees a file that no
// name and no descriptor holds. Elsewhere it is created under a random
// name (".base.again-1f2e3d4c5b6a7988") that a SIGKILL leaves behind.
type PendingFile struct {
	*os.File
	dir, base string
	name      string // its name in dir, "" while it has none
}

// CreateBeside creates a new, empty PendingFile in dir for content that
// will replace dir/base: a rename within one directory replaces the old
// file at once, so a reader sees the old content or the new, never a part,
// and a run that fails leaves the old file as it was. A name is always
// created with O_EXCL, so it never follows a symbolic link a name is
// already taken by, nor opens someone else's file; perm (before the umask)
// is the file's permission.
func CreateBeside(dir, base string, perm fs.FileMode) (*PendingFile, error) {
	if f, err := openAnonymous(dir, base, perm); err == nil {
		return &PendingFile{File: f, dir: dir, base: base}, nil
	}
	f, err := createNamed(dir, base, perm)
	if err != nil {
		return nil, err
	}
	return &PendingFile{File: f, dir: dir, base: base, name: f.Name()}, nil
}

// createNamed creates a new, empty file in dir under a random name made
// from base.
func createNamed(dir, base string, perm fs.FileMode) (*os.File, error) {
	for range 10 {
		f, err := os.OpenFile(tempName(dir, base), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, &fs.PathError{Op: "create", Path: filepath.Join(dir, base), Err: fs.ErrExist}
}

// tempName is a random name in dir made from base.
func tempName(dir, base string) string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return filepath.Join(dir, "."+base+".again-"+hex.EncodeToString(b[:]))
}

// Replace renames the complete file over path, after giving it a name if
// it has none, or removes it if that fails; it is closed either way.
func (p *PendingFile) Replace(path string) error {
	if p.name == "" {
		if err := p.nameIt(); err != nil {
			p.File.Close()
			return err
		}
	}
	err := p.File.Close()
	if err == nil {
		err = os.Rename(p.name, path)
	}
	if err != nil {
		os.Remove(p.name)
	}
	return err
}

// nameIt links the anonymous file into its directory under a random name,
// or, should the system refuse (no /proc, say), copies it to a new named
// file, which then stands in for it.
func (p *PendingFile) nameIt() error {
	for range 10 {
		name := tempName(p.dir, p.base)
		err := linkAnonymous(p.File, name)
		if err == nil {
			p.name = name
			return nil
		}
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	st, err := p.File.Stat()
	if err != nil {
		return err
	}
	f, err := createNamed(p.dir, p.base, st.Mode().Perm())
	if err != nil {
		return err
	}
	if err = f.Chmod(st.Mode().Perm()); err == nil {
		_, err = io.Copy(f, io.NewSectionReader(p.File, 0, st.Size()))
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("copying the response to %s: %w", f.Name(), err)
	}
	p.File.Close()
	p.File, p.name = f, f.Name()
	return nil
}

// Discard closes the file and removes its name, if it has one.
func (p *PendingFile) Discard() {
	p.File.Close()
	if p.name != "" {
		os.Remove(p.name)
	}
}
