package calc

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/backoff/plan"
)

func TestMillisString(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0"},
		{1, "0.000001"},
		{500 * time.Millisecond, "500"},
		{1500 * time.Microsecond, "1.5"},
		{45750 * time.Millisecond, "45750"},
		{math.MaxInt64, "9223372036854.775807"},
		{-time.Millisecond, "-1"},
		{math.MinInt64, "-9223372036854.775808"},
	}
	for _, tt := range tests {
		if got := Millis(tt.d).String(); got != tt.want {
			t.Errorf("Millis(%d).String() = %q, want %q", int64(tt.d), got, tt.want)
		}
	}
}

// workedExample is the seed calculator's example: 500 ms, ×2, cap 30 s, 8 retries.
func workedExample(t *testing.T, jitter string, extra Values) *Report {
	t.Helper()
	v := Values{FieldInitial: "500ms", FieldMultiplier: "2", FieldMax: "30s", FieldRetries: "8", FieldJitter: jitter}
	for k, s := range extra {
		v[k] = s
	}
	return compute(t, v)
}

// compute parses and computes v, failing the test on any error.
func compute(t *testing.T, v Values) *Report {
	t.Helper()
	in, err := Parse(v)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestWorkedExample(t *testing.T) {
	wantDelays := []Millis{500, 1000, 2000, 4000, 8000, 16000, 30000, 30000}
	for i := range wantDelays {
		wantDelays[i] *= Millis(time.Millisecond)
	}
	ms := func(n float64) Millis { return Millis(n * float64(time.Millisecond)) }
	tests := []struct {
		jitter              string
		min, mean, max      Millis
		minHuman, meanHuman string
		firstMin, firstMean Millis
	}{
		{"none", ms(91500), ms(91500), ms(91500), "1 min 32 s", "1 min 32 s", ms(500), ms(500)},
		{"full", 0, ms(45750), ms(91500), "0 ms", "45.8 s", 0, ms(250)},
		{"equal", ms(45750), ms(68625), ms(91500), "45.8 s", "1 min 9 s", ms(250), ms(375)},
	}
	for _, tt := range tests {
		t.Run(tt.jitter, func(t *testing.T) {
			r := workedExample(t, tt.jitter, nil)
			var delays []Millis
			for i, x := range r.Retries {
				delays = append(delays, x.Delay)
				if want := i >= 6; x.Capped != want {
					t.Errorf("retry %d capped = %v, want %v", x.Retry, x.Capped, want)
				}
				if x.Max != x.Delay {
					t.Errorf("retry %d max = %v, want its delay %v", x.Retry, x.Max, x.Delay)
				}
			}
			if !slices.Equal(delays, wantDelays) {
				t.Errorf("delays = %v, want %v", delays, wantDelays)
			}
			if x := r.Retries[0]; x.Min != tt.firstMin || x.Mean != tt.firstMean {
				t.Errorf("retry 1 min, mean = %v, %v; want %v, %v", x.Min, x.Mean, tt.firstMin, tt.firstMean)
			}
			tot := r.Total
			if tot.Min != tt.min || tot.Mean != tt.mean || tot.Max != tt.max {
				t.Errorf("total min, mean, max = %v, %v, %v; want %v, %v, %v", tot.Min, tot.Mean, tot.Max, tt.min, tt.mean, tt.max)
			}
			if tot.MinHuman != tt.minHuman || tot.MeanHuman != tt.meanHuman || tot.MaxHuman != "1 min 32 s" {
				t.Errorf("total human = %q, %q, %q; want %q, %q, %q", tot.MinHuman, tot.MeanHuman, tot.MaxHuman, tt.minHuman, tt.meanHuman, "1 min 32 s")
			}
			if tt.jitter != "none" && tot.P50 != tot.Mean {
				// Full and equal jitter make the total symmetric about its mean.
				t.Errorf("p50 = %v, want the mean %v", tot.P50, tot.Mean)
			}
			if !(tot.Min <= tot.P50 && tot.P50 <= tot.P90 && tot.P90 <= tot.P99 && tot.P99 <= tot.Max) {
				t.Errorf("percentiles %v, %v, %v not ordered within [%v, %v]", tot.P50, tot.P90, tot.P99, tot.Min, tot.Max)
			}
		})
	}
}

// decode unmarshals JSON output into generic values, numbers kept as text.
func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, b)
	}
	return m
}

