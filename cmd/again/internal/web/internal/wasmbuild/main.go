// Command wasmbuild regenerates the page's generated files and its
// WebAssembly.
//
// It writes static/index.html (from index.tmpl) and static/text.js from the
// catalogue and the presets (see internal/pagegen), builds ./wasm into
// static/again.wasm, copies Go's wasm_exec.js next to it and records the
// fingerprint of the sources in wasm.sum. `go generate
// ./cmd/again/internal/web` runs it in the web directory.
package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/again-go/again/cmd/again/internal/web/internal/pagegen"
	"github.com/again-go/again/cmd/again/internal/web/internal/srcsum"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "wasmbuild:", err)
		os.Exit(1)
	}
}

func run() error {
	tmpl, err := os.ReadFile("index.tmpl")
	if err != nil {
		return err
	}
	page, err := pagegen.HTML(tmpl)
	if err != nil {
		return err
	}
	script, err := pagegen.Script()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join("static", "index.html"), page, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join("static", "text.js"), script, 0o644); err != nil {
		return err
	}
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join("static", "again.wasm"), "./wasm")
	build.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build: %v", err)
	}
	var out bytes.Buffer
	goroot := exec.Command("go", "env", "GOROOT")
	goroot.Stdout, goroot.Stderr = &out, os.Stderr
	if err := goroot.Run(); err != nil {
		return fmt.Errorf("go env GOROOT: %v", err)
	}
	js, err := os.ReadFile(filepath.Join(strings.TrimSpace(out.String()), "lib", "wasm", "wasm_exec.js"))
	if err != nil {
		return fmt.Errorf("wasm_exec.js (Go 1.24 or later keeps it in lib/wasm): %v", err)
	}
	if err := os.WriteFile(filepath.Join("static", "wasm_exec.js"), js, 0o644); err != nil {
		return err
	}
	sum, err := srcsum.Sum(".", "./wasm")
	if err != nil {
		return err
	}
	return os.WriteFile("wasm.sum", []byte(sum+"\n"), 0o644)
}
