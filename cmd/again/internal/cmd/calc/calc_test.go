package calc

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	calcmodel "github.com/again-go/again/cmd/again/internal/calc"
	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/retry"
)

// classExample gives overloads a slow schedule with more retries than the
// call allows and a cost of 5, and network errors a fast one, all without
// jitter.
var classExample = []string{"calc", "--retries", "4", "--jitter", "none",
	"--on-overload", "initial=1s,max=30s,retries=6,jitter=none,cost=5", "--on-transient", "initial=50ms,retries=2,jitter=none"}

var workedExample = []string{"calc", "--initial", "500ms", "--multiplier", "2", "--max", "30s", "--retries", "8"}

func withArgs(base []string, more ...string) []string {
	return append(append([]string(nil), base...), more...)
}

func TestCalcFormats(t *testing.T) {
	tests := []struct {
		format string
		want   []string // substrings of stdout
	}{
		{"", []string{"retry   delay   min    mean     max  worst total", "  longest:     1 min 32 s\n", "  mean:        45.8 s\n"}},
		{"text", []string{"    8   30 s*  0 ms    15 s    30 s   1 min 32 s  |████████████████████████|\n"}},
		{"json", []string{`"max_human": "1 min 32 s"`, `"mean_human": "45.8 s"`, `"total_max_ms": 91500`}},
		{"csv", []string{"retry,delay_ms,capped,min_ms,mean_ms,max_ms,total_min_ms,total_mean_ms,total_max_ms\n1,500,false,0,250,500,0,250,500\n", "\n8,30000,true,0,15000,30000,0,45750,91500\n"}},
		{"markdown", []string{"| 8 | 30 s (capped) | 0 ms | 15 s | 30 s | 1 min 32 s |\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			args := workedExample
			if tt.format != "" {
				args = withArgs(args, "--format", tt.format)
			}
			r := run(t, args...)
			if r.Code != 0 || r.Stderr != "" {
				t.Fatalf("exit %d, stderr %q; want 0 and nothing", r.Code, r.Stderr)
			}
			for _, want := range tt.want {
				if !strings.Contains(r.Stdout, want) {
					t.Errorf("--format %s output lacks %q:\n%s", tt.format, want, r.Stdout)
				}
			}
		})
	}
}

