package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/cmd/again/internal/cmdutil"
	simmodel "github.com/again-go/again/cmd/again/internal/sim"
	"github.com/again-go/again/cmd/again/internal/sim/storm"
	"github.com/spf13/pflag"
	"go.uber.org/goleak"
)

func TestSimUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"sim", "storms"}, `again sim: unknown model "storms"; want one of fleet, hedge, limit, occ, outage, storm, throttle (see 'again sim --help')`},
		{[]string{"sim"}, `again sim: missing the model; want one of fleet, hedge, limit, occ, outage, storm, throttle (see 'again sim --help')`},
		{[]string{"sim", "--seed", "1"}, `again sim: unknown flag: --seed (see 'again sim --help')`},
		{[]string{"sim", "occ", "--clients", "0"}, `again sim occ: --clients "0": want a comma-separated list of whole numbers from 1 to 100000, or ranges such as 10-190/10`},
		{[]string{"sim", "occ", "--clients", "50-10/10"}, `again sim occ: --clients "50-10/10": want a comma-separated list of whole numbers from 1 to 100000, or ranges such as 10-190/10`},
		{[]string{"sim", "occ", "--strategy", "full,fast"}, `again sim occ: --strategy "full,fast": want a comma-separated list of none, exponential, full, equal, decorrelated`},
		{[]string{"sim", "occ", "--runs", "0"}, `again sim occ: --runs "0": want a whole number from 1 to 100000`},
		{[]string{"sim", "occ", "--clients", "100000", "--runs", "1"}, `again sim occ: the sum of --clients² × --runs: want at most 100000000, not 100000² × 1 = 10000000000`},
		{[]string{"sim", "occ", "--clients", "1000,2000", "--runs", "100"}, `again sim occ: the sum of --clients² × --runs: want at most 100000000, not (1000² + 2000²) × 100 = 5000000 × 100 = 500000000`},
		{[]string{"sim", "occ", "--clients", "1000-3000/500"}, `again sim occ: the sum of --clients² × --runs: want at most 100000000, not (1000² + 1500² + … + 3000²) × 100 = 22500000 × 100 = 2250000000`},
		{[]string{"sim", "occ", "--format", "xml"}, `again sim occ: --format "xml": want one of text, csv, json or svg`},
		{[]string{"sim", "occ", "--seed", "x"}, `again sim occ: --seed "x": want a whole number from 0 to 18446744073709551615`},
		{[]string{"sim", "outage", "--strategy", "shared"}, `again sim outage: --strategy "shared": want a comma-separated list of none, immediate, backoff, budget, breaker`},
		{[]string{"sim", "outage", "--rate", "-1/s"}, `again sim outage: --rate "-1/s": want a rate n/unit, such as 40/s, 10/100ms or 600/m`},
		// A rate is n/unit in every command, as proxy --rate's: a bare number
		// is refused as a duration without a unit is.
		{[]string{"sim", "outage", "--rate", "40"}, `again sim outage: --rate "40": want a rate with a unit: 40/s, 40/m or another n/unit such as 10/100ms`},
		{[]string{"sim", "outage", "--spike-rate", "80"}, `again sim outage: --spike-rate "80": want a rate with a unit: 80/s, 80/m or another n/unit such as 10/100ms`},
		{[]string{"sim", "outage", "--rate", "40/sec"}, `again sim outage: --rate "40/sec": want a rate n/unit, such as 40/s, 10/100ms or 600/m`},
		{[]string{"sim", "outage", "--rate", "0/s"}, `again sim outage: --rate "0/s": want a rate above 0 and up to 10000/s (n/unit, such as 40/s, 10/100ms or 600/m)`},
		{[]string{"sim", "outage", "--rate", "10001/s"}, `again sim outage: --rate "10001/s": want a rate above 0 and up to 10000/s (n/unit, such as 40/s, 10/100ms or 600/m)`},
		{[]string{"sim", "outage", "--rate", "11/ms"}, `again sim outage: --rate "11/ms": want a rate above 0 and up to 10000/s (n/unit, such as 40/s, 10/100ms or 600/m)`},
		{[]string{"sim", "outage", "--spike", "2h"}, `again sim outage: --spike "2h": want a duration from 0s to 1h (Go syntax such as 500ms, 1.5s or 2m)`},
		{[]string{"sim", "outage", "--spike", "30s", "--duration", "50s"}, `again sim outage: --duration "50s": want at least 55s (past the spike's end at 50s, plus 5s to measure a recovery)`},
		{[]string{"sim", "outage", "--rate", "10000/s", "--duration", "1h"}, `again sim outage: --rate × (--duration − --spike) + --spike-rate × --spike: want at most 1000000 requests, not 10000/s × 3580s + 80/s × 20s = 35801600`},
		{[]string{"sim", "outage", "--rate", "600000/m", "--spike", "0"}, `again sim outage: --rate × (--duration − --spike) + --spike-rate × --spike: want at most 1000000 requests, not 10000/s × 120s + 80/s × 0s = 1200000`},
		{[]string{"sim", "outage", "--spike", "30"}, `again sim outage: --spike "30": want a duration with a unit, such as 30s or 30ms (a bare number is seconds to timeout and curl, milliseconds to the calculator page)`},
		{[]string{"sim", "outage", "--multiplier", "0.5"}, `again sim outage: --multiplier "0.5": want a finite number >= 1`},
		{[]string{"sim", "throttle", "--shed", "some"}, `again sim throttle: --shed "some": want a whole number (0 for no shedding) or adaptive`},
		{[]string{"sim", "outage", "--shed", "-3"}, `again sim outage: --shed "-3": want a whole number (0 for no shedding) or adaptive`},
		{[]string{"sim", "outage", "--shed", "100001"}, `again sim outage: --shed "100001": want a whole number from 0 to 100000 (0 for no shedding) or adaptive`},
		{[]string{"sim", "outage", "--outage", "20s"}, `again sim outage: --outage "20s": want duration@start, such as 20s@20s: for 20 s from t = 20 s (again proxy --outage's syntax)`},
		{[]string{"sim", "outage", "--outage", "0s@20s"}, `again sim outage: --outage "0s": want a duration from 1ms to 1h (Go syntax such as 500ms, 1.5s or 2m)`},
		{[]string{"sim", "outage", "--outage", "20s@20"}, `again sim outage: --outage "20": want a duration with a unit, such as 20s or 20ms (a bare number is seconds to timeout and curl, milliseconds to the calculator page)`},
		{[]string{"sim", "outage", "--outage", "20s@20s", "--duration", "30s"}, `again sim outage: --duration "30s": want at least 45s (past the outage's end at 40s, plus 5s to measure a recovery)`},
		// With --spike too, both triggers must fit.
		{[]string{"sim", "outage", "--outage", "5s@0s", "--spike", "20s", "--duration", "30s"}, `again sim outage: --duration "30s": want at least 45s (past the spike's end at 40s, plus 5s to measure a recovery)`},
		{[]string{"sim", "fleet", "--failure", "0-2/0.5"}, `again sim fleet: --failure "0-2/0.5": want a comma-separated list of probabilities from 0 to 1, or ranges such as 0-1/0.1`},
		{[]string{"sim", "fleet", "--strategy", "immediate"}, `again sim fleet: --strategy "immediate": want a comma-separated list of none, retries, bucket, budget, shared, breaker`},
		// Each list within its own limit; together, a table of 14 GB.
		{[]string{"sim", "fleet", "--clients", "1-9998", "--failure", "0-1/0.0002"}, `again sim fleet: --clients × --failure × --strategy: want at most 100000 cells, not 9998 × 5001 × 6 = 299999988`},
		{[]string{"sim", "fleet", "--clients", "1-1000", "--failure", "0-1/0.02", "--strategy", "none,retries"}, `again sim fleet: --clients × --failure × --strategy: want at most 100000 cells, not 1000 × 51 × 2 = 102000`},
		{[]string{"sim", "storm", "--clients", "0"}, `again sim storm: --clients "0": want a whole number from 1 to 100000`},
		{[]string{"sim", "storm", "--bucket", "0"}, `again sim storm: --bucket "0": want a duration from 1µs to 1h (Go syntax such as 500ms, 1.5s or 2m)`},
		{[]string{"sim", "storm", "--max", "0", "--multiplier", "10", "--retries", "30", "--bucket", "1s"}, `again sim storm: --bucket: want wide enough to hold the storm in at most 100000 buckets (or cap the delays), not 1s, and the delays add up to more than 292 years`},
		{[]string{"sim", "storm", "--initial", "1s", "--retries", "20", "--bucket", "1ms"}, `again sim storm: --bucket: want wide enough to hold the storm in at most 100000 buckets (or cap the delays), not 1ms, and the last attempt starts at 2m55s, in bucket 175001`},
		// --retries is within its range, --clients within its own: the
		// limit is on the two together.
		{[]string{"sim", "storm", "--retries", "100000"}, `again sim storm: --clients × (--retries + 1): want at most 10000000 attempts, not 100 × 100001 = 10000100`},
		{[]string{"sim", "storm", "--clients", "100000", "--retries", "100"}, `again sim storm: --clients × (--retries + 1): want at most 10000000 attempts, not 100000 × 101 = 10100000`},
		{[]string{"sim", "storm", "--jitter", "some"}, `again sim storm: --jitter "some": want none, full, equal, decorrelated, proportional:F or grpc:F with F in (0, 1]`},
		{[]string{"sim", "hedge", "--dist", "weibull"}, `again sim hedge: --dist "weibull": want pareto or lognormal`},
		{[]string{"sim", "hedge", "--alpha", "1"}, `again sim hedge: --alpha "1": want a number above 1 and up to 100`},
		{[]string{"sim", "hedge", "--scale", "5"}, `again sim hedge: --scale "5": want a duration with a unit, such as 5s or 5ms (a bare number is seconds to timeout and curl, milliseconds to the calculator page)`},
		{[]string{"sim", "hedge", "--quantiles", "0,1"}, `again sim hedge: --quantiles "0,1": want a comma-separated list of 0 or numbers in (0, 1), or ranges such as 0.5-0.95/0.05`},
		{[]string{"sim", "hedge", "--quantiles", "0-1/0.1"}, `again sim hedge: --quantiles "0-1/0.1": want a comma-separated list of 0 or numbers in (0, 1), or ranges such as 0.5-0.95/0.05`},
		{[]string{"sim", "hedge", "--load", "1.2"}, `again sim hedge: --load "1.2": want a utilisation in (0, 1)`},
		{[]string{"sim", "hedge", "--max-hedges", "4"}, `again sim hedge: --max-hedges "4": want a whole number from 1 to 3`},
		{[]string{"sim", "hedge", "--requests", "10"}, `again sim hedge: --requests "10": want a whole number from 1000 to 1000000`},
		{[]string{"sim", "throttle", "--demand", "0"}, `again sim throttle: --demand "0": want a comma-separated list of ratios above 0 and up to 100, or ranges such as 1-30/1`},
		{[]string{"sim", "throttle", "--strategy", "breaker"}, `again sim throttle: --strategy "breaker": want a comma-separated list of none, budget, sent-only, sre-k2, sre-k1.1, cubic`},
		{[]string{"sim", "throttle", "--capacity", "0"}, `again sim throttle: --capacity "0": want a rate above 0 and up to 10000/s (n/unit, such as 40/s, 10/100ms or 600/m)`},
		{[]string{"sim", "throttle", "--capacity", "100"}, `again sim throttle: --capacity "100": want a rate with a unit: 100/s, 100/m or another n/unit such as 10/100ms`},
		{[]string{"sim", "throttle", "--demand", "100", "--capacity", "10000/s"}, `again sim throttle: max(--demand) × --capacity × 300s: want at most 1000000 requests, not 100 × 10000/s × 300s = 300000000`},
		// Said "from 1" and refused 1 "from 1000".
		{[]string{"sim", "hedge", "--requests", "0"}, `again sim hedge: --requests "0": want a whole number from 1000 to 1000000`},
		// Each flag within its range, together beyond the bound.
		{[]string{"sim", "hedge", "--requests", "1000000", "--max-hedges", "3", "--quantiles", "0.05-0.95/0.05"},
			`again sim hedge: the number of --quantiles × --requests × (1 + --max-hedges): want at most 2500000 attempts, not 19 × 1000000 × 4 = 76000000`},
		{[]string{"sim", "fleet", "extra"}, `again sim fleet: unexpected argument "extra"; fleet takes only flags (see 'again sim fleet --help')`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			wantUsageError(t, run(t, tt.args...), tt.want)
		})
	}
}

