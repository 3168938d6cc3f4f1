package root

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/again-go/again/cmd/again/internal/cmd/completion"
	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
	"github.com/spf13/cobra"
)

// run runs the again command line within a test and returns what it
// printed; wantUsageError checks the usage-error contract on that.
var (
	run            = cmdtest.Runner(RunEnv)
	wantUsageError = cmdtest.WantUsageError
	withBudget     = cmdtest.BudgetRunner(RunEnv)
)

func TestFrameworkUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `again: unknown command "frobnicate"; want one of calc, completion, fetch, proxy, run, sim, wait, web (see 'again --help')`},
		{[]string{"--frobnicate"}, `again: unknown flag: --frobnicate (see 'again --help')`},
		{[]string{"calc", "--frobnicate"}, `again calc: unknown flag: --frobnicate (see 'again calc --help')`},
		{[]string{"calc", "-x"}, `again calc: unknown shorthand flag: 'x' in -x (see 'again calc --help')`},
		{[]string{"calc", "--initial"}, `again calc: flag needs an argument: --initial (see 'again calc --help')`},
		{[]string{"calc", "--initial="}, `again calc: --initial "": want a value; leave the flag out for its default (see 'again calc --help')`},
		{[]string{"run", "--retry-on-exit=", "--", "true"}, `again run: --retry-on-exit "": want a value; leave the flag out for its default (see 'again run --help')`},
		{[]string{"run", "--quiet=maybe", "--", "true"}, `again run: --quiet "maybe": want true or false`},
		{[]string{"fetch", "-i=x", "http://127.0.0.1:1/"}, `again fetch: --include "x": want true or false`},
		{[]string{"calc", "extra"}, `again calc: unexpected argument "extra"; calc takes only flags (see 'again calc --help')`},
		{[]string{"help", "bogus"}, `again help: unknown help topic "bogus"; want one of calc, completion, fetch, proxy, run, sim, wait, web (see 'again --help')`},
		{[]string{"help", "run", "extra"}, `again help: unknown help topic "run extra"; want one of calc, completion, fetch, proxy, run, sim, wait, web (see 'again --help')`},
		{[]string{"fetch", "-X", "", "http://127.0.0.1:1/"}, `again fetch: --method "": want a value; leave the flag out for its default (see 'again fetch --help')`},
		{[]string{"fetch", "-o", "", "http://127.0.0.1:1/"}, `again fetch: --output "": want a value; leave the flag out for its default (see 'again fetch --help')`},
		// A duration needs a unit in every flag of every command: a bare number is
		// seconds to timeout and curl, milliseconds to the calculator page.
		{[]string{"run", "--attempt-timeout", "30", "--", "true"}, `again run: --attempt-timeout "30": want a duration with a unit, such as 30s or 30ms (a bare number is seconds to timeout and curl, milliseconds to the calculator page)`},
		{[]string{"run", "--deadline", "1.5", "--", "true"}, `again run: --deadline "1.5": want a duration with a unit, such as 1.5s or 1.5ms (a bare number is seconds to timeout and curl, milliseconds to the calculator page)`},
		{[]string{"fetch", "--attempt-timeout", "30", "http://127.0.0.1:1/"}, `again fetch: --attempt-timeout "30": want a duration with a unit, such as 30s or 30ms (a bare number is seconds to timeout and curl, milliseconds to the calculator page)`},
		{[]string{"fetch", "--deadline", "30", "http://127.0.0.1:1/"}, `again fetch: --deadline "30": want a duration with a unit, such as 30s or 30ms (a bare number is seconds to timeout and curl, milliseconds to the calculator page)`},
		{[]string{"run", "--initial", "1.5", "--", "true"}, `again run: --initial "1.5": want a duration with a unit, such as 1.5s or 1.5ms (a bare number is seconds to timeout and curl, milliseconds to the calculator page)`},
		{[]string{"run", "--max", "30", "--", "true"}, `again run: --max "30": want a duration with a unit, such as 30s or 30ms (a bare number is seconds to timeout and curl, milliseconds to the calculator page)`},
		{[]string{"wait", "--deadline", "5", "db:1"}, `again wait: --deadline "5": want a duration with a unit, such as 5s or 5ms (a bare number is seconds to timeout and curl, milliseconds to the calculator page)`},
		{[]string{"calc", "--deadline", "60"}, `again calc: --deadline "60": want a duration with a unit, such as 60s or 60ms (a bare number is seconds to timeout and curl, milliseconds to the calculator page)`},
		// A policy that contradicts itself is refused alike everywhere.
		{[]string{"calc", "--initial", "5s", "--max", "1s"}, `again calc: --initial 5s is above --max 1s: every delay would be 1s; lower --initial, or raise --max (0 for no cap)`},
		{[]string{"run", "--initial", "5s", "--max", "1s", "--", "true"}, `again run: --initial 5s is above --max 1s: every delay would be 1s; lower --initial, or raise --max (0 for no cap)`},
		{[]string{"fetch", "--initial", "5s", "--max", "1s", "http://127.0.0.1:1/"}, `again fetch: --initial 5s is above --max 1s: every delay would be 1s; lower --initial, or raise --max (0 for no cap)`},
		{[]string{"wait", "--initial", "5s", "db:1"}, `again wait: --initial 5s is above --max 2s (its default): every delay would be 2s; lower --initial, or raise --max (0 for no cap)`},
		{[]string{"sim", "storm", "--initial", "5s", "--max", "1s"}, `again sim storm: --initial 5s is above --max 1s: every delay would be 1s; lower --initial, or raise --max (0 for no cap)`},
		// A very long value is echoed shortened.
		{[]string{"run", "--retry-on-exit", strings.Repeat("9", 100000), "--", "true"}, `again run: --retry-on-exit "` + strings.Repeat("9", 184) + `"… (100000 bytes): want a comma-separated list of exit statuses from 1 to 255`},
		{[]string{"run", "--attempt-timeout", strings.Repeat("x", 1000), "--", "true"}, `again run: --attempt-timeout "` + strings.Repeat("x", 184) + `"… (1000 bytes): want a duration of 0 or more, with no limit short of 292 years (Go syntax such as 500ms, 1.5s or 2m)`},
		{[]string{"calc", "--multiplier", strings.Repeat("y", 1000)}, `again calc: --multiplier "` + strings.Repeat("y", 48) + `"… (1000 bytes): want a finite number >= 1`},
		{[]string{strings.Repeat("z", 300)}, `again: unknown command "` + strings.Repeat("z", 184) + `"… (300 bytes); want one of calc, completion, fetch, proxy, run, sim, wait, web (see 'again --help')`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			wantUsageError(t, run(t, tt.args...), tt.want)
		})
	}
}

