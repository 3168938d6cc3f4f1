// Package root is the again command line: the root command, its help and
// version.
//
// It has one line per command, registering the packages under internal/cmd.
// The program's main is
//
//	os.Exit(root.Main())
//
// Tests call Run or RunEnv, with an Env whose OpenBudget replaces the
// Redis-backed budget (fleet.OpenBudget) behind run's and fetch's
// --budget. The conventions every command follows are in cmdutil's
// package doc.
package root

import (
	"context"
	"errors"
	"io"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/again-go/again/cmd/again/internal/cmd/calc"
	"github.com/again-go/again/cmd/again/internal/cmd/completion"
	"github.com/again-go/again/cmd/again/internal/cmd/fetch"
	"github.com/again-go/again/cmd/again/internal/cmd/proxy"
	runcmd "github.com/again-go/again/cmd/again/internal/cmd/run"
	"github.com/again-go/again/cmd/again/internal/cmd/sim"
	"github.com/again-go/again/cmd/again/internal/cmd/wait"
	"github.com/again-go/again/cmd/again/internal/cmd/web"
	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// subcommands returns every `again` subcommand. To add one, write its
// package under internal/cmd with a constructor `NewCmd(env *cmdutil.Env)
// *cobra.Command`, and add one line here.
func subcommands(env *cmdutil.Env) []*cobra.Command {
	return []*cobra.Command{
		calc.NewCmd(env),
		fetch.NewCmd(env),
		proxy.NewCmd(env),
		runcmd.NewCmd(env),
		sim.NewCmd(env),
		wait.NewCmd(env),
		web.NewCmd(env),
	}
}

// Run runs the again command line args (without the program name) and
// returns the process exit status: 0 on success, cmdutil.ExitUsage (2) for a usage
// error, cmdutil.ExitFailure (1) or the status a subcommand chose with cmdutil.ExitError.
// Errors are printed as one line on stderr, "again <sub>: <message>"; a
// usage error prints nothing on stdout. ctx reaches every subcommand
// (cmd.Context()); see cmdutil.NotifyContext for signals.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return RunEnv(ctx, args, cmdutil.Env{Stdin: stdin, Stdout: stdout, Stderr: stderr})
}

// RunEnv is Run with a cmdutil.Env: the streams and the pieces tests replace,
// such as cmdutil.Env.OpenBudget.
func RunEnv(ctx context.Context, args []string, env cmdutil.Env) int {
	return execute(ctx, newRoot(subcommands(&env)...), args, &env)
}

// execute runs root, with cobra's completion command added, as the again
// command line; tests call it with other commands.
func execute(ctx context.Context, root *cobra.Command, args []string, env *cmdutil.Env) int {
	cmdutil.SetStreams(root, env)
	completion.Setup(root) // after SetStreams: cobra's scripts write where root's output was then
	return cmdutil.Execute(ctx, root, args, env)
}