// TestSimLimitsInHelp checks that the help of each flag in a limit on
// several flags together states the limit.
func TestSimLimitsInHelp(t *testing.T) {
	tests := []struct {
		model string
		flags []string
		limit string
	}{
		{"storm", []string{"clients", "retries"}, "--clients × (--retries + 1) at most 10000000 attempts"},
		{"occ", []string{"clients", "runs"}, "the sum of --clients² × --runs at most 100000000"},
		{"outage", []string{"rate", "spike-rate", "spike", "duration"}, "--rate × (--duration − --spike) + --spike-rate × --spike at most 1000000 requests"},
		{"fleet", []string{"clients", "failure", "strategy"}, "--clients × --failure × --strategy at most 100000 cells"},
		{"throttle", []string{"demand", "capacity"}, "max(--demand) × --capacity × 300s at most 1000000 requests"},
	}
	for _, tt := range tests {
		_, flags, _ := strings.Cut(run(t, "sim", tt.model, "--help").Stdout, "\nFlags:\n")
		for _, flag := range tt.flags {
			i := strings.Index(flags, "      --"+flag+" ")
			if i < 0 {
				t.Errorf("again sim %s --help: no --%s in %s", tt.model, flag, flags)
				continue
			}
			if line, _, _ := strings.Cut(flags[i:], "\n"); !strings.Contains(line, tt.limit) {
				t.Errorf("again sim %s --help: %q; want it to state %q", tt.model, line, tt.limit)
			}
		}
	}
}

