// Package wait is `again wait`: it waits until databases, brokers and
// services are ready.
//
// It waits until they accept real requests, all at once, with jittered
// backoff and a deadline, then optionally replaces itself with a command.
// The checks and the loop are internal/ready; this package is their command
// line.
package wait

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"

	"github.com/again-go/again/backoff"
	calcmodel "github.com/again-go/again/cmd/again/internal/calc"
	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/ready"
	"github.com/spf13/cobra"
)

// ExitDeadline is the exit status when the --deadline passes before every
// target is ready, as GNU timeout exits: every command's for its deadline.
const ExitDeadline = cmdutil.ExitDeadline

// Exit statuses of a COMMAND that cannot be run, as shells use them.
const (
	ExitCannotExecute = 126
	ExitNotFound      = 127
)

// NewCmd returns `again wait`: its flags, TARGETs and COMMAND become an
// Options, which waitRun validates and runs.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "wait [flags] TARGET... [-- COMMAND [ARG...]]",
		Short: "Wait until databases, brokers and services are ready, then run a command",
		Long: `wait waits until databases, brokers and services accept real requests, all at
once, then exits 0 or runs COMMAND in its place. Guide: docs/cli.md (wait) and
docs/startup.md.`,
		Example: `  # A container's entrypoint: wait for the database and the cache, then run the app.
  again wait postgres://app:$PGPASSWORD@db:5432/app redis://cache:6379 -- ./app

  # Until the migrations have created their table, for up to 5 minutes.
  again wait --deadline 5m --table schema_migrations postgres://app:pw@db/app

  # A health endpoint that answers 200 or 204 with "ok" in the body.
  again wait --expect-status 200,204 --expect-body '"status": *"ok"' http://api:8080/healthz

  # Until the old server has freed its port.
  again wait --invert localhost:8080

  # Machine-readable results.
  again wait --format json kafka://k1:9092,k2:9092 nats://nats:4222`,
		Args: func(cmd *cobra.Command, args []string) error {
			if n := cmd.ArgsLenAtDash(); n == 0 || len(args) == 0 {
				return cmdutil.Usagef("missing the TARGET to wait for; usage: again wait [flags] TARGET... [-- COMMAND [ARG...]] (see 'again wait --help')")
			}
			if n := cmd.ArgsLenAtDash(); n >= 0 && n == len(args) {
				return cmdutil.Usagef("missing the COMMAND after --; usage: again wait [flags] TARGET... [-- COMMAND [ARG...]]")
			}
			return nil
		},
	}
	opts := newOptions(env, cmd)
	// wait4x calls the overall limit --timeout; here it is --deadline, as
	// in every command, and --attempt-timeout is the limit on each check.
	cmdutil.Alias(cmd, "timeout", "deadline")
	// A response's checks say expect, as wait4x's do: a bare --header
	// would read as fetch's -H/--header, a header to send.
	cmdutil.Alias(cmd, "status", "expect-status")
	cmdutil.Alias(cmd, "body", "expect-body")
	cmdutil.Alias(cmd, "header", "expect-header")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		o := *opts
		o.Targets, o.Command = args, nil
		if n := cmd.ArgsLenAtDash(); n >= 0 {
			o.Targets, o.Command = args[:n], args[n:]
		}
		return waitRun(cmd.Context(), &o)
	}
	return cmd
}

// newOptions registers wait's flags on fs and returns the Options that
// they fill in, with waiting's defaults and the system's exec.
func newOptions(env *cmdutil.Env, cmd *cobra.Command) *Options {
	fs := cmd.Flags()
	pf := cmdutil.AddPolicyFlags(fs)
	// Waiting's defaults, in the flags' help too.
	p := ready.DefaultPolicy()
	for field, value := range map[string]string{
		calcmodel.FieldInitial:  calcmodel.Short(p.Initial),
		calcmodel.FieldMax:      calcmodel.Short(p.Max),
		calcmodel.FieldDeadline: "1m", // ready.DefaultDeadline
	} {
		pf.Set(field, value)
		fs.Lookup(field).DefValue = value
	}
	fs.Lookup(calcmodel.FieldDeadline).Usage = "deadline for the whole wait; the last check starts up to " + backoff.DeadlineReserve.String() + " before it, and the wait ends with exit 124"
	fs.Lookup(calcmodel.FieldRetries).Usage = "retries after the first attempt, 0 to 100000 (default: until the --deadline)"
	fs.Lookup(calcmodel.FieldRetries).DefValue = ""
	opts := &Options{Env: env, Policy: pf, AttemptTimeout: calcmodel.Short(ready.DefaultAttemptTimeout), Format: "text", Exec: execCommand}
	fs.Var(cmdutil.Text(&opts.AttemptTimeout, "duration"), "attempt-timeout", "limit on each check; 0 for none, each bounded by the --deadline alone")
	fs.Lookup("attempt-timeout").DefValue = opts.AttemptTimeout
	fs.BoolVar(&opts.Invert, "invert", false, "wait until each target is not reachable (a port freed, a service stopped)")
	fs.BoolVarP(&opts.Quiet, "quiet", "q", false, "print no line per ready target")
	cmdutil.AddFormat(cmd, &opts.Format, cmdutil.FormatText, cmdutil.FormatJSON)
	fs.Var(cmdutil.Text(&opts.Status, "list"), "expect-status", "http(s): the response statuses that count as ready, such as 200,204 or 200-399 (default 200-299)")
	fs.Var(cmdutil.Text(&opts.Body, "regexp"), "expect-body", "http(s): a regexp (RE2) that the response body must match")
	fs.Var(cmdutil.Text(&opts.Header, "name[=regexp]"), "expect-header", "http(s): a response header that must be present, and match the regexp if given")
	fs.Var(cmdutil.Text(&opts.Table, "name"), "table", "postgres, mysql: a table that must exist")
	fs.Var(cmdutil.Text(&opts.Key, "key"), "key", "redis: a key that must exist")
	fs.Var(cmdutil.Text(&opts.CACert, "file"), "cacert", cmdutil.CACertHelp+", for every target that verifies a certificate")
	return opts
}

