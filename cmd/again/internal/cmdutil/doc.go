// Package cmdutil is what the commands of again share, and nothing that
// knows any of them.
//
// It holds the Env a command reads and writes through, exit and usage
// errors and Execute, which turns them into the exit status and one line;
// the policy, budget and breaker-store flags; signals; the lines again
// prints; atomic files; and the OpenTelemetry set-up.
//
// A command is a package under internal/cmd with a constructor
//
//	func NewCmd(env *cmdutil.Env) *cobra.Command
//
// registered with one line in root's subcommands. The program is
//
//	os.Exit(root.Main())
//
// and tests run a command line in-process with root.RunEnv, or one
// command alone with cmdtest.Execute, giving an Env with buffers and, for
// --budget, an OpenBudget of their own.
//
// # Conventions every command follows
//
//   - It reads and writes only env's streams (Env.Stdin, Env.Stdout,
//     Env.Stderr), never os.Stdout, so that tests run it in-process with
//     buffers, side by side.
//   - Usage errors (bad flag values, unknown flags, stray arguments) exit
//     ExitUsage (2) with exactly one line on stderr, "again <sub>:
//     <message>", and nothing on stdout. Return them with Usagef (or Usage
//     for a message already formed); cobra's and pflag's own parse errors
//     are turned into the same form by FlagError and Execute.
//   - Any other error a command returns exits ExitFailure (1) with the same
//     one-line form; return an *ExitError (Exit) to choose the status, for
//     example a child process's, with or without a message.
//   - Retry policies come from PolicyFlags (--initial, --max, --multiplier,
//     --retries, --jitter, --deadline), validated by internal/calc so that
//     the command line and the web page accept exactly the same input.
//   - The first SIGINT, SIGTERM, SIGHUP or SIGQUIT cancels the context
//     (context.Cause is a *SignalError; see SignalCause); Signals delivers
//     every one to a command that forwards them. A command stopped by
//     signal N exits 128+N with one line, "stopped: received SIGX" (see
//     Stopped).
//
// Nothing in the package is global: each command line builds its commands
// afresh, so concurrent runs (as in parallel tests) share no state.
//
// # Where things are
//
// Dependencies point down only: main, then cmd/root, then one package
// per command, then cmdutil, then the model packages. No command imports
// another, and a test imports only packages below its own.
//
//   - internal/cmd/root: the root command, the help command and the
//     version; registers the commands; Run, RunEnv and Main. Tests that
//     span commands (the help's golden files, the README's examples).
//   - internal/cmd/calc, run (with the child process it runs), fetch, wait,
//     web, sim (all its models), completion: one command each, with its
//     flags, its Options and its tests.
//   - internal/cmdutil: this package; internal/cmdutil/cmdtest: what the
//     commands' tests share.
//   - internal/calc, internal/sim, internal/web, internal/ready: the models
//     (the calculator, the simulator, the page, wait's checks) that the
//     commands present.
package cmdutil
