package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Execute runs root, the again command with its subcommands, on args
// (without the program name) with env's streams, and returns the exit
// status: ExitOK, ExitUsage for a usage error, ExitFailure or the status a
// command chose with an ExitError. An error is printed as one line on
// env.Stderr, "again <sub>: <message>", made printable by Message. ctx
// reaches every command (cmd.Context()).
//
// It marks every RunE in the tree (see MarkErrors), so a command returns
// plain errors; root should silence cobra's own printing (SilenceErrors,
// SilenceUsage) and have FlagError as its flag error function.
func Execute(ctx context.Context, root *cobra.Command, args []string, env *Env) int {
	SetStreams(root, env)
	root.SetArgs(joinOptionalNumbers(root, args))
	MarkErrors(root)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	code, msg := ExitCode(err)
	if msg != "" {
		if cmd == nil {
			cmd = root
		}
		// One line, whatever the message: scripts read the last line;
		// with one prefix, and nothing a terminal would act on.
		msg = Message(msg)
		fmt.Fprintf(env.Stderr, "%s: %s\n", cmd.CommandPath(), msg)
	}
	return code
}

// SetStreams makes env's streams those of root and of every command under
// it. Execute calls it; a caller sets them earlier for what reads them
// before the command line runs, such as cobra's completion command.
func SetStreams(root *cobra.Command, env *Env) {
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
}

// RunProcess is the again program around run, which runs a command line
// (such as root's RunEnv): it runs the command line of the process with
// its standard streams in env, signals taken over by NotifyContext, and
// returns the exit status. It also routes the standard logger into
// again's own lines on stderr (see RouteStdLog), and puts it back before
// it returns: that logger belongs to the process, so only the program
// changes it, never a command line that tests run side by side.
func RunProcess(env Env, run func(ctx context.Context, args []string, env Env) int) int {
	ctx, stop := NotifyContext(context.Background())
	defer stop()
	defer RouteStdLog(os.Stderr)()
	env.Stdin, env.Stdout, env.Stderr = os.Stdin, os.Stdout, os.Stderr
	return run(ctx, os.Args[1:], env)
}

// OnlySubcommands makes the help of cmd, a command that runs only its
// subcommands (its own Run reports a usage error), show only the usage
// "again cmd [command]", not also "again cmd [flags]", which would say
// that the command runs without one.
func OnlySubcommands(cmd *cobra.Command) {
	const runnable = "Usage:{{if .Runnable}}"
	if t := cmd.UsageTemplate(); strings.Contains(t, runnable) {
		cmd.SetUsageTemplate(strings.Replace(t, runnable, "Usage:{{if and .Runnable (not .HasAvailableSubCommands)}}", 1))
	}
}

// CommandNames lists root's subcommands for messages.
func CommandNames(root *cobra.Command) []string {
	var names []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return names
}

// FlagError turns pflag's parse errors (unknown flag, missing value, bad
// syntax) into usage errors that point at the help. A rejected value is
// reworded in the style of every other usage error, naming the flag and what
// it accepts: pflag's own wording ("invalid argument ... strconv.ParseBool:
// ...") speaks of Go, not of the command line.
func FlagError(cmd *cobra.Command, err error) error {
	var ive *pflag.InvalidValueError
	if errors.As(err, &ive) {
		name := ive.GetFlag().Name
		switch {
		case errors.As(err, new(*ValueError)):
			var ve *ValueError
			errors.As(err, &ve)
			return BadValue("--"+name, ive.GetValue(), ve.Want)
		case errors.Is(err, errEmpty):
			return BadValue("--"+name, ive.GetValue(), "a value; leave the flag out for its default (see '%s --help')", cmd.CommandPath())
		}
		if want, ok := typeAccepts[ive.GetFlag().Value.Type()]; ok {
			return BadValue("--"+name, ive.GetValue(), want)
		}
	}
	return Usagef("%v (see '%s --help')", err, cmd.CommandPath())
}

// typeAccepts says what a flag of each of pflag's own types accepts, in
// place of pflag's message, which quotes Go's parser ("strconv.ParseInt:
// parsing ...: invalid syntax"). It is never modified.
var typeAccepts = map[string]string{
	"bool":     "true or false",
	"int":      "a whole number",
	"int64":    "a whole number",
	"uint":     "a whole number of 0 or more",
	"uint64":   "a whole number of 0 or more",
	"float64":  "a number",
	"duration": "a duration with a unit (Go syntax such as 500ms, 1.5s or 2m)",
}

// MarkErrors wraps every RunE in the tree so that a plain error it returns
// becomes an *ExitError with ExitFailure. Any error Run then sees without an
// ExitError comes from cobra's own parsing: a usage error.
func MarkErrors(c *cobra.Command) {
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
		MarkErrors(sub)
	}
}

// NoArgs is a cobra.PositionalArgs for subcommands that take only flags.
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return Usagef("unexpected argument %q; %s takes only flags (see '%s --help')", args[0], cmd.Name(), cmd.CommandPath())
	}
	return nil
}

// RouteStdLog makes the standard logger write again's lines on w
// ("again: ...", printable), and returns what restores it: net/http's
// Transport, which has no logger of its own, writes there (such as
// "Unsolicited response received on idle HTTP channel").
func RouteStdLog(w io.Writer) (restore func()) {
	out, flags, prefix := log.Writer(), log.Flags(), log.Prefix()
	log.SetOutput(LineWriter{W: w, Prefix: "again: "})
	log.SetFlags(0)
	log.SetPrefix("")
	return func() {
		log.SetOutput(out)
		log.SetFlags(flags)
		log.SetPrefix(prefix)
	}
}
