package root

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEExample keeps the README and the command's guide true: the
// README's first command is the worked example of docs/cli.md, and the
// output the guide shows for it is what that command prints.
func TestREADMEExample(t *testing.T) {
	const command = "go run ./cmd/again calc --initial 500ms --multiplier 2 --max 30s --retries 8\n"
	r := run(t, strings.Fields(strings.TrimPrefix(command, "go run ./cmd/again "))...)
	if r.Code != 0 {
		t.Fatalf("%s: exit %d, stderr %q", command, r.Code, r.Stderr)
	}
	for _, doc := range []struct {
		path       string
		wantOutput bool
	}{
		{"../../../../../README.md", false},
		{"../../../../../docs/cli.md", true},
	} {
		b, err := os.ReadFile(doc.path)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		block := strings.Index(text, "```sh\n"+command+"```\n")
		if block < 0 {
			t.Errorf("%s lacks the command block %q", doc.path, command)
			continue
		}
		if doc.path == "../../../../../README.md" && strings.Index(text, "```sh\ngo run ") != block {
			t.Errorf("README's first go run command is not %q", command)
		}
		if doc.wantOutput && !strings.Contains(text, "```\n"+r.Stdout+"```\n") {
			t.Errorf("%s does not show the output of %q, which is\n%s", doc.path, command, r.Stdout)
		}
	}
}
