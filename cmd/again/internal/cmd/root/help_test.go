package root

import (
	"strings"
	"testing"
)

// The help says what the commands promise about processes, files and
// credentials.
func TestHelpPromises(t *testing.T) {
	for sub, wants := range map[string][]string{
		"run":   {"What survives run: nothing of a failed attempt", "successful attempt started in the background is left running", "dies (SIGKILL) when again dies"},
		"fetch": {"-o FILE is atomic", "scheme, host and port", "--location-trusted", "101 Switching", "opened once"},
		"web":   {"new or empty", "--force", "never written through"},
	} {
		r := run(t, sub, "--help")
		for _, want := range wants {
			if !strings.Contains(strings.Join(strings.Fields(r.Stdout), " "), want) {
				t.Errorf("again %s --help lacks %q", sub, want)
			}
		}
	}
}
