// Package proxy is `again proxy`: a reverse proxy that injects faults.
//
// It stands in front of one upstream and injects faults into the traffic it
// forwards. The proxy itself is internal/proxy (imported as proxymodel);
// the faults are package fault's.
package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	proxymodel "github.com/again-go/again/cmd/again/internal/proxy"
	"github.com/again-go/again/fault"
	"github.com/again-go/again/limiter"
	"github.com/again-go/again/shed"
	"github.com/spf13/cobra"
)

// Options is what one `again proxy` was asked.
type Options struct {
	Env           *cmdutil.Env
	Listen        string           // --listen, as given
	To            string           // --to
	Flags         proxymodel.Flags // the fault flags
	Scenario      string           // --scenario, a file name; "" none
	Seed          uint64           // --seed
	SeedSet       bool             // --seed was given: it overrides the scenario's
	MaxActive     int              // --max-active
	HeaderControl bool             // --header-control
	Quiet         bool             // -q, --quiet: no start line, no live line
	Shed          string           // --shed: N, adaptive, or "" (or 0) for none
	Format        string           // --format: text or json
	// Listener, if not nil, is used in place of listening on Listen
	// (tests).
	Listener net.Listener
	// Live forces the live line on (true) or off (false); nil means on
	// when Env.Stderr is a terminal.
	Live *bool
}

// DefaultMaxActive is --max-active's default: at most this many faults in
// progress at once, so that stalls and delays cannot pile up without end.
const DefaultMaxActive = 1000

// NewCmd returns `again proxy`.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	opts := &Options{Env: env, Listen: "127.0.0.1:8080", MaxActive: DefaultMaxActive}
	cmd := &cobra.Command{
		Use:   "proxy --to URL [faults]",
		Short: "Forward HTTP to a service through injected faults: statuses, resets, latency, outages",
		Long: `proxy forwards every request to --to, and only there, injecting faults on
the way (statuses, resets, cut bodies, stalls, latency, outages, rate
limits) until Ctrl-C; then it prints what it did. Guide: docs/cli.md (proxy).`,
		Example: `  # 20 % of requests fail with a 503 asking for a 2 s wait.
  again proxy --to http://127.0.0.1:9000 --fail 0.2:503 --retry-after 2s

  # Lognormal latency and a few connections reset mid-body, on /api/ only.
  again proxy --to http://127.0.0.1:9000 --latency lognormal:5ms,1.2 \
    --reset mid-body:0.05 --match path=/api/

  # A 20 s outage 10 s after the start, and a rate limit of 100 per second.
  again proxy --to http://127.0.0.1:9000 --outage 20s@10s --rate 100/s

  # Keep a service at 64 requests in flight, shedding the excess in time.
  again proxy --to http://127.0.0.1:9000 --shed 64

  # Faults from a file (docs/fault.md has the format), repeatable with a seed.
  again proxy --to http://127.0.0.1:9000 --scenario storm.json --seed 7`,
		Args: cmdutil.NoArgs,
	}
	fs := cmd.Flags()
	fs.Var(cmdutil.Text(&opts.Listen, "addr"), "listen", "address to listen on; a bare port is loopback")
	fs.Var(cmdutil.Text(&opts.To, "url"), "to", "the upstream's URL: every request goes there (required)")
	fs.Var(cmdutil.Repeated(&opts.Flags.Fail, "share[:status]"), "fail", "answer a status to a share of the requests: "+proxymodel.FailSyntax)
	fs.Var(cmdutil.Repeated(&opts.Flags.Latency, "delay"), "latency", "delay requests: "+proxymodel.LatencySyntax)
	fs.Var(cmdutil.Repeated(&opts.Flags.Reset, "stage[:share]"), "reset", "reset connections: "+proxymodel.ResetSyntax+fmt.Sprintf("; mid-body after half the body, or after 1 to %d bytes of a chunked one", fault.MaxDrawnBytes))
	fs.Var(cmdutil.Repeated(&opts.Flags.Outage, "duration@start"), "outage", "503s on a timeline: "+proxymodel.OutageSyntax)
	fs.Var(cmdutil.Repeated(&opts.Flags.Rate, "n/unit"), "rate", "rate-limit: "+proxymodel.RateSyntax)
	fs.Var(cmdutil.Repeated(&opts.Flags.Cut, "share"), "cut", "cut bodies short: "+proxymodel.CutSyntax)
	fs.Var(cmdutil.Repeated(&opts.Flags.Stall, "share"), "stall", "stall requests: "+proxymodel.StallSyntax)
	fs.Var(cmdutil.Text(&opts.Flags.RetryAfter, "duration"), "retry-after", "Retry-After of outages, rates and failures: "+proxymodel.RetryAfterSyntax)
	fs.Var(cmdutil.Repeated(&opts.Flags.Match, "key=value"), "match", "apply the faults only to matching requests: "+proxymodel.MatchSyntax)
	fs.Var(cmdutil.Text(&opts.Scenario, "file"), "scenario", "read faults from a JSON file")
	fs.Uint64Var(&opts.Seed, "seed", 0, "seed of the faults' choices and delays")
	fs.IntVar(&opts.MaxActive, "max-active", DefaultMaxActive, "most `n` faults in progress at once; 0 for no cap")
	fs.BoolVar(&opts.HeaderControl, "header-control", false, "let requests ask for faults with Envoy's fault headers")
	fs.Var(cmdutil.Text(&opts.Shed, "n|adaptive"), "shed", "forward at most n requests at once, or adaptively, queue or shed the rest (503); 0 for none")
	fs.BoolVarP(&opts.Quiet, "quiet", "q", false, "print no start line and no live line on stderr, only the report, warnings and errors")
	cmdutil.AddFormat(cmd, &opts.Format, cmdutil.FormatText, cmdutil.FormatJSON)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		opts.SeedSet = fs.Changed("seed")
		return proxyRun(cmd.Context(), opts)
	}
	return cmd
}

