// Command mkproxy builds a file-based Go module proxy from a source tree.
//
// The release check (scripts/release-check) uses it to install and import
// the repository's modules as a user would, before any tag exists.
//
//	mkproxy -version v0.1.0 -out DIR SRC MODDIR...
//
// Each MODDIR (relative to SRC, "." for the root) is served at -version:
// its go.mod as it is, and its zip made by golang.org/x/mod/zip the way
// the go command makes one (a nested module's files are left out, as the
// go command leaves them out). Point GOPROXY at file://DIR.
//
// It refuses a published go.mod that the proxy could not serve as written:
// one with a replace directive, or one that requires a sibling at another
// version than -version, since both fail for a user (go install refuses a
// replace; a version nobody tagged does not resolve).
//
// This module is never published: it is a tool of the repository's own,
// with its own go.mod so that no published module requires x/mod.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "mkproxy:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("mkproxy", flag.ContinueOnError)
	version := fs.String("version", "", "the version every module is served at, such as v0.1.0")
	out := fs.String("out", "", "the proxy's directory, created if missing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 2 || *version == "" || *out == "" {
		return errors.New("usage: mkproxy -version vX.Y.Z -out DIR SRC MODDIR [MODDIR]")
	}
	if err := module.Check("example.com/m", *version); err != nil {
		return fmt.Errorf("-version %q is not a module version such as v0.1.0", *version)
	}
	src, dirs := fs.Arg(0), fs.Args()[1:]

	files := make([]*modfile.File, len(dirs))
	paths := make([]string, len(dirs))
	for i, d := range dirs {
		name := filepath.Join(src, d, "go.mod")
		data, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		f, err := modfile.ParseLax(name, data, nil)
		if err != nil {
			return err
		}
		if f.Module == nil {
			return fmt.Errorf("%s has no module line", name)
		}
		files[i], paths[i] = f, f.Module.Mod.Path
	}
	for i, f := range files {
		if len(f.Replace) > 0 {
			return fmt.Errorf("%s/go.mod has a replace directive; go install and go get refuse a published module with one (use go.work in the repository)", dirs[i])
		}
		for _, r := range f.Require {
			if slices.Contains(paths, r.Mod.Path) && r.Mod.Version != *version {
				return fmt.Errorf("%s/go.mod requires %s %s, but the release serves it at %s: set every sibling requirement to the version being released (see RELEASING.md)",
					dirs[i], r.Mod.Path, r.Mod.Version, *version)
			}
		}
	}
	for i, d := range dirs {
		if err := serve(*out, filepath.Join(src, d), module.Version{Path: paths[i], Version: *version}); err != nil {
			return fmt.Errorf("%s: %v", d, err)
		}
	}
	return nil
}

// serve writes the list, info, mod and zip files of mod, made from dir,
// under out in the layout of GOPROXY's file:// form.
func serve(out, dir string, mod module.Version) error {
	escaped, err := module.EscapePath(mod.Path)
	if err != nil {
		return err
	}
	vdir := filepath.Join(out, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return err
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{mod.Version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return err
	}
	z, err := os.Create(filepath.Join(vdir, mod.Version+".zip"))
	if err != nil {
		return err
	}
	if err := zip.CreateFromDir(z, mod, dir); err != nil {
		z.Close()
		return fmt.Errorf("zip: %v", err)
	}
	if err := z.Close(); err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		"list":                []byte(mod.Version + "\n"),
		mod.Version + ".info": info,
		mod.Version + ".mod":  gomod,
	} {
		if err := os.WriteFile(filepath.Join(vdir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
