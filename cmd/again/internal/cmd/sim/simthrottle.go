package sim

import (
	"context"
	"fmt"
	"strings"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	simmodel "github.com/again-go/again/cmd/again/internal/sim"
	"github.com/again-go/again/cmd/again/internal/sim/chart"
	"github.com/again-go/again/cmd/again/internal/sim/simshed"
	"github.com/again-go/again/cmd/again/internal/sim/throttle"
	"github.com/spf13/cobra"
)

func newSimThrottleCmd(env *cmdutil.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "throttle",
		Short: "Client-side throttling under a demand sweep, per throttler",
		Long: `throttle sweeps the demand on a backend of fixed capacity from 1 to 30 times
that and compares client-side throttlers, the SRE book's among them. Guide:
docs/cli.md (sim throttle).`,
		Example: `  # The whole sweep, and its chart.
  again sim throttle --svg throttle.svg

  # The SRE throttle against failsafe-go's counting at 10x and 30x, as JSON.
  again sim throttle --demand 10,30 --strategy sre-k2,sent-only --format json

  # A backend that sheds with package shed, as again proxy --shed 2 makes one.
  again sim throttle --shed 2`,
		Args: cmdutil.NoArgs,
	}
	fs := cmd.Flags()
	sf := addSimFlags(env, cmd)
	demands, capacity, shedding := "1,2,3,5,10,20,30", "100/s", ""
	strategies := strategyList(throttle.Throttlings())
	limit := fmt.Sprintf("; %s at most %d requests", throttleRequests, simmodel.MaxRequests)
	fs.Var(cmdutil.Text(&demands, "list"), "demand", fmt.Sprintf("demand ÷ capacity: a list such as 3,10,30 or a range such as 1-30/1, each above 0 and up to %d", simmodel.MaxDemandRatio)+limit)
	fs.Var(cmdutil.Text(&capacity, "n/unit"), "capacity", "requests per UNIT the backend accepts, such as 100/s"+limit)
	fs.Var(cmdutil.Text(&strategies, "list"), "strategy", "throttlers to compare: "+strings.ReplaceAll(strategies, ",", ", "))
	addShedFlag(fs, &shedding)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		in, err := sf.parse()
		if err != nil {
			return err
		}
		c := throttle.Config{Seed: in.Seed, Runner: simRunner(cmd.Context(), env, "throttle")}
		if c.Demands, err = parseDemands(demands); err != nil {
			return err
		}
		if c.Capacity, err = parseRate("capacity", capacity); err != nil {
			return err
		}
		if c.Throttlings, err = parseStrategies(strategies, throttle.Throttlings()); err != nil {
			return err
		}
		if c.Shed, err = parseShed(shedding); err != nil {
			return err
		}
		return throttleRun(cmd.Context(), sf, c)
	}
	return cmd
}

// parseDemands parses throttle's --demand: ratios of demand to capacity.
func parseDemands(s string) ([]float64, error) {
	return parseList("demand", s, fmt.Sprintf("ratios above 0 and up to %d", simmodel.MaxDemandRatio), "1-30/1", parseFloat,
		func(f float64) bool { return f > 0 && f <= simmodel.MaxDemandRatio })
}

// throttleRun runs the throttle model as c says, and writes its rows as
// opts says.
func throttleRun(ctx context.Context, opts *Options, c throttle.Config) error {
	draw := func(rows []throttle.Row) *chart.Figure { return throttleChart(rows, c.Shed) }
	if c.Shed.On() {
		return runModel(ctx, opts, func() ([]throttle.Row, error) { return throttle.Run(c) }, draw)
	}
	var full []throttle.Row
	return runModel(ctx, opts, func() (rows []throttleClientRow, err error) {
		full, err = throttle.Run(c)
		return clientSide(full, func(r throttle.Row) throttleClientRow {
			return throttleClientRow{r.DemandRatio, r.Throttler, r.PReject, r.BackendLoadRatio, r.GoodputRatio, r.LatencyP50MS, r.LatencyP99MS}
		}), err
	}, func([]throttleClientRow) *chart.Figure { return draw(full) })
}

// throttleClientRow is a throttle row without the server's side
// (shed_ratio, queue_delay_ms), for a backend that does not shed.
type throttleClientRow struct {
	DemandRatio      float64             `json:"demand_ratio"`
	Throttler        throttle.Throttling `json:"throttler"`
	PReject          float64             `json:"p_reject"`
	BackendLoadRatio float64             `json:"backend_load_ratio"`
	GoodputRatio     float64             `json:"goodput_ratio"`
	LatencyP50MS     float64             `json:"latency_p50_ms"`
	LatencyP99MS     float64             `json:"latency_p99_ms"`
}

// throttleChart draws, against the demand, the backend's load and the
// goodput per capacity, one line per throttler: the SRE counting's flat
// K × capacity against the others' growth.
func throttleChart(rows []throttle.Row, sh simshed.Config) *chart.Figure {
	load := chart.Panel{Title: "Load on the backend", XLabel: "demand ÷ capacity", YLabel: "attempts received ÷ capacity (log scale)", LogY: true}
	good := chart.Panel{Title: "Goodput", XLabel: "demand ÷ capacity", YLabel: "successes ÷ capacity"}
	shed := chart.Panel{Title: "Shed by the backend", XLabel: "demand ÷ capacity", YLabel: "attempts shed ÷ capacity"}
	index := map[throttle.Throttling]int{}
	for _, r := range rows {
		i, ok := index[r.Throttler]
		if !ok {
			i = len(load.Series)
			index[r.Throttler] = i
			load.Series = append(load.Series, chart.Series{Name: string(r.Throttler)})
			good.Series = append(good.Series, chart.Series{Name: string(r.Throttler)})
			shed.Series = append(shed.Series, chart.Series{Name: string(r.Throttler)})
		}
		l, g, s := &load.Series[i], &good.Series[i], &shed.Series[i]
		l.X, l.Y = append(l.X, r.DemandRatio), append(l.Y, r.BackendLoadRatio)
		g.X, g.Y = append(g.X, r.DemandRatio), append(g.Y, r.GoodputRatio)
		s.X, s.Y = append(s.X, r.DemandRatio), append(s.Y, r.ShedRatio)
	}
	f := &chart.Figure{
		Title:   "Client-side throttling under a demand sweep (again sim throttle)",
		Note:    "Poisson demand on a backend of fixed capacity that answers 503 above it; up to 3 attempts, with a budget except for none.",
		Panels:  []chart.Panel{load, good},
		Columns: 2,
	}
	if sh.On() {
		f.Note = "Poisson demand on a backend of fixed capacity that sheds with package shed (" + shedNote(sh) + "), 503 and Retry-After; up to 3 attempts, with a budget except for none."
		f.Panels, f.Columns = append(f.Panels, shed), 3
	}
	return f
}