// config turns opts into the proxy's Config, or a usage error.
func (opts *Options) config() (proxymodel.Config, error) {
	var cfg proxymodel.Config
	if opts.To == "" {
		return cfg, cmdutil.Usagef("--to is required: the URL of the service to forward to")
	}
	to, err := url.Parse(opts.To)
	if err != nil || to.Host == "" || (to.Scheme != "http" && to.Scheme != "https") {
		return cfg, cmdutil.BadValue("--to", opts.To, "an http or https URL with a host, such as http://127.0.0.1:9000")
	}
	if opts.MaxActive < 0 {
		return cfg, cmdutil.BadValue("--max-active", strconv.Itoa(opts.MaxActive), "a whole number of 0 or more (0 for no limit)")
	}
	sc, err := shedConfig(opts.Shed)
	if err != nil {
		return cfg, err
	}
	cfg = proxymodel.Config{To: to, Seed: opts.Seed, MaxActive: opts.MaxActive, HeaderControl: opts.HeaderControl, Shed: sc}
	if opts.Scenario != "" {
		data, err := os.ReadFile(opts.Scenario)
		if err != nil {
			return cfg, cmdutil.Usagef("--scenario: %v", err)
		}
		sc, faults, err := proxymodel.ParseScenario(data)
		if err != nil {
			return cfg, cmdutil.Usagef("--scenario %s: %s", opts.Scenario, specMessage(err))
		}
		cfg.Faults = faults
		if !opts.SeedSet {
			cfg.Seed = sc.Seed
		}
		if sc.MaxActive > 0 {
			cfg.MaxActive = sc.MaxActive
		}
	}
	if err := requireUnits(opts.Flags); err != nil {
		return cfg, err
	}
	faults, err := opts.Flags.Faults()
	if err != nil {
		return cfg, specUsage(err)
	}
	cfg.Faults = append(cfg.Faults, faults...)
	return cfg, nil
}

// shedConfig returns the shed.Config of --shed v, nil for none ("" or 0),
// or a usage error.
func shedConfig(v string) (*shed.Config, error) {
	n, adaptive, err := cmdutil.ParseShed(v)
	switch {
	case err != nil:
		return nil, err
	case adaptive:
		// MaxWait zero: the Shedder queues, the limit only admits.
		l, err := limiter.New(limiter.Config{Algorithm: cmdutil.ShedAdaptiveLimit()})
		if err != nil {
			return nil, err
		}
		return &shed.Config{Adaptive: l}, nil
	case n == 0:
		return nil, nil
	}
	return &shed.Config{Limit: n}, nil
}

