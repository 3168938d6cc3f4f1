// Package srcsum fingerprints the Go source that web/wasm is built from.
//
// A test compares the fingerprint with wasm.sum to tell when the committed
// again.wasm is older than the code. A fingerprint of the sources, unlike a
// rebuild-and-compare of the binary, does not depend on which Go release CI
// happens to run.
package srcsum

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Sum returns the SHA-256, in hex, of the import paths, file names and
// contents of every non-standard package that the package pkg (such as
// "./wasm") depends on when built with GOOS=js GOARCH=wasm. dir is the
// directory the go command runs in.
func Sum(dir, pkg string) (string, error) {
	cmd := exec.Command("go", "list", "-deps", "-f",
		`{{if not .Standard}}{{.ImportPath}}|{{.Dir}}|{{join .GoFiles ","}}|{{join .EmbedFiles ","}}{{end}}`, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("srcsum: go list %s: %v: %s", pkg, err, stderr.Bytes())
	}
	h := sha256.New()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		parts := strings.Split(line, "|")
		if len(parts) != 4 {
			return "", fmt.Errorf("srcsum: unexpected go list line %q", line)
		}
		importPath, pkgDir := parts[0], parts[1]
		files := append(strings.Split(parts[2], ","), strings.Split(parts[3], ",")...)
		fmt.Fprintf(h, "package %s\n", importPath)
		for _, f := range files {
			if f == "" {
				continue
			}
			b, err := os.ReadFile(filepath.Join(pkgDir, f))
			if err != nil {
				return "", fmt.Errorf("srcsum: %v", err)
			}
			fmt.Fprintf(h, "file %s %d\n", f, len(b))
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