// simJSON runs a sim command with --format json and returns its rows.
func simJSON(t *testing.T, args ...string) []map[string]any {
	t.Helper()
	r := run(t, append(args, "--format", "json")...)
	if r.Code != 0 || r.Stderr != "" {
		t.Fatalf("again %v: exit %d, stderr %q", args, r.Code, r.Stderr)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &rows); err != nil {
		t.Fatalf("again %v: %v in %s", args, err, r.Stdout)
	}
	return rows
}

// TestSimJSONFields checks the field names and types the issue fixes: an
// array of flat objects, numbers as numbers, recovery_s null when never.
func TestSimJSONFields(t *testing.T) {
	tests := []struct {
		args []string
		rows int
		keys []string
	}{
		{[]string{"sim", "occ", "--clients", "5,10", "--runs", "3"}, 10, []string{"algorithm", "calls", "clients", "time_ms"}},
		{[]string{"sim", "outage", "--strategy", "none,immediate"}, 2, []string{"amplification", "recovered", "recovery_s", "strategy", "success_ratio"}},
		{[]string{"sim", "outage", "--strategy", "none,immediate", "--shed", "100"}, 2, []string{"amplification", "queue_delay_ms", "recovered", "recovery_s", "shed", "strategy", "success_ratio"}},
		{[]string{"sim", "outage", "--strategy", "backoff", "--shed", "adaptive", "--per-second", "--duration", "30s", "--spike", "5s"}, 30, []string{"attempts", "new_requests", "queue_delay_ms", "second", "shed", "strategy", "successes"}},
		{[]string{"sim", "outage", "--strategy", "backoff", "--shed", "0", "--per-second", "--duration", "30s", "--spike", "5s"}, 30, []string{"attempts", "new_requests", "second", "strategy", "successes"}},
		{[]string{"sim", "fleet", "--clients", "10", "--failure", "0.5,1"}, 12, []string{"amplification", "clients", "failure", "strategy", "success_ratio"}},
		{[]string{"sim", "storm", "--retries", "2", "--initial", "1s", "--max", "1s", "--jitter", "none"}, 3, []string{"attempts", "no_jitter", "start_ms"}},
		{[]string{"sim", "hedge", "--requests", "1000", "--quantiles", "0,0.95"}, 6, []string{"budget", "extra_load", "hedge_quantile", "overloaded", "p50_ms", "p999_ms", "p99_ms"}},
		{[]string{"sim", "throttle", "--demand", "2", "--capacity", "20/s", "--strategy", "sre-k2,budget"}, 2, []string{"backend_load_ratio", "demand_ratio", "goodput_ratio", "latency_p50_ms", "latency_p99_ms", "p_reject", "throttler"}},
		{[]string{"sim", "throttle", "--demand", "2", "--capacity", "20/s", "--strategy", "sre-k2,budget", "--shed", "1"}, 2, []string{"backend_load_ratio", "demand_ratio", "goodput_ratio", "latency_p50_ms", "latency_p99_ms", "p_reject", "queue_delay_ms", "shed_ratio", "throttler"}},
	}
	for _, tt := range tests {
		rows := simJSON(t, tt.args...)
		if len(rows) != tt.rows {
			t.Errorf("again %v: %d rows, want %d", tt.args, len(rows), tt.rows)
		}
		for _, row := range rows {
			var keys []string
			for k, v := range row {
				keys = append(keys, k)
				switch k {
				case "algorithm", "strategy", "throttler":
					if _, ok := v.(string); !ok {
						t.Errorf("again %v: %s = %#v, want a string", tt.args, k, v)
					}
				case "recovered", "budget", "overloaded":
					if _, ok := v.(bool); !ok {
						t.Errorf("again %v: %s = %#v, want a bool", tt.args, k, v)
					}
				case "recovery_s":
					if _, ok := v.(float64); !ok && (v != nil || row["recovered"] != false) {
						t.Errorf("again %v: recovery_s = %#v with recovered %v", tt.args, v, row["recovered"])
					}
				default:
					if _, ok := v.(float64); !ok {
						t.Errorf("again %v: %s = %#v, want a number", tt.args, k, v)
					}
				}
			}
			slices.Sort(keys)
			if !slices.Equal(keys, tt.keys) {
				t.Errorf("again %v: fields %v, want %v", tt.args, keys, tt.keys)
			}
		}
	}
	out := simJSON(t, "sim", "outage", "--strategy", "immediate,budget")
	if out[0]["recovery_s"] != nil || out[1]["recovery_s"] == nil {
		t.Errorf("again sim outage: recovery_s %v for immediate, %v for budget; want null, then a number", out[0]["recovery_s"], out[1]["recovery_s"])
	}
	// A hard outage replaces the spike: immediate retries, answered at
	// once, triple the load while it lasts, and nothing is left to
	// recover from once it ends.
	out = simJSON(t, "sim", "outage", "--outage", "20s@20s", "--strategy", "none,immediate")
	if a := out[1]["amplification"].(float64); a < 2.9 || out[0]["amplification"].(float64) != 1 {
		t.Errorf("again sim outage --outage 20s@20s: amplification %v for none, %v for immediate; want 1, then about 3", out[0]["amplification"], a)
	}
	spike := simJSON(t, "sim", "outage", "--strategy", "immediate")
	if out[1]["recovery_s"] == nil || spike[0]["recovery_s"] != nil {
		t.Errorf("again sim outage: immediate recovers after %v s from a hard outage, %v s from a spike; want a number, then null", out[1]["recovery_s"], spike[0]["recovery_s"])
	}
}

