// Package cli implements the again command line: the root command, its
// subcommands (calc, run, fetch, web, sim) and their shared conventions. The
// program's main is a few lines around Run:
//
//	ctx, stop := cli.NotifyContext(context.Background())
//	code := cli.Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
//	stop()
//	os.Exit(code)
//
// Tests call RunEnv instead, with an Env whose OpenBudget replaces the
// Redis-backed budget (fleet.OpenBudget) behind run's and fetch's --budget.
//
// # Conventions every subcommand follows
//
//   - A subcommand is a constructor func(env *Env) *cobra.Command registered
//     with one line in subcommands (cli.go). It reads and writes only env's
//     streams, so tests run it in-process with buffers.
//   - Usage errors (bad flag values, unknown flags, stray arguments) exit 2
//     with exactly one line on stderr, "again <sub>: <message>", and nothing
//     on stdout. Return them with Usagef; cobra's and pflag's own parse
//     errors are turned into the same form by Run.
//   - Any other error a subcommand returns exits 1 with the same one-line
//     form; return an *ExitError (Exit) to choose the status, for example a
//     child process's, with or without a message.
//   - Retry policies come from PolicyFlags (--initial, --max, --multiplier,
//     --retries, --jitter, --deadline), validated by internal/calc so that
//     the command line and the web page accept exactly the same input.
//   - The first SIGINT, SIGTERM, SIGHUP or SIGQUIT cancels the context
//     (context.Cause is a *SignalError); Signals delivers every one to a
//     subcommand that forwards them. A subcommand stopped by signal N exits
//     128+N with one line saying so.
//
// Nothing in the package is global: each Run builds its commands afresh, so
// concurrent Runs (as in parallel tests) do not share state.
package cmdutil
