package sim

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/cmd/again/internal/calc"
	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/rate"
	simmodel "github.com/again-go/again/cmd/again/internal/sim"
	"github.com/again-go/again/cmd/again/internal/sim/fleet"
	"github.com/again-go/again/cmd/again/internal/sim/outage"
	"github.com/again-go/again/cmd/again/internal/sim/simshed"
	"github.com/again-go/again/cmd/again/internal/sim/storm"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// parseStrategies parses a --strategy list against the model's strategies.
func parseStrategies[S ~string](s string, valid []S) ([]S, error) {
	names := make([]string, len(valid))
	for i, v := range valid {
		names[i] = string(v)
	}
	var out []S
	for item := range strings.SplitSeq(s, ",") {
		st := S(strings.TrimSpace(item))
		if !slices.Contains(valid, st) {
			return nil, cmdutil.BadValue("--strategy", s, "a comma-separated list of %s", strings.Join(names, ", "))
		}
		out = append(out, st)
	}
	return out, nil
}

func strategyList[S ~string](ss []S) string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = string(s)
	}
	return strings.Join(names, ",")
}

func newSimOutageCmd(env *cmdutil.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "outage",
		Short: "A load spike that leaves a server collapsed, and what prevents it",
		Long: `outage simulates a metastable failure: a load spike, or an --outage, against a
server that slows down with its work, per client strategy. Guide: docs/cli.md
(sim outage).`,
		Example: `  # The summary, and the chart of attempts and goodput over time.
  again sim outage --svg outage.svg

  # A longer spike, backoff against a budget, per second as CSV.
  again sim outage --spike 40s --strategy backoff,budget --per-second --format csv

  # A 20 s hard outage from t = 20 s, as again proxy --outage 20s@20s makes.
  again sim outage --outage 20s@20s

  # The server sheds what it cannot serve, as again proxy --shed 100 does.
  again sim outage --shed 100 --per-second`,
		Args: cmdutil.NoArgs,
	}
	fs := cmd.Flags()
	sf := addSimFlags(env, cmd, calc.FieldInitial, calc.FieldMultiplier, calc.FieldMax, calc.FieldJitter)
	arrival, spikeArrival, spike, duration := "40/s", "80/s", "20s", "120s"
	strategies := strategyList(simmodel.OutageStrategies())
	perSecond := false
	hard, shedding := "", ""
	requests := fmt.Sprintf("; %s at most %d requests", outageRequests, simmodel.MaxRequests)
	fs.Var(cmdutil.Text(&arrival, "n/unit"), "rate", "new requests per UNIT, such as 40/s or 600/m"+requests)
	fs.Var(cmdutil.Text(&spikeArrival, "n/unit"), "spike-rate", "new requests per UNIT during the spike"+requests)
	fs.Var(cmdutil.Text(&spike, "duration"), "spike", "length of the spike, from t = 20s"+requests)
	fs.Var(cmdutil.Text(&duration, "duration"), "duration", "how long requests arrive"+requests)
	fs.Var(cmdutil.Text(&strategies, "list"), "strategy", "strategies to compare: "+strings.ReplaceAll(strategies, ",", ", "))
	fs.Var(cmdutil.Text(&hard, "duration@start"), "outage", "a hard outage, every attempt failing at once: "+outageSyntax)
	fs.BoolVar(&perSecond, "per-second", false, "print each second's new requests, attempts and successes instead of the summary")
	addShedFlag(fs, &shedding)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		in, err := sf.parse()
		if err != nil {
			return err
		}
		c := outage.Config{Policy: in.Policy, Seed: in.Seed, Runner: simRunner(cmd.Context(), env, "outage")}
		if c.Strategies, err = parseStrategies(strategies, simmodel.OutageStrategies()); err != nil {
			return err
		}
		if c.Shed, err = parseShed(shedding); err != nil {
			return err
		}
		if c.Rate, err = parseRate("rate", arrival); err != nil {
			return err
		}
		if c.SpikeRate, err = parseRate("spike-rate", spikeArrival); err != nil {
			return err
		}
		if c.Spike, err = parseSimDuration("spike", spike, 0); err != nil {
			return err
		}
		if c.Duration, err = parseSimDuration("duration", duration, time.Second); err != nil {
			return err
		}
		if hard != "" {
			if c.Hard, c.HardStart, err = parseOutage(hard); err != nil {
				return err
			}
			if !cmd.Flags().Changed("spike") {
				c.Spike = 0 // the outage replaces the spike
			}
		}
		// The summary is about what follows the trigger: leave room to see it.
		if least := 20*time.Second + c.Spike + 5*time.Second; (c.Hard == 0 || c.Spike > 0) && c.Duration < least {
			return cmdutil.BadValue("--duration", duration, "at least %s (past the spike's end at %s, plus 5s to measure a recovery)", calc.Short(least), calc.Short(20*time.Second+c.Spike))
		}
		if end := c.HardStart + c.Hard; c.Hard > 0 && c.Duration < end+5*time.Second {
			return cmdutil.BadValue("--duration", duration, "at least %s (past the outage's end at %s, plus 5s to measure a recovery)", calc.Short(end+5*time.Second), calc.Short(end))
		}
		if f, ok := outage.ShedCapacity(c); ok && !f.Fits(c.Shed.Limit) {
			// A limit that does not fit the server: nothing recovers,
			// whatever the clients do. Say so, rather than let the table
			// blame them.
			fmt.Fprintf(env.Stderr, "again sim outage: %s\n", shedMisfit(c.Shed.Limit, c.Rate, f))
		}
		shade := outageShade{spike: c.Spike, hardStart: c.HardStart, hard: c.Hard}
		if c.Spike == 0 {
			c.Spike = outage.NoSpike
		}
		return outageRun(cmd.Context(), sf, c, shade, perSecond)
	}
	return cmd
}

