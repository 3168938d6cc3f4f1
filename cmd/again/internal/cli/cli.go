package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/again-go/again/retry"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Env is what a subcommand may touch of the outside world: the streams Run
// was given, and the optional pieces a build of again adds. Subcommands
// write only here, never to os.Stdout, so that tests run them in-process.
// The zero Env has no streams; Run fills them.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer

	// OpenBudget, if not nil, opens the shared retry budget that run's and
	// fetch's --budget URL names: the budget, what closes it (the command
	// closes it when it ends, which sends what the budget counted but has
	// not sent yet), or an error saying what is wrong with the URL without
	// repeating its password, reported as a usage error. log receives the
	// budget's own lines (such as "Redis cannot be used"). It must not wait
	// for the budget's server: one that does not answer makes the budget
	// decide locally, never fails the command.
	//
	// Nil opens a fleet.Budget, as the installed again does; tests set it
	// to count what the command asks of its budget.
	OpenBudget func(url string, log io.Writer) (retry.Budget, io.Closer, error)

	// KillGrace, if above zero, replaces the 2 s that run gives a command
	// between SIGTERM (or the signal again forwards) and SIGKILL. It is
	// for tests, which shorten or lengthen it; the installed again leaves
	// it zero and has no flag for it.
	KillGrace time.Duration
}

// subcommands returns every `again` subcommand. To add one, write a
// constructor `func newXxxCmd(env *Env) *cobra.Command` in its own file and
// add one line here.
func subcommands(env *Env) []*cobra.Command {
	return []*cobra.Command{
		newCalcCmd(env),
		newFetchCmd(env),
		newRunCmd(env),
		newSimCmd(env),
		newWebCmd(env),
	}
}

// Run runs the again command line args (without the program name) and
// returns the process exit status: 0 on success, ExitUsage (2) for a usage
// error, ExitFailure (1) or the status a subcommand chose with ExitError.
// Errors are printed as one line on stderr, "again <sub>: <message>"; a
// usage error prints nothing on stdout. ctx reaches every subcommand
// (cmd.Context()); see NotifyContext for signals.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return RunEnv(ctx, args, Env{Stdin: stdin, Stdout: stdout, Stderr: stderr})
}

// RunEnv is Run with an Env: the streams and the pieces tests replace,
// such as Env.OpenBudget.
func RunEnv(ctx context.Context, args []string, env Env) int {
	return execute(ctx, newRoot(subcommands(&env)...), args, &env)
}

// execute runs root with args; tests call it with extra commands.
func execute(ctx context.Context, root *cobra.Command, args []string, env *Env) int {
	stdin, stdout, stderr := env.Stdin, env.Stdout, env.Stderr
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	setUpCompletion(root) // after SetOut: cobra's scripts write where it was then
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	code, msg := exitCode(err)
	if msg != "" {
		if cmd == nil {
			cmd = root
		}
		// One line, whatever the message: scripts read the last line;
		// with one prefix, and nothing a terminal would act on.
		msg = message(msg)
		fmt.Fprintf(stderr, "%s: %s\n", cmd.CommandPath(), msg)
	}
	return code
}

