// Package sim is `again sim` and its models (occ, outage, fleet, storm,
// hedge, throttle, limit).
//
// Each model's flags become its model's config and an Options, which its
// run function (occRun, outageRun, ...) runs and writes as a table, CSV,
// JSON or SVG. The simulator itself is internal/sim: a package per model
// (internal/sim/occ, ...) on what they share, internal/sim itself
// (imported as simmodel).
package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/cmd/again/internal/calc"
	"github.com/again-go/again/cmd/again/internal/cmdutil"
	simmodel "github.com/again-go/again/cmd/again/internal/sim"
	"github.com/again-go/again/cmd/again/internal/sim/chart"
	"github.com/again-go/again/cmd/again/internal/sim/fleet"
	"github.com/again-go/again/cmd/again/internal/sim/hedge"
	"github.com/again-go/again/cmd/again/internal/sim/limit"
	"github.com/again-go/again/cmd/again/internal/sim/occ"
	"github.com/again-go/again/cmd/again/internal/sim/outage"
	"github.com/again-go/again/cmd/again/internal/sim/storm"
	"github.com/again-go/again/cmd/again/internal/sim/throttle"
	"github.com/spf13/cobra"
)

// NewCmd returns `again sim`, which runs only its models.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Simulate many clients retrying: request storms, budgets and breakers",
		Long: `sim runs discrete-event simulations of many clients retrying against a shared
dependency, with the library's own code on a virtual clock; each model is a
subcommand. Guide: docs/cli.md (sim).`,
		Example: `  # The AWS post's table: calls and completion time per algorithm.
  again sim occ

  # A 20 s spike: which strategies let the server recover?
  again sim outage --svg outage.svg

  # Retry amplification with 1000 small clients, as JSON.
  again sim fleet --clients 1000 --format json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cmdutil.Usagef("unknown model %q; want one of %s (see 'again sim --help')", args[0], strings.Join(cmdutil.CommandNames(cmd), ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmdutil.Usagef("missing the model; want one of %s (see 'again sim --help')", strings.Join(cmdutil.CommandNames(cmd), ", "))
		},
	}
	cmd.AddCommand(newSimOCCCmd(env), newSimOutageCmd(env), newSimFleetCmd(env), newSimStormCmd(env), newSimHedgeCmd(env), newSimThrottleCmd(env), newSimLimitCmd(env))
	cmdutil.OnlySubcommands(cmd)
	return cmd
}

// Options is what every model of `again sim` is asked besides its own
// parameters (its simmodel config): --seed, --format and --svg, and, for
// the models that take a schedule, the policy flags.
type Options struct {
	Env    *cmdutil.Env
	pf     *cmdutil.PolicyFlags
	format string
	svg    string
}

// addSimFlags registers the shared flags, and the policy flags named in
// policy (calc.FieldInitial, ...) with the calculator's defaults and
// messages.
func addSimFlags(env *cmdutil.Env, cmd *cobra.Command, policy ...string) *Options {
	fs := cmd.Flags()
	f := &Options{Env: env, pf: cmdutil.NewPolicyFlags(fs)}
	usage := map[string][2]string{
		calc.FieldInitial:    {"duration", "delay before the first retry"},
		calc.FieldMultiplier: {"float", "growth factor between delays, a finite number >= 1"},
		calc.FieldMax:        {"duration", "cap on every delay, jitter included; 0 means no cap"},
		calc.FieldRetries:    {"n", "retries after the first attempt, 0 to 100000"},
		calc.FieldJitter:     {"kind", calc.JitterSyntax},
		calc.FieldDeadline:   {"duration", "every client's deadline from the failure (default none); the last attempt starts up to " + backoff.DeadlineReserve.String() + " before it"},
	}
	for _, field := range policy {
		f.pf.Add(fs, field, usage[field][0], usage[field][1])
	}
	f.pf.Add(fs, calc.FieldSeed, "n", "seed of the random streams: the same seed gives the same results")
	cmdutil.AddFormat(cmd, &f.format, cmdutil.FormatText, cmdutil.FormatCSV, cmdutil.FormatJSON, cmdutil.FormatSVG)
	fs.Var(cmdutil.Text(&f.svg, "file"), "svg", "also write a chart to this SVG file")
	return f
}

// parse validates the shared flags.
func (f *Options) parse() (calc.Input, error) {
	in, err := f.pf.Parse()
	if err != nil {
		return in, err
	}
	return in, nil
}

// output writes rows in the chosen format to stdout and, with --svg, the
// chart that svg renders.
func (f *Options) output(rows any, svg func(io.Writer) error) error {
	if f.svg != "" {
		file, err := os.Create(f.svg)
		if err != nil {
			return fmt.Errorf("--svg: %w", err)
		}
		err = svg(file)
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("--svg: %w", err)
		}
	}
	if f.format == "svg" {
		return svg(f.Env.Stdout)
	}
	return writeRows(f.Env.Stdout, f.format, rows)
}

// simRunner returns a simmodel.Runner that runs the independent runs on every
// core. Once ctx is done it skips the runs not yet started; the caller
// checks ctx.Err() afterwards. When stderr is a terminal and the work takes
// more than a second, it keeps a progress line there, erased at the end.
func simRunner(ctx context.Context, env *cmdutil.Env, name string) simmodel.Runner {
	return func(n int, f func(i int)) {
		var next, done atomic.Int64
		stop := make(chan struct{})
		var progress sync.WaitGroup
		if isTerminal(env.Stderr) {
			progress.Go(func() { showProgress(env.Stderr, name, n, &done, stop) })
		}
		var wg sync.WaitGroup
		for range min(runtime.GOMAXPROCS(0), n) {
			wg.Go(func() {
				for {
					i := int(next.Add(1) - 1)
					if i >= n || ctx.Err() != nil {
						return
					}
					f(i)
					done.Add(1)
				}
			})
		}
		wg.Wait()
		close(stop)
		progress.Wait()
	}
}

// showProgress redraws "again sim NAME: 420/9500 runs" on w every tenth of
// a second once a second has passed, until stop is closed; then it erases
// the line if it drew one.
func showProgress(w io.Writer, name string, n int, done *atomic.Int64, stop <-chan struct{}) {
	start := time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	drawn := false
	for {
		select {
		case <-stop:
			if drawn {
				fmt.Fprint(w, "\r\033[K")
			}
			return
		case <-tick.C:
			if time.Since(start) < time.Second {
				continue
			}
			fmt.Fprintf(w, "\r\033[Kagain sim %s: %d/%d runs", name, done.Load(), n)
			drawn = true
		}
	}
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// simUsage turns a model's configuration error into a usage error naming
// the flags. The command line checks each flag before running a model; what
// is left are limits on combinations, such as storm.Run's number of buckets or
// its clients × attempts, stated in flags.
func simUsage(err error) error {
	var fe *simmodel.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	flags := map[string]string{
		"Bucket": "--bucket", "Clients": "--clients", "Runs": "--runs", "Strategies": "--strategy", "Failures": "--failure", "Algorithms": "--strategy",
		storm.FieldAttempts:    stormAttempts,
		occ.FieldWork:          occWork,
		outage.FieldRequests:   outageRequests,
		fleet.FieldCells:       fleetCells,
		throttle.FieldRequests: throttleRequests,
		"Demands":              "--demand", "Capacity": "--capacity", "Throttlings": "--strategy",
		hedge.FieldAttempts: hedgeAttempts,
		limit.FieldRequests: limitRequests, "Limitings": "--strategy",
	}[fe.Field]
	if flags == "" {
		return cmdutil.Usagef("%s", strings.TrimPrefix(err.Error(), "sim: "))
	}
	// Not cmdutil.BadValue: fe.Value is what the flags come to together,
	// not a value the user wrote.
	return cmdutil.Usagef("%s: want %s, not %s", flags, fe.Accepted, fe.Value)
}

// The limits on several flags together, in the terms of the flags: each
// the model's Field constant of the same name.
const (
	stormAttempts  = "--clients × (--retries + 1)"
	occWork        = "the sum of --clients² × --runs"
	outageRequests = "--rate × (--duration − --spike) + --spike-rate × --spike"
	fleetCells     = "--clients × --failure × --strategy"
	// throttleRequests: the command keeps the model's Duration of 300 s.
	throttleRequests = "max(--demand) × --capacity × 300s"
	hedgeAttempts    = "the number of --quantiles × --requests × (1 + --max-hedges)"
	// limitRequests: the command keeps the model's Duration of 160 s.
	limitRequests = "max(--from, --to) × the capacity × 160s"
)

func newSimOCCCmd(env *cmdutil.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "occ",
		Short: "The AWS backoff post's optimistic-concurrency model",
		Long: `occ reproduces the AWS Architecture Blog's "Exponential Backoff And Jitter"
