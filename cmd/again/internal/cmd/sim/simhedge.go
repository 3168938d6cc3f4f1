package sim

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/again-go/again/cmd/again/internal/calc"
	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/sim/chart"
	"github.com/again-go/again/cmd/again/internal/sim/hedge"
	"github.com/spf13/cobra"
)

func newSimHedgeCmd(env *cmdutil.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hedge",
		Short: "Hedged requests against a long-tailed latency, and the hedge storm",
		Long: `hedge shows what hedging does against a long tail, after Dean and Barroso's
"The Tail at Scale" (2013), and to an overloaded server, with and without a
budget. Guide: docs/cli.md (sim hedge).`,
		Example: `  # The table: the tail cut at normal load, the storm when overloaded.
  again sim hedge

  # Just p95, a lognormal latency, as JSON.
  again sim hedge --quantiles 0,0.95 --dist lognormal --sigma 1.5 --format json

  # The chart.
  again sim hedge --format svg > hedge.svg`,
		Args: cmdutil.NoArgs,
	}
	fs := cmd.Flags()
	sf := addSimFlags(env, cmd)
	dist, scale, alpha, median, sigma := "pareto", "5ms", "1.5", "10ms", "1"
	quantiles, load, overload, maxHedges, ratio, requests := "0,0.5,0.9,0.95,0.99", "0.3", "0.8", "1", "0.1", "100000"
	fs.Var(cmdutil.Text(&dist, "name"), "dist", "latency distribution on an idle server: pareto or lognormal")
	fs.Var(cmdutil.Text(&scale, "duration"), "scale", "pareto: the least latency")
	fs.Var(cmdutil.Text(&alpha, "float"), "alpha", "pareto: the tail index, above 1 (smaller is heavier)")
	fs.Var(cmdutil.Text(&median, "duration"), "median", "lognormal: the median latency")
	fs.Var(cmdutil.Text(&sigma, "float"), "sigma", "lognormal: the standard deviation of the latency's logarithm")
	fs.Var(cmdutil.Text(&quantiles, "list"), "quantiles", "hedge quantiles to compare, 0 for no hedging: a list such as 0,0.95 or a range such as 0.5-0.95/0.05")
	fs.Var(cmdutil.Text(&load, "float"), "load", "utilisation of the server in the normal rows, in (0, 1)")
	fs.Var(cmdutil.Text(&overload, "float"), "overload", "utilisation of the server in the overloaded rows, in (0, 1)")
	fs.Var(cmdutil.Text(&maxHedges, "n"), "max-hedges", "most hedges per request, 1 to 3")
	fs.Var(cmdutil.Text(&ratio, "float"), "budget-ratio", "tokens each success refunds to the budget: hedges at most about this share of requests")
	fs.Var(cmdutil.Text(&requests, "n"), "requests", "requests per row, 1000 to 1000000")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		in, err := sf.parse()
		if err != nil {
			return err
		}
		c := hedge.Config{Seed: in.Seed, Runner: simRunner(cmd.Context(), env, "hedge")}
		if dist != hedge.Pareto && dist != hedge.Lognormal {
			return cmdutil.BadValue("--dist", dist, "pareto or lognormal")
		}
		c.Dist.Name = dist
		if c.Dist.Scale, err = parseHedgeDuration("scale", scale); err != nil {
			return err
		}
		if c.Dist.Median, err = parseHedgeDuration("median", median); err != nil {
			return err
		}
		if c.Dist.Alpha, err = parseFloatIn("alpha", alpha, "a number above 1 and up to 100", func(f float64) bool { return f > 1 && f <= 100 }); err != nil {
			return err
		}
		if c.Dist.Sigma, err = parseFloatIn("sigma", sigma, "a number above 0 and up to 5", func(f float64) bool { return f > 0 && f <= 5 }); err != nil {
			return err
		}
		if c.Quantiles, err = parseQuantiles(quantiles); err != nil {
			return err
		}
		utilisation := func(f float64) bool { return f > 0 && f < 1 }
		if c.Load, err = parseFloatIn("load", load, "a utilisation in (0, 1)", utilisation); err != nil {
			return err
		}
		if c.Overload, err = parseFloatIn("overload", overload, "a utilisation in (0, 1)", utilisation); err != nil {
			return err
		}
		if c.MaxHedges, err = parseCount("max-hedges", maxHedges, 3); err != nil {
			return err
		}
		if c.BudgetRatio, err = parseFloatIn("budget-ratio", ratio, "a number from 0.001 to 1", func(f float64) bool { return f >= 0.001 && f <= 1 }); err != nil {
			return err
		}
		if c.Requests, err = parseCountFrom("requests", requests, 1000, hedge.MaxRequests); err != nil {
			return err
		}
		return hedgeRun(cmd.Context(), sf, c)
	}
	return cmd
}