// A limit of 0 is none, in every command where none can be, and takes no
// unit: 0 is 0 in every unit. wait's --attempt-timeout 0 leaves each check
// to the --deadline; a --deadline 0 is no deadline (wait's excepted: a
// wait is never unbounded).
func TestBareZeroLimits(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	for _, args := range [][]string{
		{"run", "--attempt-timeout", "0", "--", "true"},
		{"fetch", "--attempt-timeout", "0", "--retries", "0", srv.URL},
		{"wait", "--attempt-timeout", "0", srv.URL},
		{"run", "--deadline", "0", "--", "true"},
		{"run", "--deadline", "0s", "--attempt-timeout", "0ms", "--", "true"},
		{"fetch", "--deadline", "0", srv.URL},
		{"calc", "--deadline", "0"},
		{"sim", "storm", "--deadline", "0", "--clients", "2"},
	} {
		if r := run(t, args...); r.Code != 0 {
			t.Errorf("again %q: exit %d, stderr %q; want 0 accepted as none", args, r.Code, r.Stderr)
		}
	}
	// A deadline of 0 is none: calc's report is the one without a deadline.
	if with, without := run(t, "calc", "--deadline", "0").Stdout, run(t, "calc").Stdout; with != without {
		t.Errorf("again calc --deadline 0 printed\n%s\nwant what again calc prints without a deadline:\n%s", with, without)
	}
}