// TestCalcJSONWorkedExample checks the JSON fields of the seed's worked
// example: delays, caps and totals.
func TestCalcJSONWorkedExample(t *testing.T) {
	r := run(t, withArgs(workedExample, "--format", "json", "--deadline", "1m")...)
	var got struct {
		Policy struct {
			Initial    json.Number `json:"initial_ms"`
			Multiplier json.Number `json:"multiplier"`
			Max        json.Number `json:"max_ms"`
			Retries    int         `json:"retries"`
			Jitter     string      `json:"jitter"`
		} `json:"policy"`
		Retries []struct {
			Retry  int         `json:"retry"`
			Delay  json.Number `json:"delay_ms"`
			Capped bool        `json:"capped"`
		} `json:"retries"`
		Total struct {
			Min       json.Number `json:"min_ms"`
			Mean      json.Number `json:"mean_ms"`
			Max       json.Number `json:"max_ms"`
			MaxHuman  string      `json:"max_human"`
			MeanHuman string      `json:"mean_human"`
		} `json:"total"`
		Deadline *struct {
			Deadline json.Number `json:"deadline_ms"`
			Fits     bool        `json:"worst_case_fits"`
			Within   int         `json:"retries_within_deadline"`
		} `json:"deadline"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil || r.Code != 0 {
		t.Fatalf("exit %d, JSON error %v:\n%s", r.Code, err, r.Stdout)
	}
	p := got.Policy
	if p.Initial != "500" || p.Multiplier != "2" || p.Max != "30000" || p.Retries != 8 || p.Jitter != "full" {
		t.Errorf("policy = %+v, want 500 ms, 2, 30000 ms, 8, full", p)
	}
	wantDelays := []string{"500", "1000", "2000", "4000", "8000", "16000", "30000", "30000"}
	if len(got.Retries) != len(wantDelays) {
		t.Fatalf("%d retries, want 8", len(got.Retries))
	}
	for i, x := range got.Retries {
		if x.Retry != i+1 || string(x.Delay) != wantDelays[i] || x.Capped != (i >= 6) {
			t.Errorf("retry %d = %+v, want delay %s ms, capped %v", i+1, x, wantDelays[i], i >= 6)
		}
	}
	tot := got.Total
	if tot.Min != "0" || tot.Mean != "45750" || tot.Max != "91500" || tot.MaxHuman != "1 min 32 s" || tot.MeanHuman != "45.8 s" {
		t.Errorf("total = %+v, want 0 / 45750 / 91500, \"45.8 s\", \"1 min 32 s\"", tot)
	}
	if dl := got.Deadline; dl == nil || dl.Deadline != "60000" || dl.Fits || dl.Within != 7 {
		t.Errorf("deadline = %+v, want 60000 ms, does not fit, 7 retries within", dl)
	}
}

func TestCalcDeadlineVerdict(t *testing.T) {
	tests := []struct {
		deadline, want string
	}{
		// The worst case ends at 91.5 s; the loop keeps 100 ms for the last
		// attempt, and shortens the wait that would end later.
		{"2m", "Deadline 2 min: fits; even the worst case, 1 min 32 s, ends at least 100 ms (kept for the last attempt) before it.\n"},
		// A deadline is echoed as given, not rounded as the totals are.
		{"91.6s", "Deadline 1 min 31.6 s: fits; even the worst case, 1 min 32 s, ends at least 100 ms (kept for the last attempt) before it.\n"},
		{"91.5s", "Deadline 1 min 31.5 s: does not fit; the worst case, 1 min 32 s, leaves less than 100 ms (kept for the last attempt) before it, so the retry loop shortens the wait that would end later. The 99th percentile, 1 min 15 s, fits.\n"},
		{"1.5ms", "Deadline 1.5 ms: does not fit; the worst case, 1 min 32 s, leaves less than 100 ms (kept for the last attempt) before it, so the retry loop shortens the wait that would end later. In the worst case not even the first retry starts in time. The 99th percentile, 1 min 15 s, does not fit either.\n"},
		{"1m", "Deadline 1 min: does not fit; the worst case, 1 min 32 s, leaves less than 100 ms (kept for the last attempt) before it, so the retry loop shortens the wait that would end later. In the worst case only the first 7 of 8 retries start in time. The 99th percentile, 1 min 15 s, does not fit either.\n"},
		{"80s", "Deadline 1 min 20 s: does not fit; the worst case, 1 min 32 s, leaves less than 100 ms (kept for the last attempt) before it, so the retry loop shortens the wait that would end later. The 99th percentile, 1 min 15 s, fits.\n"},
		// The worst totals of the first retries are 500 ms, 1.5 s, 3.5 s.
		{"100ms", "Deadline 100 ms: does not fit; the worst case, 1 min 32 s, leaves less than 100 ms (kept for the last attempt) before it, so the retry loop shortens the wait that would end later. In the worst case not even the first retry starts in time. The 99th percentile, 1 min 15 s, does not fit either.\n"},
		{"600ms", "Deadline 600 ms: does not fit; the worst case, 1 min 32 s, leaves less than 100 ms (kept for the last attempt) before it, so the retry loop shortens the wait that would end later. In the worst case only the first of 8 retries starts in time. The 99th percentile, 1 min 15 s, does not fit either.\n"},
		{"1s", "Deadline 1 s: does not fit; the worst case, 1 min 32 s, leaves less than 100 ms (kept for the last attempt) before it, so the retry loop shortens the wait that would end later. In the worst case only the first 2 of 8 retries start in time. The 99th percentile, 1 min 15 s, does not fit either.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.deadline, func(t *testing.T) {
			r := run(t, withArgs(workedExample, "--deadline", tt.deadline)...)
			if r.Code != 0 || !strings.HasSuffix(r.Stdout, tt.want) {
				t.Errorf("exit %d, output ends\n%s\nwant it to end\n%s", r.Code, r.Stdout[max(0, len(r.Stdout)-200):], tt.want)
			}
		})
	}
	// Fewer retries than the worked example's.
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--deadline", "100ms"}, "In the worst case not even the first retry starts in time."},
		{[]string{"--retries", "2", "--initial", "1s", "--deadline", "1050ms"}, "In the worst case only the first of 2 retries starts in time."},
		{[]string{"--retries", "3", "--initial", "1s", "--deadline", "3s"}, "In the worst case only the first 2 of 3 retries start in time."},
	} {
		r := run(t, append([]string{"calc"}, tt.args...)...)
		if r.Code != 0 || !strings.Contains(r.Stdout, tt.want) {
			t.Errorf("again calc %s: exit %d, output\n%s\nwant it to say %q", strings.Join(tt.args, " "), r.Code, r.Stdout, tt.want)
		}
	}
	if r := run(t, workedExample...); strings.Contains(r.Stdout, "Deadline") {
		t.Errorf("output without --deadline has a verdict:\n%s", r.Stdout)
	}
}

func TestCalcUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--multiplier", "0.5"}, "again calc: --multiplier \"0.5\": want a finite number >= 1"},
		{[]string{"--multiplier", "0"}, "again calc: --multiplier \"0\": want a finite number >= 1"},
		{[]string{"--multiplier", "NaN"}, `again calc: --multiplier "NaN": want a finite number >= 1`},
		{[]string{"--multiplier=-Inf"}, `again calc: --multiplier "-Inf": want a finite number >= 1`},
		{[]string{"--multiplier", "+Inf"}, `again calc: --multiplier "+Inf": want a finite number >= 1`},
		{[]string{"--multiplier", "1e400"}, "again calc: --multiplier \"1e400\": want a finite number >= 1"},
		{[]string{"--initial", "1e400"}, "again calc: --initial \"1e400\": want a duration with a unit, such as 1e400s or 1e400ms (a bare number is seconds to timeout and curl, milliseconds to the calculator page)"},
		{[]string{"--initial", "500"}, "again calc: --initial \"500\": want a duration with a unit, such as 500s or 500ms (a bare number is seconds to timeout and curl, milliseconds to the calculator page)"},
		{[]string{"--max", "30"}, "again calc: --max \"30\": want a duration with a unit, such as 30s or 30ms (a bare number is seconds to timeout and curl, milliseconds to the calculator page)"},
		{[]string{"--deadline", "60"}, "again calc: --deadline \"60\": want a duration with a unit, such as 60s or 60ms (a bare number is seconds to timeout and curl, milliseconds to the calculator page)"},
		{[]string{"--initial", "5s", "--max", "1s"}, "again calc: --initial 5s is above --max 1s: every delay would be 1s; lower --initial, or raise --max (0 for no cap)"},
		{[]string{"--initial", "1m"}, "again calc: --initial 1m is above --max 10s (its default): every delay would be 10s; lower --initial, or raise --max (0 for no cap)"},
		{[]string{"--initial", "300y"}, `again calc: --initial "300y": want a duration of 0 or more, with no limit short of 292 years (Go syntax such as 500ms, 1.5s or 2m)`},
		{[]string{"--seed", "-1"}, "again calc: --seed \"-1\": want a whole number from 0 to 18446744073709551615"},
		{[]string{"--initial", "fast"}, `again calc: --initial "fast": want a duration of 0 or more, with no limit short of 292 years (Go syntax such as 500ms, 1.5s or 2m)`},
		{[]string{"--initial=-1s"}, `again calc: --initial "-1s": want a duration of 0 or more, with no limit short of 292 years (Go syntax such as 500ms, 1.5s or 2m)`},
		{[]string{"--max", "Inf"}, `again calc: --max "Inf": want a duration of 0 or more, 0 meaning no cap (Go syntax such as 500ms, 1.5s or 2m)`},
		{[]string{"--deadline", "soon"}, `again calc: --deadline "soon": want a duration of 0 or more, with no limit short of 292 years (Go syntax such as 500ms, 1.5s or 2m)`},
		{[]string{"--retries", "-1"}, "again calc: --retries \"-1\": want a whole number from 0 to 100000"},
		{[]string{"--retries", "1000000000"}, "again calc: --retries \"1000000000\": want a whole number from 0 to 100000"},
		{[]string{"--retries", "three"}, `again calc: --retries "three": want a whole number from 0 to 100000`},
		{[]string{"--jitter", "random"}, `again calc: --jitter "random": want none, full, equal, decorrelated, proportional:F or grpc:F with F in (0, 1]`},
		{[]string{"--jitter", "proportional:1.5"}, `again calc: --jitter "proportional:1.5": want none, full, equal, decorrelated, proportional:F or grpc:F with F in (0, 1]`},
		{[]string{"--solve", "initial"}, "again calc: --solve requires --deadline: the solver finds the largest initial whose total wait fits a deadline"},
		{[]string{"--solve", "max", "--deadline", "1m"}, `again calc: --solve "max": want one of initial, multiplier or retries`},
		{[]string{"--target", "p50"}, `again calc: --target "p50": want one of max or p99`},
		{[]string{"--target", "p99", "--deadline", "1m"}, "again calc: --target requires --solve: it says what the solver keeps within --deadline"},
		{[]string{"--target", "max"}, "again calc: --target requires --solve: it says what the solver keeps within --deadline"},
		{[]string{"--seed", "x"}, `again calc: --seed "x": want a whole number from 0 to 18446744073709551615`},
		{[]string{"--format", "yaml"}, `again calc: --format "yaml": want one of text, json, csv or markdown`},
		{[]string{"--on-overload", "initial=1s,initial=2s"}, "again calc: --on-overload gives initial twice"},
		{[]string{"--on-transient", "retries=-1"}, "again calc: --on-transient retries \"-1\": want a whole number from 0 to 100000"},
		{[]string{"--preset", "aws", "--on-overload", "max=30"}, "again calc: --on-overload max \"30\": want a duration with a unit, such as 30s or 30ms (a bare number is seconds to timeout and curl, milliseconds to the calculator page)"},
		{[]string{"--retries"}, "again calc: flag needs an argument: --retries (see 'again calc --help')"},
		{[]string{"--retries", "3", "--retry", "4"}, "again calc: unknown flag: --retry (see 'again calc --help')"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			wantUsageError(t, run(t, withArgs([]string{"calc"}, tt.args...)...), tt.want)
		})
	}
}

func TestCalcTenThousandRetries(t *testing.T) {
	// Each format's last row, and how many rows it has: "10000" alone would
	// also match the 10 s cap (10000 ms) or the totals line.
	tests := []struct {
		format string
		rows   func(out string) int
		last   string
	}{
		{"text", func(out string) int { return strings.Count(out, "|\n") }, "\n10000   10 s*  0 ms     5 s    10 s  "},
		{"json", func(out string) int { return strings.Count(out, `"retry": `) }, `"retry": 10000,`},
		{"csv", func(out string) int { rows, _, _ := strings.Cut(out, "\n\n"); return strings.Count(rows, "\n") }, "\n10000,10000,true,0,5000,10000,"},
		{"markdown", func(out string) int { return strings.Count(out, "\n| ") - 1 }, "\n| 10000 | 10 s (capped) | 0 ms | 5 s | 10 s | "},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			r := run(t, "calc", "--retries", "10000", "--format", tt.format)
			if r.Code != 0 || r.Stderr != "" {
				t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
			}
			if n := tt.rows(r.Stdout); n != 10000 {
				t.Errorf("--format %s printed %d rows, want 10000", tt.format, n)
			}
			if !strings.Contains(r.Stdout, tt.last) {
				t.Errorf("--format %s output lacks the last row %q", tt.format, tt.last)
			}
		})
	}
}

// TestCalcHuge checks the huge case in the CLI: 1 h × 10 for 100
// retries without a cap saturates in every format, never negative.
func TestCalcHuge(t *testing.T) {
	for _, format := range []string{"text", "json", "csv", "markdown"} {
		t.Run(format, func(t *testing.T) {
			r := run(t, "calc", "--initial", "1h", "--multiplier", "10", "--retries", "100", "--max", "0", "--format", format)
			if r.Code != 0 || r.Stderr != "" {
				t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
			}
			bad := []string{"−", "NaN", "Inf", "e+"}
			switch format {
			case "json":
				bad = append(bad, ": -")
			case "csv":
				bad = append(bad, ",-")
			}
			for _, bad := range bad {
				if strings.Contains(r.Stdout, bad) {
					t.Errorf("--format %s output contains %q", format, bad)
				}
			}
			if format != "json" && format != "csv" && !strings.Contains(r.Stdout, "more than 292 years") {
				t.Errorf("--format %s output does not show saturation", format)
			}
		})
	}
}

// TestCalcSamePolicySameCSV checks that the bare-millisecond and Go forms of
// the same policy give identical bytes.
func TestCalcSamePolicySameCSV(t *testing.T) {
	r := run(t, withArgs(workedExample, "--format", "csv", "--jitter", "equal")...)
	r2 := run(t, "calc", "--initial=0.5s", "--multiplier=2.0", "--max=30000ms", "--retries=8", "--jitter=equal", "--format=csv")
	if r.Stdout != r2.Stdout || !bytes.HasPrefix([]byte(r.Stdout), []byte("retry,")) {
		t.Errorf("the same policy written two ways printed different CSV:\n%s\n%s", r.Stdout, r2.Stdout)
	}
}

func TestCalcSolve(t *testing.T) {
	tests := []struct {
		args      []string
		parameter string
		value     string
		header    string
	}{
		// 31 × initial <= 10 s less the 100 ms reserve: the largest initial is
		// 9.9 s / 31, to the nanosecond.
		{[]string{"--retries", "5", "--solve", "initial", "--deadline", "10s"}, "initial", "319.354838",
			"Solved: the largest initial delay whose worst-case total wait fits 10 s is 319.354838ms\n"},
		// 0.5 + 1 + 2 + 4 + 8 + 4 × 10 = 55.5 s fits 1 min less 100 ms; a
		// tenth retry does not.
		{[]string{"--solve", "retries", "--deadline", "1m"}, "retries", "9",
			"Solved: the largest number of retries whose worst-case total wait fits 1 min is 9\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := run(t, withArgs([]string{"calc", "--format", "json"}, tt.args...)...)
			var got struct {
				Solved *struct {
					Parameter string      `json:"parameter"`
					Value     json.Number `json:"value"`
				} `json:"solved"`
				Deadline struct {
					Fits bool `json:"worst_case_fits"`
				} `json:"deadline"`
			}
			if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil || r.Code != 0 {
				t.Fatalf("exit %d, JSON error %v, stderr %q", r.Code, err, r.Stderr)
			}
			if got.Solved == nil || got.Solved.Parameter != tt.parameter || string(got.Solved.Value) != tt.value {
				t.Errorf("solved = %+v, want %s = %s", got.Solved, tt.parameter, tt.value)
			}
			if !got.Deadline.Fits {
				t.Errorf("the solved policy's worst case does not fit the deadline")
			}
			if table := run(t, withArgs([]string{"calc"}, tt.args...)...); !strings.Contains(table.Stdout, tt.header) {
				t.Errorf("table lacks %q:\n%s", tt.header, table.Stdout)
			}
		})
	}
	if r := run(t, withArgs(workedExample, "--format", "json")...); strings.Contains(r.Stdout, `"solved"`) {
		t.Errorf("JSON without --solve has a solved field")
	}
}

func TestCalcSolveWithoutAnswer(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		// Even multiplier 1 waits 3 × 10 s, far beyond 1 s.
		{[]string{"--initial", "10s", "--max", "0", "--retries", "3", "--solve", "multiplier", "--deadline", "1s"},
			"again calc: no multiplier keeps the worst-case total wait within 1 s\n"},
		// Zero delays: any number of retries fits.
		{[]string{"--initial", "0", "--solve", "retries", "--deadline", "1m"},
			"again calc: every number of retries keeps the worst-case total wait within 1 min, so there is no largest one to show\n"},
		{[]string{"--initial", "1ns", "--max", "1ns", "--solve", "retries", "--deadline", "1h"},
			"again calc: up to 3599900000000 retries keep the worst-case total wait within 1 h, more than the 100000 the calculator shows; raise --initial or --max\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := run(t, withArgs([]string{"calc"}, tt.args...)...)
			if r.Code != cmdutil.ExitFailure || r.Stdout != "" || r.Stderr != tt.want {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1, no stdout, stderr %q", r.Code, r.Stdout, r.Stderr, tt.want)
			}
		})
	}
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestCalcGolden compares whole outputs with files in testdata, so that a
// change to what users see shows up in review. The policies use no jitter or
// exact statistics only, so the files do not depend on numerical methods.
// Rewrite them with: go test ./internal/cmd/calc -run Golden -update
func TestCalcGolden(t *testing.T) {
	tests := []struct {
		file string
		args []string
	}{
		{"worked-none-deadline.txt", withArgs(workedExample, "--jitter", "none", "--deadline", "1m")},
		{"worked-none.md", withArgs(workedExample, "--jitter", "none", "--deadline", "2m", "--format", "markdown")},
		{"worked-full.csv", withArgs(workedExample, "--format", "csv")},
		{"classes.txt", withArgs(classExample, "--deadline", "10s")},
		{"classes.md", withArgs(classExample, "--format", "markdown")},
		{"classes.csv", withArgs(classExample, "--format", "csv")},
		{"huge.csv", []string{"calc", "--initial", "1h", "--multiplier", "10", "--retries", "12", "--max", "0", "--jitter", "equal", "--format", "csv"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r := run(t, tt.args...)
			if r.Code != 0 || r.Stderr != "" {
				t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
			}
			path := filepath.Join("testdata", tt.file)
			if *update {
				if err := os.WriteFile(path, []byte(r.Stdout), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if r.Stdout != string(want) {
				t.Errorf("again %s printed\n%s\nwant (%s)\n%s", strings.Join(tt.args, " "), r.Stdout, path, want)
			}
		})
	}
}

// TestCalcPreset checks that --preset stands for its flags, that flags
// given with it override its fields, and that an unknown name is a usage
// error listing the names.
func TestCalcPreset(t *testing.T) {
	tests := []struct {
		name          string
		preset, flags []string
	}{
		{"alone", []string{"--preset", "aws-throttle"}, []string{"--initial", "1s", "--multiplier", "2", "--max", "20s", "--retries", "2", "--jitter", "full"}},
		{"overridden", []string{"--preset", "aws-throttle", "--retries", "4", "--jitter=equal"}, []string{"--initial", "1s", "--multiplier", "2", "--max", "20s", "--retries", "4", "--jitter", "equal"}},
		// The class flags replace the aws preset's classes, as the policy
		// flags replace its fields.
		{"classes replaced", []string{"--preset", "aws", "--on-overload", "initial=2s"}, []string{"--initial", "50ms", "--multiplier", "2", "--max", "20s", "--retries", "2", "--jitter", "full", "--on-overload", "initial=2s"}},
		{"override first", []string{"--max", "5s", "--preset", "polly"}, []string{"--initial", "2s", "--multiplier", "1", "--max", "5s", "--retries", "3", "--jitter", "none"}},
		{"with a deadline", []string{"--preset", "example", "--deadline", "1m", "--format", "json"}, withArgs(workedExample[1:], "--jitter", "full", "--deadline", "1m", "--format", "json")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, withArgs([]string{"calc"}, tt.preset...)...)
			want := run(t, withArgs([]string{"calc"}, tt.flags...)...)
			if got.Code != 0 || got.Stdout != want.Stdout {
				t.Errorf("again calc %s: exit %d, printed\n%s\nwant what %s prints\n%s", strings.Join(tt.preset, " "), got.Code, got.Stdout, strings.Join(tt.flags, " "), want.Stdout)
			}
		})
	}
	wantUsageError(t, run(t, "calc", "--preset", "azure"),
		`again calc: --preset "azure": want one of example, again, aws, aws-throttle, grpc-retry, grpc-conn, gcloud, polly, cenkalti, urllib3 or curl`)
	// The help names them; the guide shows what each one sets.
	r := run(t, "calc", "--help")
	guide, err := os.ReadFile("../../../../../docs/calc.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range calcmodel.Presets() {
		if !strings.Contains(r.Stdout, p.Name) {
			t.Errorf("again calc --help does not name the preset %s", p.Name)
		}
		if line := fmt.Sprintf("| `%s` | `%s` |", p.Name, p.Command()); !strings.Contains(string(guide), line) {
			t.Errorf("docs/calc.md lacks the row %s", line)
		}
	}
}

// A --max alone below the default first delay is a lower cap, taken: only
// a policy whose flags contradict each other is refused.
func TestCalcMaxAloneBelowDefaultInitial(t *testing.T) {
	r := run(t, "calc", "--max", "100ms", "--jitter", "none")
	if r.Code != 0 || r.Stderr != "" || !strings.Contains(r.Stdout, "100 ms*") {
		t.Errorf("calc --max 100ms: exit %d, stderr %q; want 0 and every delay capped at 100 ms:\n%s", r.Code, r.Stderr, r.Stdout)
	}
}

// The old name of the text format still works, with one warning however
// often it is given.
func TestFormatTableAlias(t *testing.T) {
	r := run(t, withArgs(workedExample, "--format", "table", "--format", "table")...)
	text := run(t, withArgs(workedExample, "--format", "text")...)
	const warn = "again calc: --format table is now --format text; it still works, but write text\n"
	if r.Code != 0 || r.Stdout != text.Stdout || r.Stderr != warn {
		t.Errorf("calc --format table: exit %d, stderr %q; want 0, the text output and %q", r.Code, r.Stderr, warn)
	}
}

// TestCalcClassesJSON checks the JSON contract of the classes: each
// class's name, own policy and cost, whether the call's --retries stops
// it first, its rows and its totals; and that the aws preset's classes
// are retry.AWSClasses'.
func TestCalcClassesJSON(t *testing.T) {
	type class struct {
		Name   string `json:"name"`
		Policy struct {
			Initial json.Number `json:"initial_ms"`
			Max     json.Number `json:"max_ms"`
			Retries int         `json:"retries"`
			Jitter  string      `json:"jitter"`
		} `json:"policy"`
		Cost       float64 `json:"cost"`
		CallCapped bool    `json:"call_capped"`
		Retries    []struct {
			Delay json.Number `json:"delay_ms"`
		} `json:"retries"`
		Total struct {
			Min      json.Number `json:"min_ms"`
			Mean     json.Number `json:"mean_ms"`
			Max      json.Number `json:"max_ms"`
			MaxHuman string      `json:"max_human"`
		} `json:"total"`
	}
	decode := func(args ...string) []class {
		t.Helper()
		r := run(t, withArgs(args, "--format", "json")...)
		var got struct {
			Classes []class `json:"classes"`
		}
		if r.Code != 0 || r.Stderr != "" {
			t.Fatalf("again %s: exit %d, stderr %q", strings.Join(args, " "), r.Code, r.Stderr)
		}
		if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil {
			t.Fatalf("again %s: %v", strings.Join(args, " "), err)
		}
		return got.Classes
	}
	got := decode(classExample...)
	if len(got) != 2 {
		t.Fatalf("%d classes, want 2 (overload, transient)", len(got))
	}
	o, tr := got[0], got[1]
	if o.Name != "overload" || o.Policy.Initial != "1000" || o.Policy.Max != "30000" || o.Policy.Retries != 6 || o.Cost != 5 || !o.CallCapped {
		t.Errorf("overload = %+v; want initial_ms 1000, max_ms 30000, retries 6, cost 5, call_capped", o)
	}
	// The call's --retries 4 stops the overloads' 6: four waits, 1+2+4+8 s.
	if len(o.Retries) != 4 || o.Total.Max != "15000" || o.Total.Min != "15000" || o.Total.MaxHuman != "15 s" {
		t.Errorf("overload: %d retries, total max %s (%q); want 4, 15000 (15 s)", len(o.Retries), o.Total.Max, o.Total.MaxHuman)
	}
	if tr.Name != "transient" || tr.Policy.Retries != 2 || tr.CallCapped || len(tr.Retries) != 2 || tr.Total.Max != "150" {
		t.Errorf("transient = %+v; want retries 2 within the call's 4, total max 150 ms", tr)
	}
	if plain := run(t, withArgs(workedExample, "--format", "json")...); strings.Contains(plain.Stdout, `"classes"`) {
		t.Errorf("again calc without classes writes a classes field:\n%s", plain.Stdout)
	}
	aws := decode("calc", "--preset", "aws")
	want := retry.AWSClasses()
	if len(aws) != len(want) {
		t.Fatalf("--preset aws: %d classes, want %d", len(aws), len(want))
	}
	for i, c := range aws {
		w := want[i]
		if c.Name != w.Name || c.Cost != w.Cost || c.Policy.Initial.String() != calcmodel.Millis(w.Policy.Initial).String() || c.Policy.Max.String() != calcmodel.Millis(w.Policy.Max).String() {
			t.Errorf("--preset aws class %d = %s, cost %v, initial %s ms, max %s ms; want retry.AWSClasses' %s, %v, %v, %v",
				i, c.Name, c.Cost, c.Policy.Initial, c.Policy.Max, w.Name, w.Cost, w.Policy.Initial, w.Policy.Max)
		}
		// AWS allows 3 attempts in all: 2 retries, whatever the class.
		if len(c.Retries) != retry.AWSMaxAttempts-1 {
			t.Errorf("--preset aws class %s: %d retries, want %d", c.Name, len(c.Retries), retry.AWSMaxAttempts-1)
		}
	}
}