// shedMisfit says why --shed n does not fit the outage model's server
// (1 s + 10 ms per request in progress, clients waiting 3 s) at rate new
// requests a second, and which limits do.
func shedMisfit(n int, rate float64, f outage.ShedFit) string {
	fits := "no limit fits"
	if f.Least > 0 && f.Least <= f.Most {
		fits = fmt.Sprintf("a limit from %d to %d fits", f.Least, f.Most)
	}
	if n > f.Most {
		return fmt.Sprintf("--shed %d lets a request take %v or more (1s + 10ms per request in progress), the clients' 3s timeout: it sheds only once requests time out; %s", n, time.Second+time.Duration(n)*10*time.Millisecond, fits)
	}
	return fmt.Sprintf("--shed %d serves at most %.1f requests a second (each takes 1s + 10ms per request in progress), fewer than the %g that arrive outside the spike: nothing can recover; %s", n, f.Rate, rate, fits)
}

// outageSyntax is the syntax of --outage, again proxy's.
const outageSyntax = "duration@start, such as 20s@20s: for 20 s from t = 20 s (again proxy --outage's syntax)"

// parseOutage parses --outage duration@start.
func parseOutage(s string) (d, start time.Duration, err error) {
	ds, ss, ok := strings.Cut(s, "@")
	if !ok {
		return 0, 0, cmdutil.BadValue("--outage", s, outageSyntax)
	}
	if d, err = parseSimDuration("outage", ds, time.Millisecond); err != nil {
		return 0, 0, err
	}
	if start, err = parseSimDuration("outage", ss, 0); err != nil {
		return 0, 0, err
	}
	return d, start, nil
}

// outageShade is what the outage chart shades: the spike's length (from
// t = 20 s), 0 for none, and the hard outage's window, hard 0 for none.
type outageShade struct {
	spike           time.Duration
	hardStart, hard time.Duration
}

