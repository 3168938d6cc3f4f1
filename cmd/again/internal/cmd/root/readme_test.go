package root

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEExample keeps the README true: the output it shows for its main
// command must be what that command prints.
func TestREADMEExample(t *testing.T) {
	readme, err := os.ReadFile("../../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const command = "go run ./cmd/again calc --initial 500ms --multiplier 2 --max 30s --retries 8\n"
	text := string(readme)
	if !strings.Contains(text, "```sh\n"+command+"```\n") {
		t.Fatalf("README lacks the command block %q", command)
	}
	r := run(t, strings.Fields(strings.TrimPrefix(command, "go run ./cmd/again "))...)
	if r.Code != 0 || !strings.Contains(text, "```\n"+r.Stdout+"```\n") {
		t.Errorf("README does not show the output of %q, which is\n%s", command, r.Stdout)
	}
}