// newRoot returns the root command with the given subcommands.
func newRoot(subs ...*cobra.Command) *cobra.Command {
	root := &cobra.Command{
		Use:   "again",
		Short: "Retry with exponential backoff and jitter, and plan the schedule",
		Long: `again retries failed operations with exponential backoff and jitter, and
computes what a retry schedule costs before you ship it.

Durations are Go syntax (500ms, 1.5s, 2m), with a unit in every flag of
every command: a bare 30 would be 30 s to timeout and curl but 30 ms to the
calculator page, so it is refused with both readings; 0 needs none, and
means none: no timeout, no deadline, no cap.
Exit status: 0 success, 1 failure, 2 usage error, 124 the --deadline,
128+N signal N; docs/cli.md (Exit statuses) has the table.

Install with: go install github.com/again-go/again/cmd/again@latest`,
		Example: `  # What does a schedule cost, and does it fit a one-minute deadline?
  again calc --initial 500ms --max 30s --retries 8 --deadline 1m

  # Retry a command while it fails, for at most a minute.
  again run --retries 5 --deadline 1m -- pg_isready -h db

  # Send an HTTP request, retrying safely.
  again fetch --retries 5 https://api.example.com/items

  # The same calculator in a browser page.
  again web --open

  # Why jitter and budgets: request storms, simulated on this library's code.
  again sim outage --svg outage.svg`,
		Version:       version(),
		SilenceErrors: true,
		SilenceUsage:  true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cmdutil.Usagef("unknown command %q; want one of %s (see 'again --help')", args[0], strings.Join(cmdutil.CommandNames(cmd), ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetHelpCommand(newHelpCmd())
	root.SetVersionTemplate("again {{.Version}}\n")
	// --version without cobra's -v: -v is --verbose (fetch's, as curl's;
	// kubectl's -v is verbosity too), one meaning in every command.
	root.Flags().Bool("version", false, "version for again")
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(subs...)
	return root
}

// flagError is cmdutil.FlagError, but for again -v, which once printed the
// version: it says where the version and -v are now.
func flagError(cmd *cobra.Command, err error) error {
	var ne *pflag.NotExistError
	if cmd == cmd.Root() && errors.As(err, &ne) && ne.GetSpecifiedName() == "v" && ne.GetSpecifiedShortnames() != "" {
		return cmdutil.Usagef("unknown shorthand flag: 'v' in -%s; the version is --version, and -v is --verbose, in fetch (see 'again --help')", ne.GetSpecifiedShortnames())
	}
	return cmdutil.FlagError(cmd, err)
}

// newHelpCmd returns `again help [command]`: cobra's own prints "Unknown
// help topic" and exits 0 for a command that does not exist, which a
// script cannot tell from success.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "help prints the help of a command: again help run is again run --help.",
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			target, rest, err := root.Find(args)
			if err != nil || target == nil || len(rest) > 0 || (len(args) > 0 && target == root) {
				return cmdutil.Usagef("unknown help topic %q; want one of %s (see 'again --help')", strings.Join(args, " "), strings.Join(cmdutil.CommandNames(root), ", "))
			}
			return target.Help()
		},
	}
}

// version returns what `again --version` prints after "again", from the
// build information of the running binary (see versionOf).
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return versionOf(info)
}

// versionOf returns the version info describes, as `go version -m` shows
// its pieces: the module version of a binary installed from the module
// proxy ("v1.2.0" for `go install ...@v1.2.0`); for a build from a clone,
// the tag it was built at or "devel", then the short VCS revision with
// "+dirty" when the tree had changes, and the commit's time:
// "devel 13878521efc8+dirty (2026-12-06T13:11:43Z)". A clone's pseudo-version
// (v0.0.0-20261206131143-13878521efc8), which Go derives from the same
// revision and time, is shown as "devel": its pieces follow in a form a
// person reads. A build that recorded no VCS information (go build
// -buildvcs=false, or a linked git worktree, which Go does not recognise)
// is "devel" alone.
func versionOf(info *debug.BuildInfo) string {
	v := strings.TrimSuffix(info.Main.Version, "+dirty")
	if v == "" || v == "(devel)" || pseudoVersion.MatchString(v) {
		v = "devel"
	}
	var rev, at, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return v
	}
	v += " " + rev[:min(len(rev), 12)] + dirty
	if at != "" {
		v += " (" + at + ")"
	}
	return v
}

// pseudoVersion matches the end of a Go pseudo-version, a timestamp and a
// 12-digit revision ("v0.0.0-20261206131143-13878521efc8", also after a
// pre-release such as "-0."); it is never modified.
var pseudoVersion = regexp.MustCompile(`[-.]\d{14}-[0-9a-f]{12}$`)

// Main is the again program: it runs the command line of the process with
// its standard streams, signals taken over by cmdutil.NotifyContext, and returns
// the exit status. It also routes the standard logger into again's own
// lines on stderr ("again: ...", printable), because net/http's Transport,
// which has no logger of its own, writes there (such as "Unsolicited
// response received on idle HTTP channel"). That logger belongs to the
// process, so only Main changes it, and puts it back before it returns;
// Run, which tests call side by side, leaves it alone.
func Main() int {
	return runMain(cmdutil.Env{})
}

// runMain is Main with env's optional pieces; it sets the streams. Tests
// that run the test binary as the again program call it with their own.
func runMain(env cmdutil.Env) int {
	return cmdutil.RunProcess(env, RunEnv)
}