// TestSimFormatsAgree checks that the CSV and the table carry the JSON's
// columns, and that a seed gives the same output twice.
func TestSimFormatsAgree(t *testing.T) {
	args := []string{"sim", "fleet", "--clients", "100", "--failure", "1"}
	csv := run(t, append(args, "--format", "csv")...)
	lines := strings.Split(strings.TrimSpace(csv.Stdout), "\n")
	if csv.Code != 0 || lines[0] != "clients,failure,strategy,amplification,success_ratio" || len(lines) != 7 {
		t.Fatalf("again %v --format csv: exit %d, output %q", args, csv.Code, csv.Stdout)
	}
	if !slices.Contains(lines, "100,1,retries,4,0") {
		t.Errorf("again %v --format csv lacks 100,1,retries,4,0:\n%s", args, csv.Stdout)
	}
	table := run(t, args...)
	if !strings.HasPrefix(table.Stdout, "clients  failure  strategy  amplification  success_ratio\n") {
		t.Errorf("again %v: table header %q", args, strings.SplitN(table.Stdout, "\n", 2)[0])
	}
	if again := run(t, args...); again.Stdout != table.Stdout || table.Stderr != "" {
		t.Errorf("again %v twice: %q, then %q (stderr %q)", args, table.Stdout, again.Stdout, table.Stderr)
	}
}