(2015): clients contend to update one row, per backoff algorithm. Guide:
docs/cli.md (sim occ).`,
		Example: `  # The post's full table (19 client counts, 5 algorithms, 100 runs).
  again sim occ

  # Two client counts, two algorithms, as CSV.
  again sim occ --clients 50,100 --strategy full,decorrelated --format csv

  # The charts of calls and time against clients.
  again sim occ --svg occ.svg`,
		Args: cmdutil.NoArgs,
	}
	fs := cmd.Flags()
	sf := addSimFlags(env, cmd)
	clients, runs := "10-190/10", "100"
	strategies := strategyList(occ.Algorithms())
	work := fmt.Sprintf("%s at most %d", occWork, occ.MaxWork)
	fs.Var(cmdutil.Text(&clients, "list"), "clients", "numbers of clients: a list such as 10,50 or a range FROM-TO/STEP; "+work)
	fs.Var(cmdutil.Text(&strategies, "list"), "strategy", "backoff algorithms to compare: "+strings.ReplaceAll(strategies, ",", ", "))
	// --strategy, as in every other model; --algorithms was occ's own name.
	cmdutil.Alias(cmd, "algorithms", "strategy")
	fs.Var(cmdutil.Text(&runs, "n"), "runs", fmt.Sprintf("runs averaged per cell, 1 to %d; %s", occ.MaxRuns, work))
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		in, err := sf.parse()
		if err != nil {
			return err
		}
		c := occ.Config{Seed: in.Seed, Runner: simRunner(cmd.Context(), env, "occ")}
		if c.Clients, err = parseClients(clients); err != nil {
			return err
		}
		if c.Algorithms, err = parseStrategies(strategies, occ.Algorithms()); err != nil {
			return err
		}
		if c.Runs, err = parseCount("runs", runs, occ.MaxRuns); err != nil {
			return err
		}
		return occRun(cmd.Context(), sf, c)
	}
	return cmd
}

// occRun runs the occ model as c says, and writes its rows as opts says.
func occRun(ctx context.Context, opts *Options, c occ.Config) error {
	return runModel(ctx, opts, func() ([]occ.Row, error) { return occ.Run(c) }, occChart)
}

// runModel runs a model (model calls it on its config) and writes its rows
// as opts says, with the chart that draw makes of them. A model's error
// is a usage error (see simUsage); a ctx done meanwhile (the model skips
// what it has not started) ends the command with ctx's error, writing
// nothing.
func runModel[R any](ctx context.Context, opts *Options, model func() (R, error), draw func(R) *chart.Figure) error {
	rows, err := model()
	if err != nil {
		return simUsage(err)
	}
	if sig := cmdutil.SignalCause(ctx); sig != nil {
		return cmdutil.Stopped(sig, "") // 128+N, as every command
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return opts.output(rows, func(w io.Writer) error { return draw(rows).Render(w) })
}

// parseClients parses --clients: a list or ranges of client counts.
func parseClients(s string) ([]int, error) {
	return parseList("clients", s, fmt.Sprintf("whole numbers from 1 to %d", simmodel.MaxClients), "10-190/10", strconv.Atoi,
		func(n int) bool { return n >= 1 && n <= simmodel.MaxClients })
}

// parseFloat reads one number of a list of fractions.
func parseFloat(s string) (float64, error) { return strconv.ParseFloat(s, 64) }

// parseCount parses a whole number from 1 to most.
func parseCount(flag, s string, most int) (int, error) {
	return parseCountFrom(flag, s, 1, most)
}

// parseCountFrom parses a count from least to most, and says so when it
// is not one.
func parseCountFrom(flag, s string, least, most int) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < least || n > most {
		return 0, cmdutil.BadValue("--"+flag, s, "a whole number from %d to %d", least, most)
	}
	return n, nil
}