// outageRun runs the outage model as c says, and writes its rows as opts
// says: a summary per strategy, or with perSecond every second of each.
// shade is the trigger, for the chart.
func outageRun(ctx context.Context, opts *Options, c outage.Config, shade outageShade, perSecond bool) error {
	res, err := outage.Run(c)
	if err != nil {
		return simUsage(err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	svg := func(w io.Writer) error { return outageChart(res, shade, c.Shed).Render(w) }
	if perSecond {
		var rows []outage.Second
		for _, r := range res {
			rows = append(rows, r.Seconds...)
		}
		if !c.Shed.On() {
			return opts.output(clientSide(rows, func(s outage.Second) clientSecond {
				return clientSecond{s.Strategy, s.Second, s.NewRequests, s.Attempts, s.Successes}
			}), svg)
		}
		return opts.output(rows, svg)
	}
	rows := make([]outage.Summary, len(res))
	for i, r := range res {
		rows[i] = r.Summary
	}
	if !c.Shed.On() {
		return opts.output(clientSide(rows, func(s outage.Summary) clientSummary {
			return clientSummary{s.Strategy, s.Amplification, s.Recovered, s.RecoveryS, s.SuccessRatio}
		}), svg)
	}
	return opts.output(rows, svg)
}

// clientSecond and clientSummary are outage's rows without the server's
// side (shed, queue_delay_ms), for a server that does not shed.
type (
	clientSecond struct {
		Strategy    simmodel.Strategy `json:"strategy"`
		Second      int               `json:"second"`
		NewRequests int               `json:"new_requests"`
		Attempts    int               `json:"attempts"`
		Successes   int               `json:"successes"`
	}
	clientSummary struct {
		Strategy      simmodel.Strategy `json:"strategy"`
		Amplification float64           `json:"amplification"`
		Recovered     bool              `json:"recovered"`
		RecoveryS     *float64          `json:"recovery_s"`
		SuccessRatio  float64           `json:"success_ratio"`
	}
)

// clientSide maps rows to their client's side.
func clientSide[R, C any](rows []R, f func(R) C) []C {
	out := make([]C, len(rows))
	for i, r := range rows {
		out[i] = f(r)
	}
	return out
}

// shedSyntax is the syntax of --shed, again proxy's.
const shedSyntax = "n|adaptive"

// addShedFlag registers --shed, with again proxy's grammar, into v.
func addShedFlag(fs *pflag.FlagSet, v *string) {
	fs.Var(cmdutil.Text(v, shedSyntax), "shed", "the server serves at most n requests at once, or as many as an adaptive limit allows (adaptive), and queues or sheds the rest (503 with a Retry-After) with package shed, as again proxy --shed; 0 for none")
}

// parseShed parses --shed as again proxy does: N, adaptive (Gradient2, as
// again proxy --shed adaptive), or 0 for none.
func parseShed(v string) (simshed.Config, error) {
	n, adaptive, err := cmdutil.ParseShed(v)
	if err != nil {
		return simshed.Config{}, err
	}
	if adaptive {
		return simshed.Config{Adaptive: cmdutil.ShedAdaptiveLimit()}, nil
	}
	if n > simshed.MaxLimit {
		return simshed.Config{}, cmdutil.BadValue("--shed", v, "a whole number from 0 to %d (0 for no shedding) or %s", simshed.MaxLimit, cmdutil.Adaptive)
	}
	return simshed.Config{Limit: n}, nil
}

// parseRate parses a rate flag, N/UNIT as every rate flag of every
// command (cmdutil.RateFlag), above 0 and up to simmodel.MaxRate per
// second, and returns it per second, as the models take it.
func parseRate(flag, s string) (float64, error) {
	r, err := cmdutil.RateFlag(flag, s)
	if err != nil {
		return 0, err
	}
	if f := r.PerSecond(); f > 0 && f <= simmodel.MaxRate {
		return f, nil
	}
	return 0, cmdutil.BadValue("--"+flag, s, "a rate above 0 and up to %d/s (%s)", simmodel.MaxRate, rate.Syntax)
}

// parseSimDuration parses a duration from least to simmodel.MaxDuration, in the
// calculator's syntax but with a unit: --spike 30 would be 30 ms to calc's
// parser and 30 s to most readers, as in run and fetch.
func parseSimDuration(flag, s string, least time.Duration) (time.Duration, error) {
	if err := cmdutil.RequireUnit(flag, s); err != nil {
		return 0, err
	}
	d, err := calc.ParseDuration(s)
	if err != nil || d < least || d > simmodel.MaxDuration {
		return 0, cmdutil.BadValue("--"+flag, s, "a duration from %s to %s (Go syntax such as 500ms, 1.5s or 2m)", calc.Short(least), calc.Short(simmodel.MaxDuration))
	}
	return d, nil
}

func newSimFleetCmd(env *cmdutil.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "Retry amplification across a fleet of clients, per strategy",
		Long: `fleet reproduces Marc Brooker's "Fixing retries with token buckets and circuit
breakers" (2022): retry amplification across a fleet, per strategy. Guide:
docs/cli.md (sim fleet).`,
		Example: `  # The whole table, and its chart.
  again sim fleet --svg fleet.svg

  # Everything failing, 1000 small clients: which strategies leak?
  again sim fleet --clients 1000 --failure 1`,
		Args: cmdutil.NoArgs,
	}
	fs := cmd.Flags()
	sf := addSimFlags(env, cmd)
	clients, failures := "10,100,1000", "0-1/0.1"
	strategies := strategyList(simmodel.FleetStrategies())
	cells := fmt.Sprintf("; %s at most %d cells", fleetCells, fleet.MaxCells)
	fs.Var(cmdutil.Text(&clients, "list"), "clients", "fleet sizes: a list such as 10,100 or a range FROM-TO/STEP"+cells)
	fs.Var(cmdutil.Text(&failures, "list"), "failure", "probabilities that an attempt fails: a list such as 0.1,0.5 or a range such as 0-1/0.1"+cells)
	fs.Var(cmdutil.Text(&strategies, "list"), "strategy", "strategies to compare: "+strings.ReplaceAll(strategies, ",", ", ")+cells)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		in, err := sf.parse()
		if err != nil {
			return err
		}
		c := fleet.Config{Seed: in.Seed, Runner: simRunner(cmd.Context(), env, "fleet")}
		if c.Clients, err = parseClients(clients); err != nil {
			return err
		}
		if c.Failures, err = parseFailures(failures); err != nil {
			return err
		}
		if c.Strategies, err = parseStrategies(strategies, simmodel.FleetStrategies()); err != nil {
			return err
		}
		return fleetRun(cmd.Context(), sf, c)
	}
	return cmd
}