func TestCompletion(t *testing.T) {
	shells := []string{"bash", "fish", "powershell", "zsh"}
	for _, shell := range shells {
		r := run(t, "completion", shell)
		if r.Code != 0 || !strings.Contains(r.Stdout, "again") || r.Stderr != "" {
			t.Errorf("again completion %s: exit %d, stderr %q, %d bytes of script; want 0 and a script for again", shell, r.Code, r.Stderr, len(r.Stdout))
		}
	}
	// Every shell cobra offers is one of these, and the root help names
	// them all.
	var offered []string
	for _, path := range commandPaths(t) {
		if len(path) == 2 && path[0] == "completion" {
			offered = append(offered, path[1])
		}
	}
	if !slices.Equal(offered, shells) {
		t.Errorf("again completion offers %q, want %q", offered, shells)
	}
	if want := "again completion bash|fish|powershell|zsh (see 'again completion --help')"; !strings.Contains(run(t, "--help").Stdout, want) {
		t.Errorf("again --help does not say %q", want)
	}
	// Without a shell, or with one it does not know, it is a usage error.
	wantUsageError(t, run(t, "completion"), "again completion: missing the shell; want one of bash, fish, powershell, zsh (see 'again completion --help')")
	wantUsageError(t, run(t, "completion", "tcsh"), `again completion: unknown shell "tcsh"; want one of bash, fish, powershell, zsh (see 'again completion --help')`)
	wantUsageError(t, run(t, "completion", "bash", "extra"), `again completion bash: unexpected argument "extra"; bash takes only flags (see 'again completion bash --help')`)
}

// TestHelpOfCommandsWithSubcommands: the help of sim and completion, which
// only run their subcommands, still exits 0, and shows only the usage with
// a subcommand.
func TestHelpOfCommandsWithSubcommands(t *testing.T) {
	for _, args := range [][]string{{"sim", "--help"}, {"sim", "-h"}, {"help", "sim"}, {"completion", "--help"}, {"help", "completion"}} {
		r := run(t, args...)
		path := "again " + strings.Join(slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "help" || strings.HasPrefix(a, "-") }), " ")
		want := "Usage:\n  " + path + " [command]\n"
		if r.Code != 0 || r.Stderr != "" || !strings.Contains(r.Stdout, want) || !strings.Contains(r.Stdout, "Available Commands:") {
			t.Errorf("again %s: exit %d, stderr %q, stdout:\n%s\nwant exit 0 and the help, with the usage %q alone", strings.Join(args, " "), r.Code, r.Stderr, r.Stdout, want)
		}
	}
}

func TestVersionAndHelp(t *testing.T) {
	r := run(t, "--version")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "again ") || r.Stderr != "" {
		t.Errorf("again --version: exit %d, stdout %q, stderr %q; want exit 0 and \"again <version>\"", r.Code, r.Stdout, r.Stderr)
	}
	// -v has one meaning, --verbose (fetch's, as curl's): not the version.
	wantUsageError(t, run(t, "-v"), "again: unknown shorthand flag: 'v' in -v; the version is --version, and -v is --verbose, in fetch (see 'again --help')")
	wantUsageError(t, run(t, "calc", "-v"), "again calc: unknown shorthand flag: 'v' in -v (see 'again calc --help')")
	root := newRoot(subcommands(&cmdutil.Env{})...)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.InitDefaultVersionFlag() // as cobra does before parsing
		if f := c.Flags().ShorthandLookup("v"); f != nil && f.Name != "verbose" {
			t.Errorf("%s: -v is --%s, want --verbose or nothing", c.CommandPath(), f.Name)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for _, args := range [][]string{nil, {"--help"}, {"help"}} {
		r := run(t, args...)
		if r.Code != 0 || !strings.Contains(r.Stdout, "calc") || !strings.Contains(r.Stdout, "Exit status") || !strings.Contains(r.Stdout, "Examples:") {
			t.Errorf("again %v: exit %d, stdout %q; want the root help listing calc, the exit statuses and examples", args, r.Code, r.Stdout)
		}
	}
	r = run(t, "calc", "--help")
	for _, want := range []string{"Examples:", "again calc --initial 500ms --multiplier 2 --max 30s --retries 8", "--initial duration", "(default 500ms)", "--format format"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("again calc --help lacks %q:\n%s", want, r.Stdout)
		}
	}
}