func keys(v any) []string {
	m, _ := v.(map[string]any)
	var k []string
	for key := range m {
		k = append(k, key)
	}
	slices.Sort(k)
	return k
}

func TestJSONShape(t *testing.T) {
	sorted := func(s ...string) []string { slices.Sort(s); return s }
	rowKeys := sorted("retry", "delay_ms", "capped", "min_ms", "mean_ms", "max_ms", "total_min_ms", "total_mean_ms", "total_max_ms")
	tests := []struct {
		name  string
		extra Values
		top   []string
	}{
		{"plain", nil, sorted("policy", "retries", "total")},
		{"deadline", Values{FieldDeadline: "1m"}, sorted("policy", "retries", "total", "deadline")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := workedExample(t, "full", tt.extra).WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			m := decode(t, buf.Bytes())
			if got := keys(m); !slices.Equal(got, tt.top) {
				t.Errorf("top-level keys = %v, want %v", got, tt.top)
			}
			if got, want := keys(m["policy"]), sorted("initial_ms", "multiplier", "max_ms", "retries", "jitter"); !slices.Equal(got, want) {
				t.Errorf("policy keys = %v, want %v", got, want)
			}
			if got, want := keys(m["total"]), sorted("min_ms", "mean_ms", "max_ms", "p50_ms", "p90_ms", "p99_ms", "min_human", "mean_human", "max_human",
				"p50_human", "p90_human", "p99_human", "estimated"); !slices.Equal(got, want) {
				t.Errorf("total keys = %v, want %v", got, want)
			}
			rows, _ := m["retries"].([]any)
			if len(rows) != 8 {
				t.Fatalf("%d retries in JSON, want 8", len(rows))
			}
			for _, row := range rows {
				if got := keys(row); !slices.Equal(got, rowKeys) {
					t.Fatalf("row keys = %v, want %v", got, rowKeys)
				}
			}
			p := m["policy"].(map[string]any)
			if p["initial_ms"] != json.Number("500") || p["multiplier"] != json.Number("2") || p["max_ms"] != json.Number("30000") || p["retries"] != json.Number("8") || p["jitter"] != "full" {
				t.Errorf("policy = %v", p)
			}
			tot := m["total"].(map[string]any)
			if tot["min_ms"] != json.Number("0") || tot["mean_ms"] != json.Number("45750") || tot["max_ms"] != json.Number("91500") ||
				tot["p50_ms"] != json.Number("45750") || tot["max_human"] != "1 min 32 s" || tot["mean_human"] != "45.8 s" || tot["min_human"] != "0 ms" {
				t.Errorf("total = %v", tot)
			}
			if est, ok := tot["estimated"].([]any); !ok || len(est) != 0 {
				t.Errorf(`total "estimated" = %v, want [] (full jitter is exact)`, tot["estimated"])
			}
			if tt.extra != nil {
				want := map[string]any{"deadline_ms": json.Number("60000"), "deadline_human": "1 min", "worst_case_fits": false, "p99_fits": false, "retries_within_deadline": json.Number("7")}
				got, _ := m["deadline"].(map[string]any)
				if len(got) != len(want) || got["deadline_ms"] != want["deadline_ms"] || got["worst_case_fits"] != false || got["p99_fits"] != false ||
					got["retries_within_deadline"] != want["retries_within_deadline"] || got["deadline_human"] != "1 min" {
					t.Errorf("deadline = %v, want %v", got, want)
				}
			}
		})
	}
}

// jsonAndCSV returns r written by WriteJSON and by WriteCSV.
func jsonAndCSV(t *testing.T, r *Report) (jb, cb *bytes.Buffer) {
	t.Helper()
	jb, cb = new(bytes.Buffer), new(bytes.Buffer)
	if err := r.WriteJSON(jb); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteCSV(cb); err != nil {
		t.Fatal(err)
	}
	return jb, cb
}

