package root

import (
	"runtime/debug"
	"testing"
)

// TestVersionOf checks what `again --version` prints for each way a binary
// is built: installed from the module proxy, from a clone (clean, with
// changes, at a tag), and without VCS information.
func TestVersionOf(t *testing.T) {
	const rev = "13878521efc8b795334f2a418389919e9ea0b3c4"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: rev},
			{Key: "vcs.time", Value: "2026-12-06T13:11:43Z"},
			{Key: "vcs.modified", Value: modified},
		}
	}
	tests := []struct {
		name     string
		version  string
		settings []debug.BuildSetting
		want     string
	}{
		{"go install @v1.2.0", "v1.2.0", nil, "v1.2.0"},
		{"go install @pre-release", "v1.3.0-rc.1", nil, "v1.3.0-rc.1"},
		{"clone, clean", "v0.0.0-20261206131143-13878521efc8", vcs("false"), "devel 13878521efc8 (2026-12-06T13:11:43Z)"},
		{"clone, changed", "v0.0.0-20261206131143-13878521efc8+dirty", vcs("true"), "devel 13878521efc8+dirty (2026-12-06T13:11:43Z)"},
		{"clone after a tag", "v1.2.1-0.20261206131143-13878521efc8", vcs("false"), "devel 13878521efc8 (2026-12-06T13:11:43Z)"},
		{"clone at a tag", "v1.2.0", vcs("false"), "v1.2.0 13878521efc8 (2026-12-06T13:11:43Z)"},
		{"clone at a tag, changed", "v1.2.0+dirty", vcs("true"), "v1.2.0 13878521efc8+dirty (2026-12-06T13:11:43Z)"},
		{"older Go, clone", "(devel)", vcs("true"), "devel 13878521efc8+dirty (2026-12-06T13:11:43Z)"},
		{"no VCS information", "(devel)", nil, "devel"},
		{"no time", "(devel)", []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}}, "devel abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/again-go/again/cmd/again", Version: tt.version}, Settings: tt.settings}
			if got := versionOf(info); got != tt.want {
				t.Errorf("versionOf(%q, %v) = %q, want %q", tt.version, tt.settings, got, tt.want)
			}
		})
	}
}

// TestVersionIsBuildInfo checks that --version prints the running
// binary's own build information.
func TestVersionIsBuildInfo(t *testing.T) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		t.Skip("no build information")
	}
	r := run(t, "--version")
	if want := "again " + versionOf(info) + "\n"; r.Stdout != want || r.Code != 0 {
		t.Errorf("again --version: exit %d, stdout %q, want exit 0 and %q", r.Code, r.Stdout, want)
	}
}