func TestSimSVG(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"sim", "occ", "--clients", "5,10", "--runs", "2"},
		{"sim", "outage", "--strategy", "backoff,budget"},
		{"sim", "fleet", "--clients", "10,100", "--failure", "0,1"},
		{"sim", "hedge", "--requests", "1000", "--quantiles", "0,0.9"},
	} {
		file := filepath.Join(dir, args[1]+".svg")
		r := run(t, append(args, "--svg", file)...)
		b, err := os.ReadFile(file)
		if r.Code != 0 || err != nil {
			t.Fatalf("again %v --svg: exit %d, stderr %q, %v", args, r.Code, r.Stderr, err)
		}
		svg := string(b)
		for _, want := range []string{`<svg xmlns="http://www.w3.org/2000/svg"`, "<title>", "</svg>"} {
			if !strings.Contains(svg, want) {
				t.Errorf("again %v --svg: the chart lacks %q", args, want)
			}
		}
		if args[1] == "outage" && !strings.Contains(svg, ">spike</text>") {
			t.Errorf("again sim outage --svg: the spike is not labelled")
		}
	}
	r := run(t, "sim", "fleet", "--clients", "10", "--svg", filepath.Join(dir, "no", "such", "dir.svg"))
	if r.Code != cmdutil.ExitFailure || !strings.HasPrefix(r.Stderr, "again sim fleet: --svg: ") {
		t.Errorf("unwritable --svg: exit %d, stderr %q; want 1 and an error naming --svg", r.Code, r.Stderr)
	}
}