// TestCSVMatchesJSON checks that every CSV row carries the JSON row's
// fields, in the header's order, with the same numbers.
func TestCSVMatchesJSON(t *testing.T) {
	jb, cb := jsonAndCSV(t, workedExample(t, "equal", nil))
	rowsCSV, _, ok := strings.Cut(cb.String(), "\n\n")
	if !ok {
		t.Fatalf("CSV has no empty line before its summary:\n%s", cb.String())
	}
	lines := strings.Split(rowsCSV, "\n")
	if lines[0] != CSVHeader {
		t.Fatalf("CSV header = %q, want %q", lines[0], CSVHeader)
	}
	head := strings.Split(CSVHeader, ",")
	rows := decode(t, jb.Bytes())["retries"].([]any)
	if len(lines)-1 != len(rows) {
		t.Fatalf("%d CSV rows, %d JSON rows", len(lines)-1, len(rows))
	}
	for i, row := range rows {
		cells := strings.Split(lines[i+1], ",")
		for j, name := range head {
			if got, want := cells[j], strings.Trim(fmtJSON(row.(map[string]any)[name]), `"`); got != want {
				t.Errorf("CSV row %d %s = %s, JSON has %s", i+1, name, got, want)
			}
		}
	}
	if want := "4,4000,false,2000,3000,4000,3750,5625,7500"; lines[4] != want {
		t.Errorf("CSV row 4 = %q, want %q", lines[4], want)
	}
}

// TestCSVSummaryMatchesJSON checks that the CSV's second table carries the
// totals, the estimates, the deadline verdict and the solved value, each
// equal to the JSON value at the path it names.
func TestCSVSummaryMatchesJSON(t *testing.T) {
	for _, v := range []Values{
		{FieldJitter: "equal"},
		{FieldJitter: "decorrelated", FieldMax: "5s", FieldSeed: "7", FieldDeadline: "1m"},
		{FieldDeadline: "1m", FieldMax: "0", FieldRetries: "8", FieldSolve: "multiplier"},
		{FieldDeadline: "1m", FieldSolve: "retries", FieldTarget: "p99"},
	} {
		in, err := Parse(v)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Compute(in)
		if err != nil {
			t.Fatal(err)
		}
		jb, cb := jsonAndCSV(t, r)
		_, summary, _ := strings.Cut(cb.String(), "\n\n")
		lines := strings.Split(strings.TrimSuffix(summary, "\n"), "\n")
		if lines[0] != CSVSummaryHeader {
			t.Fatalf("%v: summary header = %q, want %q", v, lines[0], CSVSummaryHeader)
		}
		m := decode(t, jb.Bytes())
		seen := map[string]bool{}
		for _, line := range lines[1:] {
			path, value, _ := strings.Cut(line, ",")
			seen[path] = true
			var node any = m
			for _, k := range strings.Split(path, ".") {
				node = node.(map[string]any)[k]
			}
			want := strings.Trim(fmtJSON(node), `"`)
			if list, ok := node.([]any); ok {
				var names []string
				for _, x := range list {
					names = append(names, x.(string))
				}
				want = strings.Join(names, " ")
			}
			if value != want {
				t.Errorf("%v: CSV %s = %q, JSON has %s", v, path, value, want)
			}
		}
		for _, path := range []string{"total.mean_ms", "total.p99_ms", "total.estimated"} {
			if !seen[path] {
				t.Errorf("%v: CSV summary lacks %s", v, path)
			}
		}
		if v[FieldDeadline] != "" && (!seen["deadline.worst_case_fits"] || !seen["deadline.p99_fits"]) {
			t.Errorf("%v: CSV summary lacks the deadline verdict:\n%s", v, summary)
		}
		if v[FieldSolve] != "" && !seen["solved.value"] {
			t.Errorf("%v: CSV summary lacks the solved value:\n%s", v, summary)
		}
		if v[FieldJitter] == "decorrelated" && !seen["total.monte_carlo.seed"] {
			t.Errorf("%v: CSV summary lacks the Monte Carlo seed:\n%s", v, summary)
		}
	}
}

func fmtJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestHugeSaturates checks the huge case, 1 h × 10 for 100 retries
// without a cap: every number is a valid non-negative JSON number and the
// running totals never decrease.
func TestHugeSaturates(t *testing.T) {
	for _, jitter := range []string{"none", "full", "equal", "proportional:1", "decorrelated"} {
		t.Run(jitter, func(t *testing.T) {
			r := compute(t, Values{FieldInitial: "1h", FieldMultiplier: "10", FieldMax: "0", FieldRetries: "100", FieldJitter: jitter})
			var buf bytes.Buffer
			if err := r.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			if s := buf.String(); strings.Contains(s, "-") || strings.Contains(s, "NaN") || strings.Contains(s, "e+") {
				t.Fatalf("JSON has a negative, NaN or exponent number:\n%s", s)
			}
			var prev RetryReport
			for _, x := range r.Retries {
				if x.Min < 0 || x.Min > x.Mean || x.Mean > x.Max || x.TotalMin < prev.TotalMin || x.TotalMean < prev.TotalMean || x.TotalMax < prev.TotalMax {
					t.Fatalf("retry %d = %+v after %+v: negative, unordered or decreasing", x.Retry, x, prev)
				}
				prev = x
			}
			if last := r.Retries[99]; last.TotalMax != math.MaxInt64 || r.Total.MaxHuman != "more than 292 years" {
				t.Errorf("last total max = %v (%s), want saturated", last.TotalMax, r.Total.MaxHuman)
			}
		})
	}
}