// hedgeRun runs the hedge model as c says, and writes its rows as opts says.
func hedgeRun(ctx context.Context, opts *Options, c hedge.Config) error {
	return runModel(ctx, opts, func() ([]hedge.Row, error) { return hedge.Run(c) },
		func(rows []hedge.Row) *chart.Figure { return hedgeChart(rows, c) })
}

// parseQuantiles parses hedge's --quantiles: at most 20 quantiles, each 0
// (no hedging) or in (0, 1).
func parseQuantiles(s string) ([]float64, error) {
	q, err := parseList("quantiles", s, "0 or numbers in (0, 1)", "0.5-0.95/0.05", parseFloat,
		func(f float64) bool { return f == 0 || f > 0 && f < 1 })
	if err == nil && len(q) > 20 {
		return nil, cmdutil.BadValue("--quantiles", s, "at most 20 quantiles (it lists %d)", len(q))
	}
	return q, err
}

// parseHedgeDuration parses a distribution's duration flag: 1µs to 1s,
// with a unit.
func parseHedgeDuration(flag, s string) (time.Duration, error) {
	if err := cmdutil.RequireUnit(flag, s); err != nil {
		return 0, err
	}
	d, err := calc.ParseDuration(s)
	if err != nil || d < time.Microsecond || d > time.Second {
		return 0, cmdutil.BadValue("--"+flag, s, "a duration from 1µs to 1s (Go syntax such as 5ms)")
	}
	return d, nil
}

// parseFloatIn parses a number that ok accepts.
func parseFloatIn(flag, s, accepted string, ok func(float64) bool) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !ok(f) {
		return 0, cmdutil.BadValue("--"+flag, s, accepted)
	}
	return f, nil
}

// hedgeChart draws p99.9 and the extra load against the hedge quantile,
// at normal load and overloaded, with and without the budget. The latency
// axis is logarithmic: the storm's latency is a thousand times the rest.
func hedgeChart(rows []hedge.Row, c hedge.Config) *chart.Figure {
	f := &chart.Figure{
		Title:   "Hedged requests: the tail cut, and the storm without a budget (again sim hedge)",
		Note:    fmt.Sprintf("%s latency; utilisation %g normal, %g overloaded (fixed delay); budget TokenRatio %g.", c.Dist.Name, c.Load, c.Overload, c.BudgetRatio),
		Columns: 2,
	}
	for _, over := range []bool{false, true} {
		name := "normal load"
		if over {
			name = "overloaded"
		}
		lat := chart.Panel{Title: "p99.9 latency, " + name, XLabel: "hedge quantile (0: none)", YLabel: "p99.9 (ms, log scale)", LogY: true}
		load := chart.Panel{Title: "Extra load, " + name, XLabel: "hedge quantile (0: none)", YLabel: "hedges per request"}
		for _, budget := range []bool{false, true} {
			s := chart.Series{Name: "no budget"}
			if budget {
				s.Name = "budget"
			}
			l := chart.Series{Name: s.Name}
			for _, r := range rows {
				// The unhedged row starts both lines.
				if r.Overloaded == over && (r.Budget == budget || r.HedgeQuantile == 0) {
					s.X, s.Y = append(s.X, r.HedgeQuantile), append(s.Y, r.P999MS)
					l.X, l.Y = append(l.X, r.HedgeQuantile), append(l.Y, r.ExtraLoad)
				}
			}
			lat.Series = append(lat.Series, s)
			load.Series = append(load.Series, l)
		}
		f.Panels = append(f.Panels, lat, load)
	}
	return f
}
