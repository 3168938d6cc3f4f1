package root

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// guides names, for each command whose help follows the layout of gh and
// kubectl, the guide that holds its flag table: the file, and the heading
// of its section ("" for the whole file).
var guides = map[string]struct{ file, heading string }{
	"calc":  {"../../../../../docs/calc.md", ""},
	"web":   {"../../../../../docs/cli.md", "## The calculator page: `again web`"},
	"proxy": {"../../../../../docs/cli.md", "## A fault-injecting proxy: `again proxy`"},
	"sim":   {"../../../../../docs/cli.md", "## Request storms, simulated: `again sim`"},
	"run":   {"../../../../../docs/cli.md", "## Retrying any command: `again run`"},
	"fetch": {"../../../../../docs/cli.md", "## Fetching a URL safely: `again fetch`"},
	"wait":  {"../../../../../docs/cli.md", "## Waiting for dependencies: `again wait`"},
}

func init() {
	for _, model := range []string{"occ", "outage", "fleet", "storm", "hedge", "throttle", "limit"} {
		guides["sim "+model] = struct{ file, heading string }{"../../../../../docs/cli.md", "### `again sim " + model + "`"}
	}
}

// guideFlag finds the flags in the first cell of a table row:
// "| `-q, --quiet` | ..." gives quiet.
var guideFlag = regexp.MustCompile("--([a-z][a-z0-9-]*)")

// TestHelpLayout: the help of each command in guides says what the command
// does in at most three lines, then Usage, then Examples, then the flags,
// and fits a 24-line screen before its flag list; the flags it lists are
// those of the command's table in its guide, and the other way round, so
// that help and guide cannot drift apart.
func TestHelpLayout(t *testing.T) {
	root := newRoot(subcommands(&cmdutil.Env{})...)
	for name, g := range guides {
		t.Run(name, func(t *testing.T) {
			path := strings.Fields(name)
			cmd, _, err := root.Find(path)
			if err != nil {
				t.Fatal(err)
			}
			help := run(t, append(path, "--help")...).Stdout
			lines := strings.Split(help, "\n")
			usage, examples, flags := slices.Index(lines, "Usage:"), slices.Index(lines, "Examples:"), slices.Index(lines, "Flags:")
			if usage < 0 || usage > 4 || examples < usage || flags < examples {
				t.Errorf("again %s --help: Usage at line %d, Examples at %d, Flags at %d; want a description of at most 3 lines, then Usage, Examples and Flags in that order", name, usage+1, examples+1, flags+1)
			}
			screen := flags
			if i := slices.Index(lines, "Available Commands:"); i >= 0 {
				screen = i // a list of subcommands, which cobra prints before the flags
			}
			if screen > 24 {
				t.Errorf("again %s --help: %d lines before its flags or subcommands, want a screen of at most 24", name, screen)
			}
			if cmd.HasAvailableSubCommands() {
				return // only subcommands: no flags of its own to document
			}
			inGuide := tableFlags(t, g.file, g.heading)
			for _, f := range helpFlags(cmd) {
				if !inGuide[f] {
					t.Errorf("again %s --help lists --%s, which %s's flag table lacks", name, f, g.file)
				}
				delete(inGuide, f)
			}
			for f := range inGuide {
				t.Errorf("%s's flag table for %s has --%s, which again %s --help does not list", g.file, name, f, name)
			}
		})
	}
}

// helpFlags returns the names of the flags that cmd's help lists, without
// --help.
func helpFlags(cmd *cobra.Command) []string {
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Name != "help" {
			names = append(names, f.Name)
		}
	})
	return names
}

// tableFlags returns the flags named in the first cell of the table rows
// of file's section heading (the whole file if heading is "").
func tableFlags(t *testing.T, file, heading string) map[string]bool {
	t.Helper()
	text := guideTable(t, file, heading)
	flags := map[string]bool{}
	for line := range strings.SplitSeq(text, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`-") {
			continue
		}
		for _, m := range guideFlag.FindAllStringSubmatch(cells[1], -1) {
			flags[m[1]] = true
		}
	}
	if len(flags) == 0 {
		t.Fatalf("%s, section %q: no flag table", file, heading)
	}
	return flags
}
