package sim

import (
	"strings"
	"time"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	simmodel "github.com/again-go/again/cmd/again/internal/sim"
	"github.com/again-go/again/cmd/again/internal/sim/chart"
	"github.com/again-go/again/cmd/again/internal/sim/limit"
	"github.com/again-go/again/fault/latency"
	"github.com/spf13/cobra"
)

func newSimLimitCmd(env *cmdutil.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "limit",
		Short: "Concurrency limits under a load ramped past capacity, per limiter",
		Long: `limit runs Envoy's first published run of adaptive concurrency on package
limiter's code: a load ramped past a server's capacity, per limiter (none,
fixed, AIMD, Vegas, Gradient2). Guide: docs/cli.md (sim limit).`,
		Example: `  # The whole run, and its chart.
  again sim limit --svg limit.svg

  # Gradient2 against a fixed limit, 16 workers, as CSV.
  again sim limit --workers 16 --strategy fixed,gradient2 --format csv`,
		Args: cmdutil.NoArgs,
	}
	fs := cmd.Flags()
	sf := addSimFlags(env, cmd)
	workers, median, sigma, timeout, from, to := "8", "13ms", "1.05", "1s", "0.5", "3"
	strategies := strategyList(limit.Limitings())
	fs.Var(cmdutil.Text(&workers, "n"), "workers", "requests the server serves at once, 1 to 1000")
	fs.Var(cmdutil.Text(&median, "duration"), "median", "median service time (lognormal)")
	fs.Var(cmdutil.Text(&sigma, "float"), "sigma", "standard deviation of the service time's logarithm, above 0 and up to 5")
	fs.Var(cmdutil.Text(&timeout, "duration"), "attempt-timeout", "the client's timeout per request")
	cmdutil.Alias(cmd, "timeout", "attempt-timeout")
	fs.Var(cmdutil.Text(&from, "ratio"), "from", "offered load at the start ÷ capacity")
	fs.Var(cmdutil.Text(&to, "ratio"), "to", "offered load at the end ÷ capacity")
	fs.Var(cmdutil.Text(&strategies, "list"), "strategy", "limiters to compare: "+strings.ReplaceAll(strategies, ",", ", "))
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		in, err := sf.parse()
		if err != nil {
			return err
		}
		c := limit.Config{Seed: in.Seed, Runner: simRunner(cmd.Context(), env, "limit")}
		if c.Workers, err = parseCount("workers", workers, limit.MaxWorkers); err != nil {
			return err
		}
		c.Service.Name = latency.Lognormal
		if c.Service.Median, err = parseHedgeDuration("median", median); err != nil {
			return err
		}
		if c.Service.Sigma, err = parseFloatIn("sigma", sigma, "a number above 0 and up to 5", func(f float64) bool { return f > 0 && f <= 5 }); err != nil {
			return err
		}
		if c.Timeout, err = parseSimDuration("attempt-timeout", timeout, time.Millisecond); err != nil {
			return err
		}
		ratio := func(f float64) bool { return f > 0 && f <= simmodel.MaxDemandRatio }
		if c.From, err = parseFloatIn("from", from, "a ratio above 0 and up to 100", ratio); err != nil {
			return err
		}
		if c.To, err = parseFloatIn("to", to, "a ratio above 0 and up to 100", ratio); err != nil {
			return err
		}
		if c.Limitings, err = parseStrategies(strategies, limit.Limitings()); err != nil {
			return err
		}
		return runModel(cmd.Context(), sf, func() ([]limit.Row, error) { return limit.Run(c) }, limitChart)
	}
	return cmd
}

// limitChart draws the run with limit.Chart, under the command's title.
func limitChart(rows []limit.Row) *chart.Figure {
	return limit.Chart(rows, "Concurrency limits under a load ramped past capacity (again sim limit)",
		"A server of workers and a FIFO queue, a Poisson load ramped past its capacity over 160 s, a client timeout (by default Envoy's setup: 8 workers, p90 50 ms, p99 150 ms, 1 s).")
}
