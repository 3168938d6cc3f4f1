// Package calc is `again calc`, the backoff calculator's command line.
//
// It shows the schedule a retry policy produces, its total wait and
// percentiles, whether it fits a deadline, and the solver that finds the
// largest value that does. The calculator itself is internal/calc (imported
// as calcmodel), shared with the web page.
package calc

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

	"github.com/again-go/again/backoff"
	calcmodel "github.com/again-go/again/cmd/again/internal/calc"
	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/spf13/cobra"
)

// Options is what one `again calc` was asked: the policy and the
// calculator's own fields, validated, and the output format as given.
type Options struct {
	Env    *cmdutil.Env    // where the report goes (Env.Stdout)
	Input  calcmodel.Input // the policy, --deadline, --solve, --target, --seed
	Format string          // --format: table, json, csv or markdown
}

// NewCmd returns `again calc`: its flags are resolved (a --preset filled in
// under the flags given) and validated into an Options, which calcRun
// computes and prints.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "calc",
		Short: "Show a backoff schedule, its total wait and whether it fits a deadline",
		Long: `calc shows the schedule a retry policy produces: for each retry the nominal
delay, the min, mean and max of the jittered delay and the worst-case wait so
far; then the shortest, mean and longest total wait with its percentiles, and,
with --deadline, whether the worst case fits: whether it ends at least ` + backoff.DeadlineReserve.String() + `
before the deadline, the time the retry loops (the library's, run, fetch and
wait) keep for the last attempt. They shorten a wait that would end later, so
that one more attempt starts in time, and the verdict counts the retries that
start in time, that one included.

With --solve and --deadline it finds the largest initial delay, multiplier or
number of retries whose worst-case (or, with --target p99, 99th-percentile)
total wait fits the deadline that way, and shows the resulting schedule. If
there is no such value (none fits, or every value up to the most the
calculator analyses does) it says so and exits 1.

Durations are Go syntax (500ms, 1.5s, 2m) or a bare number of milliseconds;
the table shows sub-millisecond values in µs. --max 0 means no cap, --retries 0
no retries and --initial 0 no wait.
JSON and CSV numbers are milliseconds. JSON holds the rows, the totals and
percentiles, the deadline verdict and the solved value, and names the values
that are Monte Carlo estimates (decorrelated jitter) with the seed and the
standard error; CSV has the rows, an empty line, then the same summary as
"field,value" lines named by JSON path (total.p99_ms, deadline.p99_fits, ...).
Exit status: 0 when the schedule is shown (even one that misses --deadline),
1 when --solve has no answer (no value fits, or every value does), 2 for a
usage error.

--preset NAME starts from a named policy, the same ones the web page offers;
flags given with it override its fields. The presets:
` + presetHelp(),
		Example: `  # The worked example: 500 ms doubling up to 30 s, 8 retries, full jitter.
  again calc --initial 500ms --multiplier 2 --max 30s --retries 8

  # Does it fit a one-minute deadline, and how many retries do?
  again calc --initial 500ms --max 30s --retries 8 --deadline 1m

  # The largest first delay that keeps 5 retries within 10 s in the worst case.
  again calc --retries 5 --solve initial --deadline 10s

  # AWS SDKs' standard mode, with 4 retries instead of its 2.
  again calc --preset aws --retries 4

  # Decorrelated jitter, machine-readable.
  again calc --jitter decorrelated --multiplier 3 --format json`,
		Args: cmdutil.NoArgs,
	}
	fs := cmd.Flags()
	pf := cmdutil.AddPolicyFlags(fs)
	pf.Add(fs, calcmodel.FieldSolve, "param", "find the largest initial, multiplier or retries that fits --deadline")
	pf.Add(fs, calcmodel.FieldTarget, "stat", "with --solve: what it keeps within the deadline, max (worst case) or p99")
	pf.Add(fs, calcmodel.FieldSeed, "n", "seed for the Monte Carlo estimates of decorrelated jitter")
	preset := ""
	fs.Var(cmdutil.Text(&preset, "name"), calcmodel.FieldPreset, "start from a named policy (listed above); flags given with it override its fields")
	format := "table"
	fs.Var(cmdutil.Text(&format, "format"), "format", "output format: table, json, csv or markdown")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if fs.Changed(calcmodel.FieldPreset) {
			p, err := calcmodel.PresetByName(preset)
			var ie *calcmodel.InputError
			if errors.As(err, &ie) {
				return cmdutil.Usage(ie.Message())
			}
			for _, f := range calcmodel.PolicyFields() {
				if !fs.Changed(f) {
					pf.Set(f, p.Values[f])
				}
			}
		}
		in, err := pf.Parse()
		if err != nil {
			return err
		}
		// Checked here, not in calcmodel.Parse: a form always sends its target,
		// but on a command line a --target without --solve is a mistake
		// that would otherwise be ignored without a word.
		if fs.Changed(calcmodel.FieldTarget) && !in.Solve {
			return cmdutil.Usagef("--target requires --solve: it says what the solver keeps within --deadline")
		}
		return calcRun(&Options{Env: env, Input: in, Format: format})
	}
	return cmd
}

// calcRun computes the schedule that opts describes and writes it to
// opts.Env.Stdout in opts.Format. An unknown format is a usage error; a
// --solve without an answer exits 1 with the solver's reason.
func calcRun(opts *Options) error {
	var write func(*calcmodel.Report, *bufio.Writer) error
	switch opts.Format {
	case "table":
		write = func(r *calcmodel.Report, w *bufio.Writer) error { return r.WriteTable(w) }
	case "json":
		write = func(r *calcmodel.Report, w *bufio.Writer) error { return r.WriteJSON(w) }
	case "csv":
		write = func(r *calcmodel.Report, w *bufio.Writer) error { return r.WriteCSV(w) }
	case "markdown":
		write = func(r *calcmodel.Report, w *bufio.Writer) error { return r.WriteMarkdown(w) }
	default:
		return cmdutil.Usagef("--format must be one of table, json, csv or markdown, got %q", opts.Format)
	}
	rep, err := calcmodel.Compute(opts.Input)
	var se *calcmodel.SolveError
	if errors.As(err, &se) {
		return cmdutil.Exit(cmdutil.ExitFailure, errors.New(se.Detail()))
	}
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(opts.Env.Stdout, 64<<10)
	if err := write(rep, w); err != nil {
		return err
	}
	return w.Flush()
}

// presetHelp lists the presets for the help, one a line, with the flags
// each stands for.
func presetHelp() string {
	var b strings.Builder
	ps := calcmodel.Presets()
	width := 0
	for _, p := range ps {
		width = max(width, len(p.Name))
	}
	for _, p := range ps {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, p.Name, p.Command())
	}
	return strings.TrimSuffix(b.String(), "\n")
}
