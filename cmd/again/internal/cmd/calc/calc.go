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
	"strings"

	calcmodel "github.com/again-go/again/cmd/again/internal/calc"
	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/spf13/cobra"
)

// Options is what one `again calc` was asked: the policy and the
// calculator's own fields, validated, and the output format as given.
type Options struct {
	Env    *cmdutil.Env    // where the report goes (Env.Stdout)
	Input  calcmodel.Input // the policy, --deadline, --solve, --target, --seed
	Format string          // --format: text, json, csv or markdown
}

// NewCmd returns `again calc`: its flags are resolved (a --preset filled in
// under the flags given) and validated into an Options, which calcRun
// computes and prints.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "calc",
		Short: "Show a backoff schedule, its total wait and whether it fits a deadline",
		Long: `calc shows the schedule a retry policy produces, its total wait with
percentiles and whether it fits a --deadline; --solve finds the largest
first delay, multiplier or number of retries that does. Guide: docs/calc.md.`,
		Example: `  # The worked example: 500 ms doubling up to 30 s, 8 retries, full jitter.
  again calc --initial 500ms --multiplier 2 --max 30s --retries 8

  # Does it fit a one-minute deadline, and how many retries do?
  again calc --initial 500ms --max 30s --retries 8 --deadline 1m

  # The largest first delay that keeps 5 retries within 10 s in the worst case.
  again calc --retries 5 --solve initial --deadline 10s

  # 429s on a slow schedule, network errors on a fast one (--preset aws: AWS's two).
  again calc --retries 5 --on-overload initial=1s,max=30s --on-transient initial=50ms,retries=2

  # Decorrelated jitter, machine-readable.
  again calc --jitter decorrelated --multiplier 3 --format json`,
		Args: cmdutil.NoArgs,
	}
	fs := cmd.Flags()
	pf := cmdutil.AddPolicyFlags(fs)
	pf.Add(fs, calcmodel.FieldSolve, "param", "find the largest initial, multiplier or retries that fits --deadline")
	pf.Add(fs, calcmodel.FieldTarget, "stat", "with --solve: what it keeps within the deadline, max (worst case) or p99")
	pf.Add(fs, calcmodel.FieldSeed, "n", "seed for the Monte Carlo estimates of decorrelated jitter")
	classes := cmdutil.AddClassFlags(fs, calcmodel.ClassWhat("overload"), calcmodel.ClassWhat("transient"))
	preset := ""
	fs.Var(cmdutil.Text(&preset, "name"), calcmodel.FieldPreset, "start from a named policy, one of "+strings.Join(calcmodel.PresetNames(), ", ")+"; flags given with it override its fields")
	var format string
	cmdutil.AddFormat(cmd, &format, cmdutil.FormatText, cmdutil.FormatJSON, cmdutil.FormatCSV, cmdutil.FormatMarkdown)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		cs, err := classes.Parse()
		if err != nil {
			return err
		}
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
			if cs == nil {
				// The class flags replace a preset's classes, as the
				// policy flags replace its fields.
				cs = p.Classes
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
		in.Classes = cs
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
	case cmdutil.FormatText:
		write = func(r *calcmodel.Report, w *bufio.Writer) error { return r.WriteTable(w) }
	case "json":
		write = func(r *calcmodel.Report, w *bufio.Writer) error { return r.WriteJSON(w) }
	case "csv":
		write = func(r *calcmodel.Report, w *bufio.Writer) error { return r.WriteCSV(w) }
	case "markdown":
		write = func(r *calcmodel.Report, w *bufio.Writer) error { return r.WriteMarkdown(w) }
	default:
		return cmdutil.BadValue("--format", opts.Format, "one of text, json, csv or markdown")
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
