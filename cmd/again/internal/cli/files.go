package cli

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// createBeside creates a new, empty file in dir, named after base with a
// random suffix (".base.again-1f2e3d4c5b6a7988"), for content that is
// renamed over dir/base once complete: a rename within one directory
// replaces the old file at once, so a reader sees the old content or the
// new, never a part, and a run that fails leaves the old file as it was.
// The file is created with O_EXCL, so it never follows a symbolic link a
// name is already taken by, nor opens someone else's file; perm (before the
// umask) is its permission.
func createBeside(dir, base string, perm fs.FileMode) (*os.File, error) {
	for range 10 {
		var b [8]byte
		_, _ = rand.Read(b[:]) // never fails (crypto/rand)
		name := filepath.Join(dir, "."+base+".again-"+hex.EncodeToString(b[:]))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, &fs.PathError{Op: "create", Path: filepath.Join(dir, base), Err: fs.ErrExist}
}

// replaceWith renames the complete file tmp over path, or removes it if
// that fails; tmp is closed either way.
func replaceWith(tmp *os.File, path string) error {
	err := tmp.Close()
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// discard closes and removes tmp.
func discard(tmp *os.File) {
	tmp.Close()
	os.Remove(tmp.Name())
}