// TestSimStormIsStormTable checks that the command prints storm.Table's
// numbers for the policy its flags describe: the page's storm view calls
// the same function, so the two agree.
func TestSimStormIsStormTable(t *testing.T) {
	rows := simJSON(t, "sim", "storm", "--initial", "200ms", "--multiplier", "3", "--max", "5s", "--retries", "5",
		"--jitter", "equal", "--clients", "40", "--bucket", "250ms", "--seed", "9")
	want, err := storm.Table(storm.Config{
		Policy:  backoff.Policy{Initial: 200 * time.Millisecond, Multiplier: 3, Max: 5 * time.Second, Retries: 5, Jitter: backoff.EqualJitter},
		Clients: 40, Bucket: 250 * time.Millisecond, Seed: 9,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(want) {
		t.Fatalf("again sim storm printed %d rows, storm.Table gives %d", len(rows), len(want))
	}
	for i, w := range want {
		r := rows[i]
		if r["start_ms"] != w.StartMS || r["attempts"] != float64(w.Attempts) || r["no_jitter"] != float64(w.NoJitter) {
			t.Errorf("row %d: %v, want %+v", i, r, w)
		}
	}
}

// TestSimListExamples: every sim flag whose message suggests a range, such
// as "ranges such as 10-190/10", suggests one that it accepts.
func TestSimListExamples(t *testing.T) {
	// The parser of each such flag, as its command calls it.
	parsers := map[string]func(string) error{
		"clients":   func(s string) error { _, err := parseClients(s); return err },
		"failure":   func(s string) error { _, err := parseFailures(s); return err },
		"quantiles": func(s string) error { _, err := parseQuantiles(s); return err },
		"demand":    func(s string) error { _, err := parseDemands(s); return err },
	}
	example := regexp.MustCompile(`, or ranges such as (\S+)$`)
	seen := map[string]bool{}
	models := NewCmd(&cmdutil.Env{}).Commands()
	if len(models) < 5 {
		t.Fatalf("sim has only %d models", len(models))
	}
	for _, cmd := range models {
		path := []string{"sim", cmd.Name()}
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Value.Type() != "list" {
				return
			}
			// "," is no list: the command stops at it, before any run.
			r := run(t, append(path, "--"+f.Name+"=,")...)
			if r.Code != cmdutil.ExitUsage {
				t.Fatalf("again %s --%s=,: exit %d, stderr %q; want a usage error", strings.Join(path, " "), f.Name, r.Code, r.Stderr)
			}
			m := example.FindStringSubmatch(strings.TrimSpace(r.Stderr))
			if m == nil {
				return // a list of names, such as --strategy
			}
			parse := parsers[f.Name]
			if parse == nil {
				t.Errorf("again %s --%s suggests %s; add its parser to this test", strings.Join(path, " "), f.Name, m[1])
				return
			}
			seen[f.Name] = true
			if err := parse(m[1]); err != nil {
				t.Errorf("again %s --%s suggests %s, which it rejects: %v", strings.Join(path, " "), f.Name, m[1], err)
			}
		})
	}
	for name := range parsers {
		if !seen[name] {
			t.Errorf("no sim command suggested a range for --%s", name)
		}
	}
}

// FuzzSimParseList checks that a list flag either parses into accepted values
// or is a usage error naming the flag, never a panic or a huge list.
func FuzzSimParseList(f *testing.F) {
	for _, s := range []string{"10-190/10", "0-1/0.1", "1,2,3", "0-1/1e-300", "5-1", "1-", "-1", ",", "1e9", "0-1/0", "NaN", "0.1-0.9/0.2,1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs, err := parseFailures(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--failure ") {
				t.Fatalf("parseList(%q): error %q does not name the flag", s, err)
			}
			return
		}
		if len(fs) == 0 || len(fs) > 10_000 {
			t.Fatalf("parseList(%q) = %d values", s, len(fs))
		}
		for _, v := range fs {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("parseList(%q) gave %v", s, v)
			}
		}
		ns, err := parseClients(s)
		for _, n := range ns {
			if err != nil || n < 1 || n > simmodel.MaxClients {
				t.Fatalf("parseClients(%q) gave %v, %v", s, n, err)
			}
		}
	})
}