// newRoot returns the root command with the given subcommands.
func newRoot(subs ...*cobra.Command) *cobra.Command {
	root := &cobra.Command{
		Use:   "again",
		Short: "Retry with exponential backoff and jitter, and plan the schedule",
		Long: `again retries failed operations with exponential backoff and jitter, and
computes what a retry schedule costs before you ship it.

Durations are Go syntax (500ms, 1.5s, 2m). calc, and the schedule flags
--initial and --max everywhere, also take a bare number of milliseconds;
the time limits of run and fetch (--timeout, --deadline) need a unit.
Exit status: 0 success, 1 failure, 2 usage error (run and fetch say more).

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
				return Usagef("unknown command %q; want one of %s (see 'again --help')", args[0], strings.Join(commandNames(cmd), ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetHelpCommand(newHelpCmd())
	root.SetVersionTemplate("again {{.Version}}\n")
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(subs...)
	markErrors(root)
	return root
}

// setUpCompletion adds cobra's `again completion SHELL`, which prints a
// completion script on root's output as set when it is called, and names
// its shells in root's help. Cobra's own prints its help and exits 0
// without a shell or with one it does not know, which a script cannot tell
// from success: here both are usage errors, as an unknown command is.
func setUpCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	comp, _, err := root.Find([]string{"completion"})
	if err != nil || comp == root || comp.Runnable() {
		return // cobra added none (CompletionOptions.DisableDefaultCmd), or done
	}
	shells := commandNames(comp)
	root.Long += "\nShell completion: again completion " + strings.Join(shells, "|") + " (see 'again completion --help')."
	onlySubcommands(comp)
	for _, shell := range comp.Commands() {
		shell.Args = NoArgs
	}
	markErrors(comp) // cobra adds it after newRoot marked the others
	want := func() string {
		return "want one of " + strings.Join(shells, ", ") + " (see 'again completion --help')"
	}
	comp.Args = func(_ *cobra.Command, args []string) error {
		if len(args) > 0 {
			return Usagef("unknown shell %q; %s", args[0], want())
		}
		return nil
	}
	comp.RunE = func(*cobra.Command, []string) error {
		return Usagef("missing the shell; %s", want())
	}
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
				return Usagef("unknown help topic %q; want one of %s (see 'again --help')", strings.Join(args, " "), strings.Join(commandNames(root), ", "))
			}
			return target.Help()
		},
	}
}

// onlySubcommands makes the help of cmd, a command that runs only its
// subcommands (its own Run reports a usage error), show only the usage
// "again cmd [command]", not also "again cmd [flags]", which would say
// that the command runs without one.
func onlySubcommands(cmd *cobra.Command) {
	const runnable = "Usage:{{if .Runnable}}"
	if t := cmd.UsageTemplate(); strings.Contains(t, runnable) {
		cmd.SetUsageTemplate(strings.Replace(t, runnable, "Usage:{{if and .Runnable (not .HasAvailableSubCommands)}}", 1))
	}
}

// commandNames lists root's subcommands for messages.
func commandNames(root *cobra.Command) []string {
	var names []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return names
}

// flagError turns pflag's parse errors (unknown flag, missing value, bad
// syntax) into usage errors that point at the help. A rejected value is
// reworded in the style of every other usage error, naming the flag and what
// it accepts: pflag's own wording ("invalid argument ... strconv.ParseBool:
// ...") speaks of Go, not of the command line.
func flagError(cmd *cobra.Command, err error) error {
	var ive *pflag.InvalidValueError
	if errors.As(err, &ive) {
		name := ive.GetFlag().Name
		switch {
		case errors.Is(err, errEmpty):
			return Usagef("--%s must not be empty; leave it out for its default (see '%s --help')", name, cmd.CommandPath())
		case ive.GetFlag().Value.Type() == "bool":
			return Usagef("--%s must be true or false, got %q (see '%s --help')", name, ive.GetValue(), cmd.CommandPath())
		}
	}
	return Usagef("%v (see '%s --help')", err, cmd.CommandPath())
}

// markErrors wraps every RunE in the tree so that a plain error it returns
// becomes an *ExitError with ExitFailure. Any error Run then sees without an
// ExitError comes from cobra's own parsing: a usage error.
func markErrors(c *cobra.Command) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			err := run(cmd, args)
			var ee *ExitError
			if err != nil && !errors.As(err, &ee) {
				return &ExitError{Code: ExitFailure, Err: err}
			}
			return err
		}
	}
	for _, sub := range c.Commands() {
		markErrors(sub)
	}
}

// NoArgs is a cobra.PositionalArgs for subcommands that take only flags.
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return Usagef("unexpected argument %q; %s takes only flags (see '%s --help')", args[0], cmd.Name(), cmd.CommandPath())
	}
	return nil
}

// version returns the module version from the build information: a tag
// such as "v1.2.0" for `go install ...@v1.2.0`, otherwise "devel" with the
// VCS revision when the build recorded one.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	v := "devel"
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		v += " " + rev[:min(len(rev), 12)] + dirty
	}
	return v
}

// textFlag is a pflag.Value that keeps the text as given; validation happens
// in internal/calc, shared with the web page, once all flags are known.
type textFlag struct {
	s   *string
	typ string
}

func (f textFlag) String() string { return *f.s }
func (f textFlag) Type() string   { return f.typ }
func (f textFlag) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		// An empty value would read as "use the default": refuse it rather
		// than silently compute something the user did not ask for.
		return errEmpty
	}
	*f.s = s
	return nil
}

// errEmpty is what textFlag.Set rejects; flagError rewords it.
var errEmpty = errors.New("must not be empty")

var _ pflag.Value = textFlag{}

// repeatedFlag is a pflag.Value for a flag given any number of times, such
// as fetch's -H and -d: each value is kept as given, empty ones included
// (an empty -d is an empty body), in order. typ names the value in the help.
type repeatedFlag struct {
	s   *[]string
	typ string
}

func (f repeatedFlag) String() string { return strings.Join(*f.s, ", ") }
func (f repeatedFlag) Type() string   { return f.typ }
func (f repeatedFlag) Set(s string) error {
	*f.s = append(*f.s, s)
	return nil
}

var _ pflag.Value = repeatedFlag{}

// Main is the again program: it runs the command line of the process with
// its standard streams, signals taken over by NotifyContext, and returns
// the exit status. It also routes the standard logger into again's own
// lines on stderr ("again: ...", printable), because net/http's Transport,
// which has no logger of its own, writes there (such as "Unsolicited
// response received on idle HTTP channel"). That logger belongs to the
// process, so only Main changes it, and puts it back before it returns;
// Run, which tests call side by side, leaves it alone.
func Main() int {
	return runMain(Env{})
}

// runMain is Main with env's optional pieces; it sets the streams. Tests
// that run the test binary as the again program call it with their own.
func runMain(env Env) int {
	ctx, stop := NotifyContext(context.Background())
	defer stop()
	defer routeStdLog(os.Stderr)()
	env.Stdin, env.Stdout, env.Stderr = os.Stdin, os.Stdout, os.Stderr
	return RunEnv(ctx, os.Args[1:], env)
}

// routeStdLog makes the standard logger write again's lines on w, and
// returns what restores it.
func routeStdLog(w io.Writer) (restore func()) {
	out, flags, prefix := log.Writer(), log.Flags(), log.Prefix()
	log.SetOutput(lineWriter{w: w, prefix: "again: "})
	log.SetFlags(0)
	log.SetPrefix("")
	return func() {
		log.SetOutput(out)
		log.SetFlags(flags)
		log.SetPrefix(prefix)
	}
}