func TestUnsolvable(t *testing.T) {
	// Even multiplier 1 waits 3 × 10 s, far beyond 1 s.
	in, err := Parse(Values{FieldInitial: "10s", FieldRetries: "3", FieldMax: "0", FieldSolve: "multiplier", FieldDeadline: "1s"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Compute(in)
	var se *SolveError
	if !errors.Is(err, plan.ErrUnsolvable) || !errors.As(err, &se) {
		t.Fatalf("Compute = %v, want a *SolveError matching plan.ErrUnsolvable", err)
	}
	if want := "no multiplier keeps the worst-case total wait within 1 s"; se.Detail() != want {
		t.Errorf("Detail() = %q, want %q", se.Detail(), want)
	}
}

func TestTableAndMarkdown(t *testing.T) {
	r := workedExample(t, "full", Values{FieldDeadline: "1m"})
	var tb, mb bytes.Buffer
	if err := r.WriteTable(&tb); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteMarkdown(&mb); err != nil {
		t.Fatal(err)
	}
	wantContains(t, "table", tb.String(),
		"Policy: --initial 500ms --multiplier 2 --max 30s --retries 8 --jitter full\n",
		"retry   delay   min    mean     max  worst total  min..max on 0 to 30 s\n",
		"    1  500 ms  0 ms  250 ms  500 ms       500 ms  |█·······················|\n",
		"    8   30 s*  0 ms    15 s    30 s   1 min 32 s  |████████████████████████|\n",
		"* capped at --max 30s\n",
		"  mean:        45.8 s\n",
		"  longest:     1 min 32 s\n",
		"Deadline 1 min: does not fit; the worst case, 1 min 32 s, leaves less than 100 ms (kept for the last attempt) before it, so the retry loop shortens the wait that would end later. In the worst case only the first 7 of 8 retries start in time. The 99th percentile, 1 min 15 s, does not fit either.\n",
	)
	wantContains(t, "markdown", mb.String(),
		"**Policy:** `--initial 500ms --multiplier 2 --max 30s --retries 8 --jitter full`\n",
		"| Retry | Delay | Min | Mean | Max | Worst-case total |\n|---:|---:|---:|---:|---:|---:|\n",
		"| 7 | 30 s (capped) | 0 ms | 15 s | 30 s | 1 min 2 s |\n",
		"- longest: 1 min 32 s\n",
		"**Deadline 1 min:** does not fit",
	)
}

// TestMarkdownSolvedParagraph checks that the solved value is a paragraph
// of its own: Markdown joins consecutive lines into one.
// TestVerdictCountsRetries: the verdict says how many retries start within
// the deadline in the worst case, in words that fit the count, in the table
// and in Markdown alike: those whose waits end 100 ms (the reserve) before
// it, and one more after a wait the loop shortens.
func TestVerdictCountsRetries(t *testing.T) {
	for _, tt := range []struct {
		values Values
		within int
		want   string
	}{
		{Values{FieldDeadline: "100"}, 0, "In the worst case not even the first retry starts in time."},
		{Values{FieldRetries: "1", FieldDeadline: "100"}, 0, "In the worst case not even the first retry starts in time."},
		{Values{FieldRetries: "2", FieldInitial: "1s", FieldDeadline: "1050ms"}, 1, "In the worst case only the first of 2 retries starts in time."},
		{Values{FieldRetries: "3", FieldInitial: "1s", FieldDeadline: "3s"}, 2, "In the worst case only the first 2 of 3 retries start in time."},
		{Values{FieldRetries: "8", FieldInitial: "500ms", FieldMax: "30s", FieldDeadline: "1m"}, 7, "In the worst case only the first 7 of 8 retries start in time."},
		// The second wait, 2 s, is shortened to end at 1.4 s: both retries
		// start in time, and the verdict counts none missing.
		{Values{FieldRetries: "2", FieldInitial: "1s", FieldDeadline: "1500ms"}, 2, ""},
	} {
		r := compute(t, tt.values)
		if r.Deadline == nil || r.Deadline.RetriesWithin != tt.within {
			t.Fatalf("%v: deadline report %+v, want %d retries within", tt.values, r.Deadline, tt.within)
		}
		var tb, mb bytes.Buffer
		if err := r.WriteTable(&tb); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteMarkdown(&mb); err != nil {
			t.Fatal(err)
		}
		want := " would end later. " + tt.want + " The 99th percentile"
		if tt.want == "" {
			want = " would end later. The 99th percentile"
		}
		wantContains(t, "table", tb.String(), want)
		wantContains(t, "markdown", mb.String(), want)
	}
}

func TestMarkdownSolvedParagraph(t *testing.T) {
	r := compute(t, Values{FieldRetries: "2", FieldSolve: "initial", FieldDeadline: "10s"})
	var mb bytes.Buffer
	if err := r.WriteMarkdown(&mb); err != nil {
		t.Fatal(err)
	}
	wantContains(t, "markdown", mb.String(),
		"**Policy:** `--initial 3.3s --multiplier 2 --max 10s --retries 2 --jitter full`\n\n"+
			"**Solved:** the largest initial delay whose worst-case total wait fits 10 s is 3.3s\n\n| Retry |")
}

// TestMonteCarloNote checks the table's note on decorrelated estimates: it
// gives the seed, and calls the mean an estimate only when it is one.
func TestMonteCarloNote(t *testing.T) {
	tests := []struct {
		max, want string
	}{
		{"1m", "  the percentiles are a Monte Carlo estimate (--seed 7)\n"},
		{"0", "  the percentiles are a Monte Carlo estimate (--seed 7)\n"},
		{"10s", "  the mean and percentiles are a Monte Carlo estimate (--seed 7; standard error of the mean "},
	}
	for _, tt := range tests {
		t.Run("max "+tt.max, func(t *testing.T) {
			// Largest delays 1, 2, 4, 8, 16 and 32 s: a 10 s cap lowers the last two.
			r := compute(t, Values{FieldMax: tt.max, FieldRetries: "6", FieldJitter: "decorrelated", FieldSeed: "7"})
			var tb bytes.Buffer
			if err := r.WriteTable(&tb); err != nil {
				t.Fatal(err)
			}
			wantContains(t, "table", tb.String(), tt.want)
		})
	}
	var tb bytes.Buffer
	if err := workedExample(t, "full", nil).WriteTable(&tb); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(tb.String(), "Monte Carlo") {
		t.Errorf("table for full jitter mentions Monte Carlo:\n%s", tb.String())
	}
}

func wantContains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, got)
		}
	}
}

func TestBar(t *testing.T) {
	tests := []struct {
		lo, hi, scale float64
		want          string
	}{
		{0, 0, 0, strings.Repeat("·", barWidth)},
		{0, 24, 24, strings.Repeat("█", barWidth)},
		{12, 12, 24, strings.Repeat("·", 12) + "█" + strings.Repeat("·", 11)},
		{24, 24, 24, strings.Repeat("·", 23) + "█"},
		{6, 12, 24, strings.Repeat("·", 6) + strings.Repeat("█", 6) + strings.Repeat("·", 12)},
		{0, 1, 24, "█" + strings.Repeat("·", 23)},
	}
	for _, tt := range tests {
		if got := bar(tt.lo, tt.hi, tt.scale); got != tt.want {
			t.Errorf("bar(%v, %v, %v) = %q, want %q", tt.lo, tt.hi, tt.scale, got, tt.want)
		}
	}
}

