package root

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/again-go/again/cmd/again/internal/cmd/completion"
	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// freeValues are the flags that take any text, so that no value is wrong
// in itself (names, paths, request parts), and those whose value may hold a
// password, which a message never repeats (--user, the Redis URLs).
var freeValues = map[string]bool{
	"fetch --data": true, "fetch --data-raw": true, "fetch --json": true, "fetch --output": true,
	"fetch --user": true, "fetch --cacert": true, "fetch --budget": true, "fetch --breaker-store": true,
	"run --budget": true, "wait --cacert": true, "wait --key": true, "wait --table": true,
	"proxy --scenario": true, "web --export": true,
	"sim storm --svg": true, "sim occ --svg": true, "sim outage --svg": true, "sim fleet --svg": true,
	"sim throttle --svg": true, "sim hedge --svg": true, "sim limit --svg": true,
}

// badValues are the wrong values of the flags, by the name of their value
// (what the help shows), for which "bogus" (or "maybe", for a boolean) is
// right: by type rather than by flag name, so that a renamed flag keeps its.
var badValues = map[string]string{
	"method":        "GET POST",
	"auto|off|key":  "a\x01b",
	"regexp":        "(",
	"name[=regexp]": "=x",
}

// badValueArgs are what a command needs around a flag for the flag's value
// to be judged: its arguments, and the flags without which another flag
// is refused for its own sake (fetch --parallel needs --repeat).
var badValueArgs = map[string][]string{
	"run":   {"--", "true"},
	"fetch": {"--repeat", "2", "--hedge-after", "p50", "--limit", "2", "http://127.0.0.1:1/"},
	"wait":  {"http://127.0.0.1:1/"},
	"proxy": {"--to", "http://127.0.0.1:1"},
}

// TestBadValueStyle gives every flag of every command a value it refuses
// and checks that the message has the one style of cmdutil.BadValue:
// exit 2, `again CMD: --FLAG "VALUE": want WHAT` on one line, the value
// quoted as given. Flags that take any text are in freeValues.
func TestBadValueStyle(t *testing.T) {
	root := newRoot(subcommands(&cmdutil.Env{})...)
	completion.Setup(root)
	checked := 0
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				walk(sub, append(path[:len(path):len(path)], sub.Name()))
			}
		}
		if !c.Runnable() || c.HasAvailableSubCommands() || len(path) == 0 || path[0] == "completion" {
			return
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			key := strings.Join(path, " ") + " --" + f.Name
			if f.Hidden || f.Name == "help" || freeValues[key] {
				return
			}
			bad := "bogus"
			if f.Value.Type() == "bool" {
				bad = "maybe"
			}
			if v, ok := badValues[f.Value.Type()]; ok {
				bad = v
			}
			var extra []string
			for _, a := range badValueArgs[path[0]] {
				// Leave out a helper flag that is the flag under test.
				if len(extra) > 0 && extra[len(extra)-1] == "--"+f.Name {
					extra = extra[:len(extra)-1]
					continue
				}
				extra = append(extra, a)
			}
			args := slices.Concat(path, []string{"--" + f.Name + "=" + bad}, extra)
			r := run(t, args...)
			checked++
			want := regexp.MustCompile(`^again ` + regexp.QuoteMeta(strings.Join(path, " ")) + `: --` + regexp.QuoteMeta(f.Name) + ` ` + regexp.QuoteMeta(strconv.Quote(bad)) + `: want \S[^\n]*\n$`)
			if goDuration.MatchString(r.Stderr) {
				t.Errorf("again %s: %q writes a duration as Go's String does, not as the flags take it", strings.Join(args, " "), r.Stderr)
			}
			if r.Code != cmdutil.ExitUsage || r.Stdout != "" || !want.MatchString(r.Stderr) {
				t.Errorf("again %s: exit %d, stdout %q, stderr %q; want exit 2 and `again %s: --%s %q: want WHAT`",
					strings.Join(args, " "), r.Code, r.Stdout, r.Stderr, strings.Join(path, " "), f.Name, bad)
			}
		})
	}
	walk(root, nil)
	if checked < 100 {
		t.Errorf("checked only %d flags", checked)
	}
}

// goDuration matches durations written as time.Duration's String writes
// them, with zero units ("1h0m0s", "1m0s"), or the largest one in hours
// ("2562047h"): the command writes "1h", "1m", and says "no limit".
var goDuration = regexp.MustCompile(`\b\d+h0m|\b\d+m0s\b|2562047h`)

// TestHelpDurations checks that no help writes a duration as Go's String
// does.
func TestHelpDurations(t *testing.T) {
	for _, path := range commandPaths(t) {
		r := run(t, append(path, "--help")...)
		if m := goDuration.FindString(r.Stdout); m != "" {
			t.Errorf("again %s --help writes %q, not as the flags take it", strings.Join(path, " "), m)
		}
	}
}

// placeholder is the one form of a value's name in the help, as pflag
// writes its own types and gh its flags: lowercase words, "|" between
// alternatives, "[...]" around an optional part, literal words as typed
// (n|adaptive, ratio|off, k[=2], rate[:status], duration@start). Capitals
// name the arguments in a Usage line (URL, TARGET, COMMAND).
var placeholder = regexp.MustCompile(`^[a-z0-9][a-z0-9|@:=/.\[\]-]*$`)

// TestPlaceholders checks the value names of every flag of every command.
func TestPlaceholders(t *testing.T) {
	root := newRoot(subcommands(&cmdutil.Env{})...)
	completion.Setup(root)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			name, _ := pflag.UnquoteUsage(f)
			if name != "" && !placeholder.MatchString(name) {
				t.Errorf("%s --%s: value name %q; want lowercase words, such as n|adaptive", c.CommandPath(), f.Name, name)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