// Options is what one `again wait` was asked: its flags as given, the
// TARGETs and the COMMAND.
type Options struct {
	Env            *cmdutil.Env
	Policy         *cmdutil.PolicyFlags // the policy flags, --deadline a time limit
	AttemptTimeout string               // --attempt-timeout
	Invert         bool                 // --invert
	Quiet          bool                 // -q, --quiet
	Format         string               // --format: text or json
	Status         string               // --expect-status, "" for 2xx
	Body           string               // --expect-body, "" for none
	Header         string               // --expect-header NAME[=REGEXP], "" for none
	Table          string               // --table, "" for none
	Key            string               // --key, "" for none
	CACert         string               // --cacert, "" for the system's roots
	Targets        []string             // not empty
	Command        []string             // COMMAND and its ARGs, nil for none

	// Exec replaces the process with the command at path (syscall.Exec on
	// Unix; elsewhere it runs it and exits with its status). It returns
	// only on failure. Tests replace it.
	Exec func(path string, argv []string, env []string) error
	// Terminal, if not nil, reports the width of the terminal that the
	// live lines go to, and false when Stderr is not one. Nil asks the
	// system about Env.Stderr. Tests replace it.
	Terminal func(w io.Writer) (int, bool)
}

// waitRun validates opts, waits for every target and then execs the
// command, if any.
func waitRun(ctx context.Context, opts *Options) error {
	env := opts.Env
	in, err := opts.Policy.ParseTimed()
	if err != nil {
		return err
	}
	if in.Deadline == 0 {
		// 0 is none in every other command; a wait is never unbounded
		// (the library has no retry loop without a limit).
		return cmdutil.BadValue("--deadline", opts.Policy.Value(calcmodel.FieldDeadline), "a duration above 0: a wait is never unbounded; give a long one, such as 24h")
	}
	cfg := ready.Config{Policy: in.Policy, Deadline: in.Deadline, Invert: opts.Invert}
	// 0 is none: each check is bounded only by what is left of the
	// deadline.
	if cfg.AttemptTimeout, err = cmdutil.DurationFlag("attempt-timeout", opts.AttemptTimeout, false); err != nil {
		return err
	}
	if opts.Format != "text" && opts.Format != "json" {
		return cmdutil.BadValue("--format", opts.Format, "one of text or json")
	}
	checks, err := parseOptions(opts)
	if err != nil {
		return err
	}
	targets := make([]ready.Checker, 0, len(opts.Targets))
	schemes := map[string]bool{}
	for _, s := range opts.Targets {
		t, err := ready.Parse(s, checks)
		if err != nil {
			return cmdutil.Usage(strings.TrimPrefix(err.Error(), "ready: "))
		}
		targets = append(targets, t)
		schemes[t.Scheme()] = true
	}
	if err := checkFlagSchemes(opts, schemes); err != nil {
		return err
	}
	var path string
	if len(opts.Command) > 0 {
		// Before the wait: a COMMAND that does not exist is known now.
		if path, err = exec.LookPath(opts.Command[0]); err != nil {
			code := ExitNotFound
			if errors.Is(err, os.ErrPermission) {
				code = ExitCannotExecute
			}
			return cmdutil.Exit(code, err)
		}
	}

	var live *ready.Live
	if !opts.Quiet {
		terminal := opts.Terminal
		if terminal == nil {
			terminal = terminalWidth
		}
		if width, ok := terminal(env.Stderr); ok {
			names := make([]string, len(targets))
			for i, t := range targets {
				names[i] = t.String()
			}
			live = ready.NewLive(env.Stderr, width, names)
			cfg.OnAttempt = live.Update
		} else {
			// Each ready target's line as soon as it is ready.
			var mu sync.Mutex
			cfg.OnResult = func(r ready.Result) {
				if r.Ready {
					mu.Lock()
					defer mu.Unlock()
					_ = ready.WriteLines(env.Stderr, []ready.Result{r})
				}
			}
		}
	}
	results, err := ready.Wait(ctx, targets, cfg)
	if err != nil {
		return err
	}
	if err := report(env, opts, live, results); err != nil {
		return err
	}
	if sig := cmdutil.SignalCause(ctx); sig != nil {
		return cmdutil.Stopped(sig, "")
	}
	code := cmdutil.ExitOK
	for _, r := range results {
		switch {
		case r.Permanent:
			code = cmdutil.ExitFailure
		case !r.Ready && code == cmdutil.ExitOK:
			code = ExitDeadline
		}
	}
	if code != cmdutil.ExitOK {
		return cmdutil.Exit(code, nil) // the lines are written
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if path == "" {
		return nil
	}
	if err := opts.Exec(path, opts.Command, os.Environ()); err != nil {
		var ee *cmdutil.ExitError
		if errors.As(err, &ee) {
			return err // the command ran, elsewhere than Unix: its status
		}
		return cmdutil.Exit(ExitCannotExecute, err)
	}
	return nil
}

// report writes the results: the final live lines, or a line per target
// that is not ready (those ready were written as they became ready), on
// stderr; then with --format json one object per target on stdout.
func report(env *cmdutil.Env, opts *Options, live *ready.Live, results []ready.Result) error {
	if live != nil {
		live.Finish(results)
	} else {
		permanent := false
		for _, r := range results {
			permanent = permanent || r.Permanent
		}
		var lines []ready.Result
		for _, r := range results {
			switch {
			case r.Ready:
				// Written when it was ready (none with -q).
			case r.Stopped && permanent:
				// Not ready because another target failed: that one's line says why.
			default:
				lines = append(lines, r)
			}
		}
		if err := ready.WriteLines(env.Stderr, lines); err != nil {
			return err
		}
	}
	if opts.Format == "json" {
		return ready.WriteJSON(env.Stdout, results)
	}
	return nil
}

// parseOptions reads the extra checks' flags.
func parseOptions(opts *Options) (*ready.Options, error) {
	o := &ready.Options{Table: opts.Table, Key: opts.Key}
	var err error
	if o.RootCAs, err = cmdutil.CACerts(opts.CACert); err != nil {
		return nil, err
	}
	if opts.Status != "" {
		if o.Status, err = ready.ParseStatus(opts.Status); err != nil {
			return nil, cmdutil.BadValue("--expect-status", opts.Status, ready.StatusSyntax)
		}
	}
	if opts.Body != "" {
		if o.Body, err = regexp.Compile(opts.Body); err != nil {
			return nil, cmdutil.BadValue("--expect-body", opts.Body, "a regexp (RE2 syntax): %v", err)
		}
	}
	if opts.Header != "" {
		name, value, hasValue := strings.Cut(opts.Header, "=")
		o.Header = strings.TrimSpace(name)
		if o.Header == "" {
			return nil, cmdutil.BadValue("--expect-header", opts.Header, "name or name=regexp")
		}
		if hasValue {
			if o.HeaderValue, err = regexp.Compile(value); err != nil {
				return nil, cmdutil.BadValue("--expect-header", opts.Header, "name=regexp, the regexp in RE2 syntax: %v", err)
			}
		}
	}
	return o, nil
}

// checkFlagSchemes refuses a check's flag that no TARGET would use: a
// --table with only HTTP targets is a mistake, not a check that passes.
func checkFlagSchemes(opts *Options, schemes map[string]bool) error {
	for _, f := range []struct {
		name, value string
		schemes     []string
	}{
		{"expect-status", opts.Status, []string{"http", "https"}},
		{"expect-body", opts.Body, []string{"http", "https"}},
		{"expect-header", opts.Header, []string{"http", "https"}},
		{"table", opts.Table, []string{"postgres", "mysql"}},
		{"key", opts.Key, []string{"redis", "rediss"}},
	} {
		if f.value == "" {
			continue
		}
		used := false
		for _, s := range f.schemes {
			used = used || schemes[s]
		}
		if !used {
			return cmdutil.Usagef("--%s applies to %s targets, and no TARGET is one", f.name, strings.Join(f.schemes, " or "))
		}
	}
	return nil
}
