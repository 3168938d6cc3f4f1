package root

import (
	"os"
	"strings"
	"testing"
)

// The guide says what the commands promise about processes, files and
// credentials.
func TestHelpPromises(t *testing.T) {
	for sub, wants := range map[string][]string{
		"run":   {"What survives run: nothing of a failed attempt", "successful attempt started in the background is left running", "dies (SIGKILL) when again dies"},
		"fetch": {"-o FILE is atomic", "scheme, host and port", "--location-trusted", "101 Switching", "opened once"},
		"web":   {"new or empty", "--force", "never written through"},
	} {
		guide := guideSection(t, sub)
		// The help is a screen; the promises are in the guide, which
		// TestHelpLayout keeps in step with it.
		for _, want := range wants {
			if !strings.Contains(strings.Join(strings.Fields(guide), " "), want) {
				t.Errorf("docs/cli.md's %s section lacks %q", sub, want)
			}
		}
	}
}

// guideSection returns the section of the command sub in its guide (see
// guides), its subsections included.
func guideSection(t *testing.T, sub string) string {
	t.Helper()
	g := guides[sub]
	b, err := os.ReadFile(g.file)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "\n"+g.heading+"\n")
	if i < 0 {
		t.Fatalf("%s has no section %q", g.file, g.heading)
	}
	text = text[i+1:]
	if j := strings.Index(text[1:], "\n## "); j >= 0 {
		text = text[:j+1]
	}
	return text
}