// TestExitErrors checks how a subcommand's returned error becomes the exit
// status and the one stderr line.
func TestExitErrors(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantCode   int
		wantStderr string
	}{
		{"nil", nil, 0, ""},
		{"plain error", errors.New("connection refused"), cmdutil.ExitFailure, "again test: connection refused\n"},
		{"wrapped plain error", fmt.Errorf("fetch: %w", errors.New("boom")), cmdutil.ExitFailure, "again test: fetch: boom\n"},
		{"child status, silent", cmdutil.Exit(42, nil), 42, ""},
		{"status with message", cmdutil.Exit(3, errors.New("child killed by signal")), 3, "again test: child killed by signal\n"},
		{"usage", cmdutil.BadValue("--url", "ftp://x", "an http or https URL"), cmdutil.ExitUsage, "again test: --url \"ftp://x\": want an http or https URL\n"},
		{"wrapped usage", fmt.Errorf("context: %w", cmdutil.Usagef("bad")), cmdutil.ExitUsage, "again test: context: bad\n"},
		{"multi-line message", errors.New("first\nsecond"), cmdutil.ExitFailure, "again test: first; second\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			env := &cmdutil.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}
			sub := &cobra.Command{Use: "test", Args: cmdutil.NoArgs, RunE: func(*cobra.Command, []string) error { return tt.err }}
			code := cmdutil.Execute(t.Context(), newRoot(sub), []string{"test"}, env)
			if code != tt.wantCode || errOut.String() != tt.wantStderr || out.Len() != 0 {
				t.Errorf("exit %d, stderr %q, stdout %q; want exit %d, stderr %q, no stdout", code, errOut.String(), out.String(), tt.wantCode, tt.wantStderr)
			}
		})
	}
}

// TestContextReachesSubcommand checks that Run hands its context to the
// subcommand, so a cancelled context (a signal) reaches it.
func TestContextReachesSubcommand(t *testing.T) {
	ctx, cancel := context.WithCancelCause(t.Context())
	cause := errors.New("test cause")
	cancel(cause)
	var got error
	sub := &cobra.Command{Use: "test", RunE: func(cmd *cobra.Command, _ []string) error {
		got = context.Cause(cmd.Context())
		return nil
	}}
	env := &cmdutil.Env{Stdin: strings.NewReader(""), Stdout: new(bytes.Buffer), Stderr: new(bytes.Buffer)}
	if code := cmdutil.Execute(ctx, newRoot(sub), []string{"test"}, env); code != 0 || got != cause {
		t.Errorf("exit %d, subcommand saw cause %v; want 0 and %v", code, got, cause)
	}
}

// TestHelpConsistent keeps the subcommands' help alike: each has examples,
// and a policy flag reads the same, with the same default, wherever it
// appears.
func TestHelpConsistent(t *testing.T) {
	shared := []string{"--initial", "--multiplier", "--max", "--retries", "--jitter", "--deadline"}
	first := map[string]string{} // flag -> its help line in calc
	for _, sub := range []string{"calc", "run", "fetch", "web"} {
		r := run(t, sub, "--help")
		if r.Code != 0 || !strings.Contains(r.Stdout, "\nExamples:\n") {
			t.Errorf("again %s --help: exit %d, no Examples section:\n%s", sub, r.Code, r.Stdout)
		}
		if sub == "web" {
			continue // web takes no policy
		}
		for _, flag := range shared {
			line := ""
			for l := range strings.Lines(r.Stdout) {
				if f := strings.Fields(l); len(f) > 0 && f[0] == flag {
					line = strings.Join(f, " ")
				}
			}
			if line == "" {
				t.Errorf("again %s --help lacks %s", sub, flag)
				continue
			}
			if want, ok := first[flag]; !ok {
				first[flag] = line
			} else if line != want {
				t.Errorf("again %s --help: %q, want %q as in calc", sub, line, want)
			}
		}
	}
}

