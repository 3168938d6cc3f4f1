package root

import (
	"os"
	"strings"
	"testing"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/spf13/pflag"
)

// sameMeaning are the commands whose guide's flag table says what their
// help says, word for word; what the guide adds is in its prose.
var sameMeaning = map[string]bool{"proxy": true, "web": true}

// TestGuideTablesAreTheHelp checks that each flag's row in its guide's table
// names the flag as the help does, placeholder included (`--limit
// n|adaptive`), and, for the commands in sameMeaning, has the help's words.
func TestGuideTablesAreTheHelp(t *testing.T) {
	root := newRoot(subcommands(&cmdutil.Env{})...)
	for name, g := range guides {
		path := strings.Fields(name)
		cmd, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		if cmd.HasAvailableSubCommands() {
			continue
		}
		rows := tableRows(t, g.file, g.heading)
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || f.Name == "help" {
				return
			}
			placeholder, usage := pflag.UnquoteUsage(f)
			col := "--" + f.Name
			if f.Shorthand != "" {
				col = "-" + f.Shorthand + ", " + col
			}
			if placeholder != "" {
				col += " " + placeholder
			}
			if f.NoOptDefVal != "" && f.Value.Type() != "bool" {
				col += "[=" + f.NoOptDefVal + "]"
			}
			row, ok := rows[f.Name]
			if !ok {
				return // TestHelpLayout names it
			}
			if row[0] != col {
				t.Errorf("%s, %s: the flag reads %q, its help %q", g.file, name, row[0], col)
			}
			if sameMeaning[name] {
				if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && !strings.Contains(usage, "(default") {
					usage += " (default " + f.DefValue + ")"
				}
				if row[1] != usage {
					t.Errorf("%s, %s --%s: the table says %q, the help %q", g.file, name, f.Name, row[1], usage)
				}
			}
		})
	}
}

// tableRows returns the cells of the flag table rows of file's section
// heading, by flag name: the first cell without its backquotes, and the
// second, with `\|` read as `|`.
func tableRows(t *testing.T, file, heading string) map[string][2]string {
	t.Helper()
	text := guideTable(t, file, heading)
	rows := map[string][2]string{}
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.ReplaceAll(line, `\|`, "\x00")
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`-") {
			continue
		}
		first := strings.ReplaceAll(strings.Trim(strings.TrimSpace(cells[1]), "`"), "\x00", "|")
		m := guideFlag.FindStringSubmatch(first)
		if m == nil {
			continue
		}
		rows[m[1]] = [2]string{first, strings.ReplaceAll(strings.TrimSpace(cells[2]), "\x00", "|")}
	}
	return rows
}

// guideTable returns the text of file's section heading, up to the next
// heading (the whole file if heading is "").
func guideTable(t *testing.T, file, heading string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if heading == "" {
		return text
	}
	i := strings.Index(text, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("%s has no section %q", file, heading)
	}
	text = text[i+len(heading)+2:]
	for _, next := range []string{"\n## ", "\n### "} {
		if j := strings.Index(text, next); j >= 0 {
			text = text[:j]
		}
	}
	return text
}