// fleetRun runs the fleet model as c says, and writes its rows as opts says.
func fleetRun(ctx context.Context, opts *Options, c fleet.Config) error {
	return runModel(ctx, opts, func() ([]fleet.Row, error) { return fleet.Run(c) }, fleetChart)
}

// parseFailures parses fleet's --failure: probabilities from 0 to 1.
func parseFailures(s string) ([]float64, error) {
	return parseList("failure", s, "probabilities from 0 to 1", "0-1/0.1", parseFloat,
		func(f float64) bool { return f >= 0 && f <= 1 })
}

func newSimStormCmd(env *cmdutil.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "storm",
		Short: "Attempts over time when many clients fail at once on one schedule",
		Long: `storm answers "what does this schedule do to my server when 100 clients fail
at once?": attempts per --bucket, with and without jitter. Guide: docs/cli.md
(sim storm).`,
		Example: `  # The default policy, 100 clients, per second.
  again sim storm

  # Without jitter every client retries in the same 100 ms.
  again sim storm --initial 1s --max 30s --retries 6 --bucket 100ms --svg storm.svg

  # Every client gets a 429, retried on the overloads' own schedule.
  again sim storm --retries 6 --on-overload initial=2s,max=1m --fail-as overload`,
		Args: cmdutil.NoArgs,
	}
	fs := cmd.Flags()
	sf := addSimFlags(env, cmd, calc.FieldInitial, calc.FieldMultiplier, calc.FieldMax, calc.FieldRetries, calc.FieldJitter, calc.FieldDeadline)
	attempts := fmt.Sprintf("%s at most %d attempts", stormAttempts, storm.MaxAttempts)
	fs.Lookup(calc.FieldRetries).Usage += "; " + attempts
	clients, bucket := "100", "1s"
	fs.Var(cmdutil.Text(&clients, "n"), "clients", fmt.Sprintf("clients that fail together, 1 to %d; %s", simmodel.MaxClients, attempts))
	fs.Var(cmdutil.Text(&bucket, "duration"), "bucket", fmt.Sprintf("width of a time bucket; the storm must end within %d buckets", storm.MaxBuckets))
	classes := cmdutil.AddClassFlags(fs, calc.ClassWhat("overload"), calc.ClassWhat("transient"))
	failAs := ""
	fs.Var(cmdutil.Text(&failAs, "class"), "fail-as", "with --on-overload or --on-transient: every failure is an overload or a transient failure, retried on that class's schedule within --retries")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		in, err := sf.parse()
		if err != nil {
			return err
		}
		p, err := stormPolicy(classes, failAs, in.Policy)
		if err != nil {
			return err
		}
		c := storm.Config{Policy: p, Seed: in.Seed, Deadline: in.Deadline}
		if c.Clients, err = parseCount("clients", clients, simmodel.MaxClients); err != nil {
			return err
		}
		if c.Bucket, err = parseSimDuration("bucket", bucket, time.Microsecond); err != nil {
			return err
		}
		return stormRun(sf, c, p.JitterText())
	}
	return cmd
}

// stormPolicy returns the schedule the storm's clients follow: the call's
// policy, or with --fail-as the class's that the flags give, within the
// call's retries, as retry.WithClasses retries that failure. A failure of
// a class without a flag (--fail-as transient with only --on-overload)
// has no class and follows the call's policy, as in a real call.
func stormPolicy(flags *cmdutil.ClassFlags, failAs string, call backoff.Policy) (backoff.Policy, error) {
	cs, err := flags.Parse()
	if err != nil {
		return call, err
	}
	switch {
	case failAs == "" && len(cs) == 0:
		return call, nil
	case failAs == "":
		return call, cmdutil.Usagef("--on-overload and --on-transient need --fail-as overload or --fail-as transient: the kind of failure every client gets")
	case failAs != "overload" && failAs != "transient":
		return call, cmdutil.BadValue("--fail-as", failAs, "overload or transient")
	}
	for _, c := range cs {
		if c.Name == failAs {
			return calc.ClassPolicy(c, call), nil
		}
	}
	return call, nil
}

// stormRun runs the storm model as c says, and writes its rows as opts
// says; jitter names the schedule's jitter in the chart.
func stormRun(opts *Options, c storm.Config, jitter string) error {
	rows, err := storm.Table(c)
	if err != nil {
		return simUsage(err)
	}
	return opts.output(rows, func(w io.Writer) error { return stormChart(rows, jitter, c).Render(w) })
}
