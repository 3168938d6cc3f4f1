package web_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestWasmLinksNoNetHTTP keeps net/http out of static/again.wasm. Linking it
// costs the page 1.85 MB (4.8 MB to 6.7 MB, measured with Go 1.26): its
// package initialisation keeps most of it alive even when nothing calls it.
// Package shed names *http.Request in its Config, so the simulator's
// shedding (sim/simshed, sim/outage) runs shed's decisions from package
// shed/admission, which does not import net/http.
func TestWasmLinksNoNetHTTP(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./wasm")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./wasm: %v", err)
	}
	var importers []string
	for line := range strings.Lines(string(out)) {
		pkg, imports, _ := strings.Cut(strings.TrimSpace(line), " ")
		if slices.Contains(strings.Fields(imports), "net/http") && !strings.HasPrefix(pkg, "net/http") {
			importers = append(importers, pkg)
		}
	}
	if len(importers) > 0 {
		t.Errorf("the page's WebAssembly (./wasm, GOOS=js GOARCH=wasm) links net/http, imported by %s; keep it out (1.85 MB more for every visitor)", strings.Join(importers, ", "))
	}
}