// TestSimProgress checks the progress line: nothing for a run shorter than
// a second, then "again sim NAME: DONE/N runs" redrawn in place, erased at
// the end. (Run only draws it when stderr is a terminal: the in-process
// runs above, with buffers, print nothing on stderr.)
func TestSimProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b strings.Builder
		var done atomic.Int64
		stop, fin := make(chan struct{}), make(chan struct{})
		go func() { showProgress(&b, "occ", 10, &done, stop); close(fin) }()
		time.Sleep(950 * time.Millisecond)
		synctest.Wait()
		if b.Len() != 0 {
			t.Errorf("progress before a second: %q, want nothing", b.String())
		}
		done.Store(4)
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if want := "\r\033[Kagain sim occ: 4/10 runs"; !strings.HasSuffix(b.String(), want) {
			t.Errorf("progress after a second: %q, want it to end with %q", b.String(), want)
		}
		close(stop)
		<-fin
		if !strings.HasSuffix(b.String(), "runs\r\033[K") {
			t.Errorf("progress at the end: %q, want the line erased", b.String())
		}
	})
	synctest.Test(t, func(t *testing.T) {
		var b strings.Builder
		var done atomic.Int64
		stop, fin := make(chan struct{}), make(chan struct{})
		go func() { showProgress(&b, "occ", 10, &done, stop); close(fin) }()
		time.Sleep(500 * time.Millisecond)
		close(stop)
		<-fin
		if b.Len() != 0 {
			t.Errorf("progress of a half-second run: %q, want nothing", b.String())
		}
	})
}

// TestSimCancel checks that a cancelled command stops without output and
// leaves no goroutine behind.
func TestSimCancel(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var out, errOut strings.Builder
	code := againRun(ctx, []string{"sim", "occ"}, strings.NewReader(""), &out, &errOut)
	if code != cmdutil.ExitFailure || out.Len() != 0 || errOut.String() != "again sim occ: context canceled\n" {
		t.Errorf("cancelled again sim occ: exit %d, stdout %q, stderr %q; want 1, nothing, the cancellation", code, out.String(), errOut.String())
	}
}

// TestSimDocCharts keeps the charts of docs/cli.md true: each is what the
// command the guide shows above it writes (-update rewrites them).
func TestSimDocCharts(t *testing.T) {
	readme, err := os.ReadFile("../../../../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(string(readme)) {
		cmd, ok := strings.CutPrefix(strings.TrimSpace(line), "go run ./cmd/again sim ")
		if !ok || !strings.Contains(cmd, "--svg docs/") {
			continue
		}
		n++
		args := strings.Fields(cmd)
		t.Run(args[0], func(t *testing.T) {
			if args[0] == "occ" && testing.Short() {
				t.Skip("the full OCC table; runs without -short")
			}
			i := slices.Index(args, "--svg")
			committed := filepath.Join("../../../../..", args[i+1])
			args[i+1] = filepath.Join(t.TempDir(), "chart.svg")
			if r := run(t, append([]string{"sim"}, args...)...); r.Code != 0 {
				t.Fatalf("again sim %v: exit %d, stderr %q", args, r.Code, r.Stderr)
			}
			got, _ := os.ReadFile(args[i+1])
			if *update {
				if err := os.WriteFile(committed, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(committed)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s is not what 'again sim %s' writes (%v); rerun the command or this test with -update", committed, cmd, err)
			}
		})
	}
	if n != 5 {
		t.Errorf("docs/cli.md shows %d 'go run ./cmd/again sim ... --svg docs/...' commands, want 5 (one chart per model)", n)
	}
}

// --format svg writes to standard output the chart that --svg writes to a
// file.
func TestSimFormatSVG(t *testing.T) {
	args := []string{"sim", "hedge", "--requests", "1000", "--quantiles", "0,0.95"}
	file := filepath.Join(t.TempDir(), "hedge.svg")
	r := run(t, append(args, "--format", "svg", "--svg", file)...)
	b, err := os.ReadFile(file)
	if r.Code != 0 || err != nil || r.Stdout != string(b) || !strings.HasPrefix(r.Stdout, "<svg") {
		t.Fatalf("again %v --format svg: exit %d, stderr %q, %v; want the chart on stdout, as in the --svg file", args, r.Code, r.Stderr, err)
	}
}

// The chart of a hard outage shades and labels it, and says so in its
// title.
func TestSimOutageHardChart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "outage.svg")
	r := run(t, "sim", "outage", "--outage", "10s@20s", "--strategy", "none", "--svg", file)
	b, err := os.ReadFile(file)
	if r.Code != 0 || err != nil {
		t.Fatalf("again sim outage --outage 10s@20s --svg: exit %d, stderr %q, %v", r.Code, r.Stderr, err)
	}
	for _, want := range []string{">outage</text>", "A 10 s hard outage"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("again sim outage --outage 10s@20s --svg: the chart lacks %q", want)
		}
	}
}