func TestTenThousandRetries(t *testing.T) {
	r := compute(t, Values{FieldRetries: "10000"})
	var buf bytes.Buffer
	if err := r.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "|\n"); n != 10000 {
		t.Errorf("table has %d rows, want 10000", n)
	}
	if want := strconv.Itoa(10000) + "   10 s*"; !strings.Contains(buf.String(), want) {
		t.Errorf("table lacks the last row %q", want)
	}
}

// FuzzMillis checks that the text of any duration reads back as the same
// number of nanoseconds: no rounding, no exponent, a sign only when negative.
func FuzzMillis(f *testing.F) {
	for _, ns := range []int64{0, 1, 999999, 1000000, 45750000000, math.MaxInt64, -1, math.MinInt64} {
		f.Add(ns)
	}
	f.Fuzz(func(t *testing.T, ns int64) {
		s := Millis(ns).String()
		whole, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
		if len(frac) > 6 || strings.HasSuffix(frac, "0") || strings.HasPrefix(s, "-") != (ns < 0) {
			t.Fatalf("Millis(%d) = %q: bad fraction or sign", ns, s)
		}
		w, err := strconv.ParseUint(whole, 10, 64)
		if err != nil {
			t.Fatalf("Millis(%d) = %q: whole part: %v", ns, s, err)
		}
		var fr uint64
		if frac != "" {
			if fr, err = strconv.ParseUint(frac+strings.Repeat("0", 6-len(frac)), 10, 64); err != nil {
				t.Fatalf("Millis(%d) = %q: fraction: %v", ns, s, err)
			}
		}
		u := w*1e6 + fr
		if ns < 0 && u != uint64(-(ns+1))+1 || ns >= 0 && u != uint64(ns) {
			t.Fatalf("Millis(%d) = %q reads back as %d ns", ns, s, u)
		}
	})
}

// TestEstimated checks that the report, which the table, Markdown and the
// page all render, says exactly which totals are Monte Carlo estimates.
func TestEstimated(t *testing.T) {
	tests := []struct {
		name      string
		v         Values
		estimated []string
		stdErr    bool // MonteCarlo.MeanStdErr > 0
	}{
		{"full jitter is exact", Values{FieldJitter: "full", FieldMax: "30s", FieldRetries: "8"}, []string{}, false},
		{"decorrelated below the cap: exact mean", Values{FieldJitter: "decorrelated", FieldMax: "1h", FieldRetries: "4", FieldSeed: "7"},
			[]string{EstimatedP50, EstimatedP90, EstimatedP99}, false},
		{"decorrelated at the cap: estimated mean", Values{FieldJitter: "decorrelated", FieldMax: "2s", FieldRetries: "8", FieldSeed: "7"},
			[]string{EstimatedMean, EstimatedP50, EstimatedP90, EstimatedP99}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := Parse(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Compute(in)
			if err != nil {
				t.Fatal(err)
			}
			tot := r.Total
			if !slices.Equal(tot.Estimated, tt.estimated) || tot.Estimated == nil {
				t.Errorf("Total.Estimated = %#v, want %#v", tot.Estimated, tt.estimated)
			}
			mc := tot.MonteCarlo
			if (mc != nil) != (len(tt.estimated) > 0) {
				t.Fatalf("Total.MonteCarlo = %+v, want it set exactly when something is estimated", mc)
			}
			if mc != nil && (mc.Seed != 7 || (mc.MeanStdErr > 0) != tt.stdErr) {
				t.Errorf("Total.MonteCarlo = %+v, want seed 7 and a standard error only for an estimated mean", mc)
			}
			for _, row := range r.Retries {
				if row.MeanEstimated != (tt.stdErr && row.Capped) {
					t.Errorf("retry %d: MeanEstimated = %v, want %v", row.Retry, row.MeanEstimated, tt.stdErr && row.Capped)
				}
			}
		})
	}
}