// commandPaths returns the arguments that name every command of again,
// the root's (nil) first, cobra's completion commands included.
func commandPaths(t *testing.T) [][]string {
	t.Helper()
	root := newRoot(subcommands(&cmdutil.Env{})...)
	completion.Setup(root)
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() || sub.Name() == "help" {
				walk(sub, append(path[:len(path):len(path)], sub.Name()))
			}
		}
	}
	walk(root, nil)
	if len(paths) < 15 {
		t.Fatalf("found only %d commands: %q", len(paths), paths)
	}
	return paths
}

// TestHelpDefaultsOnce: pflag appends "(default X)" to the usage of a flag
// whose default is not empty, so a usage that says its default itself must
// leave pflag's out; no line of any help may say it twice.
func TestHelpDefaultsOnce(t *testing.T) {
	for _, path := range commandPaths(t) {
		r := run(t, append(path, "--help")...)
		if r.Code != 0 || r.Stdout == "" {
			t.Errorf("again %s --help: exit %d, stderr %q", strings.Join(path, " "), r.Code, r.Stderr)
		}
		for line := range strings.Lines(r.Stdout) {
			if strings.Count(line, "(default") > 1 {
				t.Errorf("again %s --help gives a default twice: %s", strings.Join(path, " "), strings.TrimSpace(line))
			}
		}
	}
}

// The test binary is also the again program, and run's child command, in
// the processes that the tests start (see cmdtest.Main).
func init() { cmdtest.Main(RunEnv) }

// One name per idea across the commands; the old spellings still work,
// each with one warning: run's and fetch's --timeout is --attempt-timeout,
// wait's --timeout (wait4x's overall limit) is --deadline, web's --addr is
// --listen. The warning comes before what the command then says.
func TestOldSpellings(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--timeout", "5", "--", "true"}, "again run: --timeout is now --attempt-timeout; it still works, but write --attempt-timeout\nagain run: --attempt-timeout \"5\": want a duration with a unit"},
		{[]string{"fetch", "--timeout", "5", "http://127.0.0.1:1/"}, "again fetch: --timeout is now --attempt-timeout; it still works, but write --attempt-timeout\nagain fetch: --attempt-timeout \"5\": want a duration with a unit"},
		{[]string{"wait", "--timeout", "5", "db:1"}, "again wait: --timeout is now --deadline; it still works, but write --deadline\nagain wait: --deadline \"5\": want a duration with a unit"},
		{[]string{"web", "--addr", "x:y"}, "again web: --addr is now --listen; it still works, but write --listen\nagain web: --listen \"x:y\""},
		// sim occ's list of algorithms is --strategy, as in every model.
		{[]string{"sim", "occ", "--algorithms", "full,fast"}, "again sim occ: --algorithms is now --strategy; it still works, but write --strategy\nagain sim occ: --strategy \"full,fast\": want"},
	} {
		r := run(t, tt.args...)
		if r.Code != cmdutil.ExitUsage || !strings.HasPrefix(r.Stderr, tt.want) {
			t.Errorf("again %q: exit %d, stderr %q; want 2 and a start %q", tt.args, r.Code, r.Stderr, tt.want)
		}
	}
}

// -q/--quiet in every command with progress lines: fetch's silences its
// retry lines, as run's does, and leaves the final line.
func TestQuietEverywhere(t *testing.T) {
	for _, args := range [][]string{
		{"fetch", "-q", "--initial", "0", "--retries", "2", "http://127.0.0.1:1/"},
		{"run", "-q", "--initial", "0", "--retries", "2", "--", "false"},
	} {
		r := run(t, args...)
		if r.Code != 1 || strings.Contains(r.Stderr, "attempt 1/3 failed") || strings.Count(r.Stderr, "\n") > 1 {
			t.Errorf("again %q: exit %d, stderr %q; want 1 and at most the final line", args, r.Code, r.Stderr)
		}
	}
}