// The charts of a shedding server draw what it shed, and the outage note says
// how it sheds; without --shed it draws no such line.
func TestSimShedCharts(t *testing.T) {
	file := filepath.Join(t.TempDir(), "throttle.svg")
	if r := run(t, "sim", "throttle", "--shed", "1", "--demand", "2", "--capacity", "20/s", "--strategy", "budget", "--svg", file); r.Code != 0 {
		t.Fatalf("again sim throttle --shed 1 --svg: exit %d, stderr %q", r.Code, r.Stderr)
	}
	if b, _ := os.ReadFile(file); !strings.Contains(string(b), ">Shed by the backend</text>") {
		t.Errorf("again sim throttle --shed 1 --svg: the chart lacks the panel of what the backend shed")
	}
	for _, tt := range []struct {
		shed string
		want bool
	}{{"100", true}, {"adaptive", true}, {"0", false}} {
		file := filepath.Join(t.TempDir(), "outage.svg")
		r := run(t, "sim", "outage", "--shed", tt.shed, "--strategy", "backoff", "--svg", file)
		b, err := os.ReadFile(file)
		if r.Code != 0 || err != nil {
			t.Fatalf("again sim outage --shed %s --svg: exit %d, stderr %q, %v", tt.shed, r.Code, r.Stderr, err)
		}
		for _, want := range []string{">shed by the server</text>", "sheds with package shed (--shed " + tt.shed + ")"} {
			if got := strings.Contains(string(b), want); got != tt.want {
				t.Errorf("again sim outage --shed %s --svg: the chart has %q = %v, want %v", tt.shed, want, got, tt.want)
			}
		}
	}
}

// TestSimStoppedBySignal checks that a signal ends sim as it ends every
// command: 128+N and one line naming it.
func TestSimStoppedBySignal(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(&cmdutil.SignalError{Signal: syscall.SIGTERM})
	var out, errOut strings.Builder
	code := againRun(ctx, []string{"sim", "occ"}, strings.NewReader(""), &out, &errOut)
	if code != 128+int(syscall.SIGTERM) || out.Len() != 0 || errOut.String() != "again sim occ: stopped: received SIGTERM\n" {
		t.Errorf("again sim occ stopped by SIGTERM: exit %d, stdout %q, stderr %q; want 143, nothing, the signal", code, out.String(), errOut.String())
	}
}

// A fixed --shed that cannot fit the outage model's server is said on
// stderr, with the limits that fit, and the run goes on; one that fits, or
// an adaptive one, says nothing.
func TestSimOutageShedMisfit(t *testing.T) {
	for _, tt := range []struct{ shed, want string }{
		{"30", "again sim outage: --shed 30 serves at most 23.1 requests a second (each takes 1s + 10ms per request in progress), fewer than the 40 that arrive outside the spike: nothing can recover; a limit from 67 to 199 fits\n"},
		{"250", "again sim outage: --shed 250 lets a request take 3.5s or more (1s + 10ms per request in progress), the clients' 3s timeout: it sheds only once requests time out; a limit from 67 to 199 fits\n"},
		{"100", ""},
		{"adaptive", ""},
	} {
		r := run(t, "sim", "outage", "--shed", tt.shed, "--strategy", "none")
		if r.Code != 0 || r.Stderr != tt.want {
			t.Errorf("again sim outage --shed %s: exit %d, stderr %q; want 0, %q", tt.shed, r.Code, r.Stderr, tt.want)
		}
	}
}