// TestSolvedMultiplierIsShort checks that a solved multiplier is reported
// as a short decimal, not a float64's rounding noise such as
// 1.0000000009999999, that still keeps the worst case within the deadline.
func TestSolvedMultiplierIsShort(t *testing.T) {
	for _, retries := range []string{"8", "30", "100", "1000"} {
		in, err := Parse(Values{FieldInitial: "1s", FieldMax: "0", FieldRetries: retries, FieldDeadline: "1h", FieldSolve: "multiplier", FieldJitter: "none"})
		if err != nil {
			t.Fatal(err)
		}
		exact, err := plan.Solve(in.Policy, in.Param, in.Deadline, in.Target, in.Seed)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Compute(in)
		if err != nil {
			t.Fatal(err)
		}
		got := r.Solved.Value
		if got > exact.Multiplier || got != r.Policy.Multiplier {
			t.Errorf("retries %s: solved %v, policy %v; want at most the exact %v", retries, got, r.Policy.Multiplier, exact.Multiplier)
		}
		if text := strconv.FormatFloat(got, 'g', -1, 64); len(text) > 15 || len(text) >= len(strconv.FormatFloat(exact.Multiplier, 'g', -1, 64)) {
			t.Errorf("retries %s: solved multiplier %s, want a short decimal (exact %v)", retries, text, exact.Multiplier)
		}
		// Within the hour, less the loop's reserve for the last attempt.
		if end := time.Hour - backoff.DeadlineReserve; r.Total.Max > Millis(end) || r.Total.Max < Millis(end-time.Millisecond) {
			t.Errorf("retries %s: worst case %v ms with the reported multiplier, want just within %v", retries, r.Total.Max, end)
		}
	}
	if got := truncate(1.0000000009999999, 10); got != 1 {
		t.Errorf("truncate(1.0000000009999999, 10) = %v, want 1", got)
	}
	if got := truncate(1.0000000009999999, 11); got != 1.0000000009 {
		t.Errorf("truncate(1.0000000009999999, 11) = %v, want 1.0000000009", got)
	}
}

// TestP99RetriesUnboundedSaysHowFar checks that solving retries for a p99
// target never claims every number fits when it checked only MaxRetries.
func TestP99RetriesUnboundedSaysHowFar(t *testing.T) {
	in, err := Parse(Values{FieldInitial: "1ns", FieldMultiplier: "1", FieldDeadline: "1h", FieldSolve: "retries", FieldTarget: "p99"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Compute(in)
	var se *SolveError
	if !errors.As(err, &se) || !errors.Is(err, plan.ErrUnbounded) {
		t.Fatalf("Compute() error = %v, want a *SolveError matching plan.ErrUnbounded", err)
	}
	msg := se.Detail()
	if strings.Contains(msg, "every") || !strings.Contains(msg, "100000") {
		t.Errorf("Detail() = %q, want it to name the 100000 retries checked and not claim every number", msg)
	}
}

// TestSubMillisecondTable checks that a sub-millisecond schedule is shown
// in µs, not as "0 ms".
func TestSubMillisecondTable(t *testing.T) {
	in, err := Parse(Values{FieldInitial: "0.25", FieldRetries: "3", FieldJitter: "none"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "0 ms") || !strings.Contains(out, "250 µs") || !strings.Contains(out, "1.75 ms") && !strings.Contains(out, "2 ms") {
		t.Errorf("table for 250µs delays:\n%s\nwant µs, never 0 ms", out)
	}
}

// FuzzTruncate checks the invariants the solved multiplier relies on:
// truncate never exceeds its input (so a truncated answer still fits),
// never decreases as digits are added, and 17 digits give the input back
// (or the float64 just below it).
func FuzzTruncate(f *testing.F) {
	for _, x := range []float64{1, 1.0000000009999999, 3.043230628040466, 1e300, math.MaxFloat64, 1.5} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		if !(x >= 1) || math.IsInf(x, 0) {
			return
		}
		prev := 0.0
		for digits := 1; digits <= 17; digits++ {
			got := truncate(x, digits)
			if got > x || got < prev || got < 1 {
				t.Fatalf("truncate(%v, %d) = %v, want in [max(1, %v), %v]", x, digits, got, prev, x)
			}
			prev = got
		}
		// 17 digits identify a float64, but cutting (not rounding) them may
		// land one step below it.
		if prev != x && math.Nextafter(prev, math.Inf(1)) != x {
			t.Fatalf("truncate(%v, 17) = %v, want the input or the float64 just below it", x, prev)
		}
	})
}