// proxyRun serves until ctx ends (Ctrl-C), then reports.
func proxyRun(ctx context.Context, opts *Options) error {
	cfg, err := opts.config()
	if err != nil {
		return err
	}
	p, err := proxymodel.New(cfg)
	if err != nil {
		var fe *fault.FieldError
		if errors.As(err, &fe) || errors.Is(err, proxymodel.ErrSpec) {
			return specUsage(err)
		}
		return err
	}
	ln := opts.Listener
	if ln == nil {
		if ln, err = listen(opts.Listen); err != nil {
			return err
		}
	}
	env := opts.Env
	faults := fmt.Sprintf("%d faults", len(cfg.Faults))
	switch len(cfg.Faults) {
	case 0:
		faults = "no faults"
	case 1:
		faults = "1 fault"
	}
	if !opts.Quiet {
		fmt.Fprintf(env.Stderr, "again proxy: forwarding %s to %s with %s\n", ln.Addr(), cfg.To.Redacted(), faults)
	}
	// A warning, not progress: -q keeps it.
	if ip, ok := ln.Addr().(*net.TCPAddr); ok && !ip.IP.IsLoopback() {
		fmt.Fprintf(env.Stderr, "again proxy: listening on %s, beyond this machine\n", ln.Addr())
	}
	live := !opts.Quiet && (opts.Live != nil && *opts.Live || opts.Live == nil && cmdutil.IsTerminal(env.Stderr))
	var liveLine func(proxymodel.Stats)
	if live {
		liveLine = func(s proxymodel.Stats) { fmt.Fprintf(env.Stderr, "\r\033[Kagain proxy: %s", s.Line()) }
	}
	err = proxymodel.Serve(ctx, ln, p, liveLine, time.Second, 5*time.Second)
	if live {
		fmt.Fprint(env.Stderr, "\r\033[K")
	}
	s := p.Stats()
	if opts.Format == cmdutil.FormatJSON {
		b, _ := json.Marshal(s)
		fmt.Fprintf(env.Stdout, "%s\n", b)
	} else {
		fmt.Fprint(env.Stdout, s.Table())
	}
	if err != nil {
		return err
	}
	// Stopped by a signal, the usual end of a proxy: its report first,
	// then 128+N as every command, so that a script or supervisor sees
	// that it did not end by itself.
	if sig := cmdutil.SignalCause(ctx); sig != nil {
		return cmdutil.Stopped(sig, "")
	}
	return nil
}

// requireUnits refuses a bare number in a duration or a rate of the fault
// flags, as every duration and rate flag of every command does
// (cmdutil.RequireUnit, cmdutil.RequireRateUnit), rather than the syntax
// alone.
func requireUnits(fl proxymodel.Flags) error {
	check := func(flag string, values ...string) error {
		for _, v := range values {
			if err := cmdutil.RequireUnit(flag, v); err != nil {
				return err
			}
		}
		return nil
	}
	if err := check("latency", fl.Latency...); err != nil {
		return err
	}
	for _, v := range fl.Rate {
		if err := cmdutil.RequireRateUnit("rate", v); err != nil {
			return err
		}
	}
	if err := check("retry-after", strings.TrimPrefix(fl.RetryAfter, "date:")); err != nil {
		return err
	}
	for _, o := range fl.Outage {
		d, start, _ := strings.Cut(o, "@")
		if err := check("outage", d, start); err != nil {
			return err
		}
	}
	return nil
}

// specMessage returns err's message for the command's line, which has its
// own prefix: a *proxymodel.SpecError's without the package's.
func specMessage(err error) string {
	var se *proxymodel.SpecError
	if errors.As(err, &se) {
		return se.Message()
	}
	return err.Error()
}

// specUsage returns err as a usage error, a *proxymodel.SpecError in the
// style of every bad value (cmdutil.BadValue).
func specUsage(err error) error {
	var se *proxymodel.SpecError
	if errors.As(err, &se) {
		return cmdutil.BadValue(se.Flag, se.Value, se.Want)
	}
	return cmdutil.Usage(err.Error())
}

// listen listens on --listen's address. An address this machine cannot
// have (a host that does not resolve, or is not one of its own) is a
// usage error; one it could have but not now (in use, a privileged port)
// is a failure. Both name the flag.
func listen(flag string) (net.Listener, error) {
	addr, err := proxymodel.ListenAddr(flag)
	if err != nil {
		return nil, specUsage(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	var dns *net.DNSError
	if errors.As(err, &dns) || errors.Is(err, syscall.EADDRNOTAVAIL) {
		why := cause(err).Error()
		if dns != nil {
			why = dns.Name + ": " + dns.Err // without the resolver's address
		}
		return nil, cmdutil.BadValue("--listen", flag, "%s, a host of this machine; cannot listen there (%s)", proxymodel.ListenSyntax, why)
	}
	return nil, fmt.Errorf("--listen %s: cannot listen on %s: %w", flag, addr, cause(err))
}

// cause returns the reason of a net.Listen error, without the operation
// and address it repeats.
func cause(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err
	}
	return err
}
