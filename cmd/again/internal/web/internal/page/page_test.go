package page

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/cmd/again/internal/calc"
	"github.com/again-go/again/cmd/again/internal/cmd/root"
	"github.com/again-go/again/cmd/again/internal/cmdutil"
)

var example = map[string]string{"initial": "500ms", "multiplier": "2", "max": "30s", "retries": "8", "jitter": "full"}

func TestComputeWorkedExample(t *testing.T) {
	r := Compute(example, English)
	if len(r.Errors) > 0 {
		t.Fatalf("Compute(example, English) errors: %v", r.Errors)
	}
	wantDelay := []string{"500 ms", "1 s", "2 s", "4 s", "8 s", "16 s", "30 s", "30 s"}
	if len(r.Rows) != len(wantDelay) {
		t.Fatalf("Compute(example, English) has %d rows, want %d", len(r.Rows), len(wantDelay))
	}
	for i, want := range wantDelay {
		if got := r.Rows[i].Delay; got != want {
			t.Errorf("row %d delay = %q, want %q", i+1, got, want)
		}
		if got, want := r.Rows[i].Capped, i >= 6; got != want {
			t.Errorf("row %d capped = %v, want %v", i+1, got, want)
		}
	}
	if got := r.Rows[7].TotalMax; got != "1 min 32 s" {
		t.Errorf("cumulative worst case after retry 8 = %q, want 1 min 32 s", got)
	}
	if s := r.Summary; s.Worst != "1 min 32 s" || s.Mean != "45.8 s" || s.Shortest != "0 ms" {
		t.Errorf("headline worst, mean and shortest = %q, %q, %q; want 1 min 32 s, 45.8 s, 0 ms", s.Worst, s.Mean, s.Shortest)
	}
	if r.Summary.Verdict != nil {
		t.Errorf("verdict without a deadline = %+v, want none", r.Summary.Verdict)
	}
	if r.Announce != "Worst case 1 min 32 s, mean 45.8 s." {
		t.Errorf("Announce = %q", r.Announce)
	}
	if b := r.Chart.Bars; len(b) != 8 || b[7].TotalMaxMs != 91500 || b[7].MaxMs != 30000 || b[0].First != 1 || b[0].Last != 1 {
		t.Errorf("chart bars = %+v, want one per retry ending at 30 s and 91500 ms cumulative", b)
	}
	if a := r.Chart.Attempts; len(a) != 9 || a[0] != (Attempt{N: 1}) || a[8].N != 9 || a[8].MaxMs != 91500 {
		t.Errorf("timeline attempts = %+v, want 9 from t = 0 to 91500 ms", a)
	}
	if r.Chart.Delay.Top < 30000 || r.Chart.Delay.Top > 60000 {
		t.Errorf("delay scale %+v does not fit the longest delay, 30 s", r.Chart.Delay)
	}
	if r.Chart.Total.Top < 91500 || len(r.Chart.Total.Ticks) < 2 {
		t.Errorf("chart scale %+v does not cover 91.5 s with at least 2 gridlines", r.Chart)
	}
	if j := Export(example, "json"); j.Error != "" || !json.Valid([]byte(j.Text)) {
		t.Errorf("JSON export is not valid JSON: %+.80v", j)
	}
}

func TestComputeDeadline(t *testing.T) {
	in := map[string]string{"deadline": "60s"}
	for k, v := range example {
		in[k] = v
	}
	r := Compute(in, English)
	v := r.Summary.Verdict
	if v == nil {
		t.Fatal("no verdict with a deadline")
	}
	// The worst case, 91.5 s, and the 100 ms kept for the last attempt miss
	// the minute by 31.6 s; the loop shortens the seventh wait, so seven
	// retries start in time.
	if v.Fits || v.RetriesWithin != 7 || v.Deadline != "1 min" || v.Headline != "Misses the 1 min deadline by 31.6 s" {
		t.Errorf("verdict = %+v, want worst case missing by 31.6 s, 7 retries within, deadline 1 min", *v)
	}
	if r.Chart.Cross != 8 {
		t.Errorf("chart marks retry %d as the first to start late, want 8", r.Chart.Cross)
	}
	if r.Chart.Total.Top < 91500 {
		t.Errorf("chart top %v ms is below the worst case", r.Chart.Total.Top)
	}
}

func TestComputeErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct{ field, value string }{
		{"initial", "5 parsecs"},
		{"multiplier", "two"},
		{"max", "-"},
		{"retries", "1.5"},
		{"jitter", "sometimes"},
		{"jitter", "proportional:2"},
		{"deadline", "soon"},
	} {
		t.Run(tc.field+"="+tc.value, func(t *testing.T) {
			in := map[string]string{}
			for k, v := range example {
				in[k] = v
			}
			in[tc.field] = tc.value
			r := Compute(in, English)
			if len(r.Errors) != 1 || r.Errors[0].Field != tc.field || r.Errors[0].Text == "" {
				t.Fatalf("Compute with %s=%q: errors %v, want one for %s", tc.field, tc.value, r.Errors, tc.field)
			}
			if r.Rows != nil || r.Summary != nil || r.Chart != nil {
				t.Errorf("Compute with %s=%q returned results along with the error", tc.field, tc.value)
			}
		})
	}
}

func TestCommandKeepsWhatWasTyped(t *testing.T) {
	in := map[string]string{"initial": "1.5s", "multiplier": "2", "max": "1m", "retries": "3", "jitter": "proportional:0.2", "deadline": "10s"}
	got := Compute(in, English).Command
	want := "again calc --initial 1.5s --multiplier 2 --max 1m --retries 3 --jitter proportional:0.2 --deadline 10s"
	if got != want {
		t.Errorf("Command = %q, want %q", got, want)
	}
	// The page takes bare milliseconds; the command's flags refuse them
	// as ambiguous, so its command line says the unit.
	in = map[string]string{"initial": "500", "max": "30000", "deadline": "91500", "retries": "0"}
	got = Compute(in, English).Command
	want = "again calc --initial 500ms --max 30s --retries 0 --deadline 1m31.5s"
	if !strings.HasPrefix(got, "again calc --initial 500ms") || !strings.Contains(got, " --max 30s ") || !strings.HasSuffix(got, " --deadline 1m31.5s") {
		t.Errorf("Command with bare milliseconds = %q, want the units written, as in %q", got, want)
	}
	if got := shellQuote("a b'c"); got != `'a b'\''c'` {
		t.Errorf("shellQuote(%q) = %q", "a b'c", got)
	}
}

func TestSnippetIsGo(t *testing.T) {
	for _, in := range []map[string]string{
		example,
		{"initial": "1.5s", "multiplier": "1.6", "max": "0", "retries": "2", "jitter": "proportional:0.2", "deadline": "90s"},
		{"initial": "250", "retries": "1", "jitter": "decorrelated"},
	} {
		s := Compute(in, English).Snippet
		src := "package p\nfunc f() {\n" + s + "}\n"
		if _, err := parser.ParseFile(token.NewFileSet(), "snippet.go", src, 0); err != nil {
			t.Errorf("snippet for %v does not parse: %v\n%s", in, err, s)
		}
	}
	s := Compute(example, English).Snippet
	for _, want := range []string{"500 * time.Millisecond", "30 * time.Second", "Retries:    8", "backoff.FullJitter", "retry.Run(ctx, policy, "} {
		if !strings.Contains(s, want) {
			t.Errorf("snippet lacks %q:\n%s", want, s)
		}
	}
}

func TestGoDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0"},
		{time.Second, "time.Second"},
		{1500 * time.Millisecond, "1500 * time.Millisecond"},
		{2 * time.Hour, "2 * time.Hour"},
		{90 * time.Minute, "90 * time.Minute"},
		{1001 * time.Microsecond, "1001 * time.Microsecond"},
		{7, "7 * time.Nanosecond"},
	} {
		if got := goDuration(tc.d); got != tc.want {
			t.Errorf("goDuration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestScale(t *testing.T) {
	for _, hi := range []time.Duration{0, time.Millisecond, 91500 * time.Millisecond, 7 * time.Hour, 1 << 62, time.Duration(1<<63 - 1)} {
		c := linear(hi, English)
		if len(c.Ticks) < 2 || len(c.Ticks) > 7 || c.Ticks[0] != (Tick{0, "0"}) {
			t.Errorf("linear(%v) has gridlines %v, want 0 labelled \"0\" and 1 to 6 more", hi, c.Ticks)
		}
		if c.Top < ms(hi)*(1-1e-9) {
			t.Errorf("linear(%v).Top = %v ms, below %v ms", hi, c.Top, ms(hi))
		}
	}
	for _, tc := range []struct {
		hi   time.Duration
		want []string
	}{
		{91500 * time.Millisecond, []string{"0", "30 s", "1 min", "1 min 30 s", "2 min"}},
		{7 * time.Hour, []string{"0", "2 h", "4 h", "6 h", "8 h"}},
		{4650 * time.Hour, []string{"0", "50 d", "100 d", "150 d", "200 d"}},
	} {
		var got []string
		for _, tick := range linear(tc.hi, English).Ticks {
			got = append(got, tick.Label)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("linear(%v) labels = %q, want %q", tc.hi, got, tc.want)
		}
	}
}

// TestHugeSchedulesChangeUnits: an uncapped schedule that grows beyond
// any human scale is drawn on a logarithmic axis with familiar units, and
// its cells say years, not "1281023 h 53 min".
func TestHugeSchedulesChangeUnits(t *testing.T) {
	r := Compute(map[string]string{"initial": "1s", "multiplier": "2", "max": "0", "retries": "100", "jitter": "none"}, English)
	if len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	for _, sc := range []Scale{r.Chart.Total, r.Chart.Delay} {
		if !sc.Log || len(sc.Ticks) < 3 || len(sc.Ticks) > 8 {
			t.Errorf("scale %+v: want a logarithmic one with 3 to 8 gridlines", sc)
		}
		for _, tick := range sc.Ticks {
			if tick.Ms < sc.Bottom || tick.Ms > sc.Top || strings.Contains(tick.Label, "000 d") {
				t.Errorf("gridline %+v outside %v..%v or in thousands of days", tick, sc.Bottom, sc.Top)
			}
		}
	}
	if got := r.Rows[29].Delay; got != "17 years" {
		t.Errorf("delay of retry 30 (2^29 s) = %q, want 17 years", got)
	}
	if got := r.Summary.Worst; got != "more than 292 years" {
		t.Errorf("worst case = %q, want more than 292 years", got)
	}
	if r := Compute(example, English); r.Chart.Total.Log || r.Chart.Delay.Log {
		t.Errorf("the worked example is drawn on a logarithmic scale: %+v", r.Chart)
	}
}

func TestRetryTicks(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want []int
	}{
		{0, nil},
		{1, []int{1}},
		{8, []int{1, 2, 3, 4, 5, 6, 7, 8}},
		{9, []int{1, 2, 4, 6, 8, 9}},
		{40, []int{1, 5, 10, 15, 20, 25, 30, 35, 40}},
		{99, []int{1, 20, 40, 60, 80, 99}},
		{100000, []int{1, 20000, 40000, 60000, 80000, 100000}},
	} {
		if got := retryTicks(tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("retryTicks(%d) = %v, want %v", tc.n, got, tc.want)
		}
	}
}

func TestSolveNeedsDeadline(t *testing.T) {
	if r := Solve(example, "retries", English); r.Error == "" {
		t.Errorf("Solve without a deadline = %+v, want an error", r)
	}
	in := map[string]string{"deadline": "1m"}
	for k, v := range example {
		in[k] = v
	}
	if r := Solve(in, "jitter", English); r.Error == "" {
		t.Errorf("Solve for jitter = %+v, want an error", r)
	}
}

func TestSolvedDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{1234567891, "1.23s"},
		{123456789, "123ms"},
		{12345678, "12.3ms"},
		{999, "999ns"},
		{0, "0s"},
		{time.Minute + 59*time.Second, "1m59s"},
	} {
		if got := solvedDuration(tc.d); got != tc.want {
			t.Errorf("solvedDuration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestSolve(t *testing.T) {
	in := map[string]string{"deadline": "60s"}
	for k, v := range example {
		in[k] = v
	}
	for _, tc := range []struct{ param, want string }{
		{"retries", "6"},
	} {
		if r := Solve(in, tc.param, English); r.Field != tc.param || r.Value != tc.want {
			t.Errorf("Solve(example, deadline 60s, %s) = %+v, want %s", tc.param, r, tc.want)
		}
	}
	for _, param := range []string{"initial", "multiplier"} {
		r := Solve(in, param, English)
		if r.Error != "" {
			t.Fatalf("Solve(example, %s) = %+v", param, r)
		}
		in2 := map[string]string{}
		for k, v := range in {
			in2[k] = v
		}
		in2[param] = r.Value
		if v := Compute(in2, English).Summary.Verdict; v == nil || !v.Fits {
			t.Errorf("with the solved %s = %s the worst case does not fit: %+v", param, r.Value, v)
		}
	}
}

func TestEmptyFieldMeansDefault(t *testing.T) {
	d := Defaults()
	if d["initial"] != "500ms" || d["retries"] != "3" || d["jitter"] != "full" || d["deadline"] != "" {
		t.Errorf("Defaults() = %v, want those of backoff.Default() and no deadline", d)
	}
	a := Export(map[string]string{"initial": "", "multiplier": " ", "retries": "3"}, "json")
	b := Export(d, "json")
	if a.Error != "" || a.Text != b.Text {
		t.Errorf("empty fields: error %q, JSON %.100s; want the defaults' JSON %.100s", a.Error, a.Text, b.Text)
	}
}

func TestEveryWrongFieldIsMarked(t *testing.T) {
	r := Compute(map[string]string{"initial": "soon", "retries": "-1", "jitter": "some", "timeout": "x"}, English)
	var fields []string
	for _, e := range r.Errors {
		fields = append(fields, e.Field)
		if !strings.HasPrefix(e.Text, "Must be ") {
			t.Errorf("error for %s = %q, want it to say what the field must be", e.Field, e.Text)
		}
	}
	if want := []string{"initial", "retries", "jitter", "timeout"}; !slices.Equal(fields, want) {
		t.Errorf("errors for %q, want one for each of %q in the form's order", fields, want)
	}
}

// TestSnippetCompiles type-checks the Go snippet against the module's own
// backoff and retry packages, so that a change of their API breaks this
// test rather than the code users paste, and reads back the constants it
// sets: the snippet's policy and deadline must be the page's.
func TestSnippetCompiles(t *testing.T) {
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "source", nil)
	inputs := []map[string]string{
		example,
		{"initial": "1.5s", "multiplier": "1.6", "max": "0", "retries": "2", "jitter": "proportional:0.2", "deadline": "90s"},
		{"initial": "250", "retries": "1", "jitter": "decorrelated", "deadline": "1h"},
		{"jitter": "none"},
		{"jitter": "equal"},
		{"jitter": "proportional", "initial": "1.0005", "max": "2562047h47m16.854775807s", "multiplier": "1e300"},
		classInputs,
		{"on-transient.initial": "0", "on-transient.max": "0", "on-transient.retries": "0", "on-transient.jitter": "proportional:0.1"},
	}
	r := rand.New(rand.NewPCG(3, 4))
	durations := []string{"0", "1", "7.25", "1.5ms", "90s", "1h2m3s", "999us", "3ns", "2562047h"}
	for range 30 {
		inputs = append(inputs, map[string]string{
			"initial":    durations[r.IntN(len(durations))],
			"multiplier": strconv.FormatFloat(1+r.Float64()*3, 'g', -1, 64),
			"max":        durations[r.IntN(len(durations))],
			"retries":    strconv.Itoa(r.IntN(50)),
			"jitter":     []string{"none", "full", "equal", "decorrelated", "proportional", "proportional:0.05", "proportional:1"}[r.IntN(7)],
			"deadline":   []string{"", "5s", "1.5m", "100"}[r.IntN(4)],
		})
	}
	for _, in := range inputs {
		want, errs := parse(in, English)
		if len(errs) > 0 {
			t.Fatalf("inputs %v: %v", in, errs)
		}
		src := "package p\n\nimport (\n\t\"context\"\n\t\"time\"\n\n\t\"github.com/again-go/again/backoff\"\n\t\"github.com/again-go/again/retry\"\n)\n\n" +
			"var _ = time.Second\n\nfunc callTheService(context.Context) error { return nil }\n\n" +
			"func f(ctx context.Context) error {\n" + Compute(in, English).Snippet + "return err\n}\n"
		f, err := parser.ParseFile(fset, "snippet.go", src, 0)
		if err != nil {
			t.Fatalf("snippet for %v does not parse: %v\n%s", in, err, src)
		}
		conf := types.Config{Importer: imp}
		info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
		if _, err := conf.Check("p", fset, []*ast.File{f}, info); err != nil {
			t.Errorf("snippet for %v does not compile: %v\n%s", in, err, src)
			continue
		}
		got, deadline := snippetPolicy(t, f, info)
		p := want.Policy
		if got.Initial != p.Initial || got.EffectiveMultiplier() != p.EffectiveMultiplier() || got.Max != p.Max ||
			got.Retries != p.Retries || got.Jitter != p.Jitter || got.JitterText() != p.JitterText() || deadline != want.Deadline {
			t.Errorf("snippet for %v sets %+v with deadline %v, want the page's %+v with deadline %v\n%s", in, got, deadline, p, want.Deadline, src)
		}
	}
}

// snippetPolicy returns the constants the snippet f puts in its
// backoff.Policy literal and passes to context.WithTimeout.
func snippetPolicy(t *testing.T, f *ast.File, info *types.Info) (p backoff.Policy, deadline time.Duration) {
	t.Helper()
	num := func(e ast.Expr) constant.Value {
		v := info.Types[e].Value
		if v == nil {
			t.Fatalf("%s is not a constant", types.ExprString(e))
		}
		return v
	}
	i64 := func(e ast.Expr) int64 {
		n, exact := constant.Int64Val(constant.ToInt(num(e)))
		if !exact {
			t.Fatalf("%s is not an int64", types.ExprString(e))
		}
		return n
	}
	f64 := func(e ast.Expr) float64 {
		x, _ := constant.Float64Val(constant.ToFloat(num(e)))
		return x
	}
	seen := false
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			// The call's policy is the first backoff.Policy; the classes'
			// follow it, and TestSnippetClasses reads them.
			if seen || types.ExprString(n.Type) != "backoff.Policy" {
				return true
			}
			seen = true
			for _, el := range n.Elts {
				kv := el.(*ast.KeyValueExpr)
				switch v := kv.Value; kv.Key.(*ast.Ident).Name {
				case "Initial":
					p.Initial = time.Duration(i64(v))
				case "Multiplier":
					p.Multiplier = f64(v)
				case "Max":
					p.Max = time.Duration(i64(v))
				case "Retries":
					p.Retries = int(i64(v))
				case "Jitter":
					p.Jitter = backoff.Jitter(i64(v))
				case "JitterFactor":
					p.JitterFactor = f64(v)
				default:
					t.Errorf("unexpected field %s in the snippet's policy", kv.Key)
				}
			}
		case *ast.CallExpr:
			if types.ExprString(n.Fun) == "context.WithTimeout" {
				deadline = time.Duration(i64(n.Args[1]))
			}
		}
		return true
	})
	return p, deadline
}

// FuzzCompute feeds arbitrary text to every field: Compute must never
// panic, and it returns either errors naming known fields or a full result
// whose table has one row per retry.
func FuzzCompute(f *testing.F) {
	f.Add("500ms", "2", "30s", "8", "full", "60s")
	f.Add("0", "1", "0", "0", "none", "")
	f.Add("1.5", "1.6", "2m", "40", "proportional:0.2", "1h")
	f.Add("fast", "x", "-1s", "-3", "proportional:2", "0")
	f.Add("2562047h", "10", "0", "99", "decorrelated", "2562047h")
	f.Fuzz(func(t *testing.T, initial, multiplier, maxDelay, retries, jitter, deadline string) {
		in := map[string]string{"initial": initial, "multiplier": multiplier, "max": maxDelay, "retries": retries, "jitter": jitter, "deadline": deadline}
		if n, err := strconv.Atoi(strings.TrimSpace(retries)); err == nil && n > 200 {
			return // long schedules are internal/calc's to fuzz; keep each input fast
		}
		r := Compute(in, Russian)
		if len(r.Errors) > 0 {
			for _, e := range r.Errors {
				if !slices.Contains(Fields(), e.Field) || !strings.HasPrefix(e.Text, "Нужн") {
					t.Errorf("error %+v: want a known field and a Russian message", e)
				}
			}
			return
		}
		j, c := Export(in, "json"), Export(in, "csv")
		if r.Summary == nil || r.Chart == nil || !json.Valid([]byte(j.Text)) || !strings.HasPrefix(c.Text, "retry,") {
			t.Fatalf("valid input %v gave an incomplete result", in)
		}
		var rep struct {
			Policy struct{ Retries int } `json:"policy"`
		}
		json.Unmarshal([]byte(j.Text), &rep)
		if r.Retries != rep.Policy.Retries || len(r.Rows) != min(r.Retries, MaxRows) {
			t.Errorf("input %v: %d rows and a count of %d for %d retries", in, len(r.Rows), r.Retries, rep.Policy.Retries)
		}
	})
}

func TestLongSchedulesStayLight(t *testing.T) {
	r := Compute(map[string]string{"initial": "100ms", "max": "1m", "retries": "5000", "jitter": "equal"}, English)
	if len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	if len(r.Rows) != MaxRows || r.Retries != 5000 {
		t.Errorf("%d rows of %d retries, want the first %d of 5000", len(r.Rows), r.Retries, MaxRows)
	}
	rows, _, _ := strings.Cut(Export(map[string]string{"initial": "100ms", "max": "1m", "retries": "5000", "jitter": "equal"}, "csv").Text, "\n\n")
	if n := strings.Count(rows, "\n"); n != 5000 {
		t.Errorf("CSV's first table has %d lines, want a header and all 5000 retries", n+1)
	}
	bars := r.Chart.Bars
	if len(bars) > MaxBars || bars[0].First != 1 || bars[len(bars)-1].Last != 5000 {
		t.Fatalf("%d bars from retry %d to %d, want at most %d covering 1..5000", len(bars), bars[0].First, bars[len(bars)-1].Last, MaxBars)
	}
	for i, b := range bars {
		if !(b.MinMs <= b.MeanMs && b.MeanMs <= b.MaxMs) || b.MaxMs > 60000 {
			t.Errorf("bar %d = %+v: want min <= mean <= max <= 60000 ms", i, b)
		}
		if i > 0 && b.First != bars[i-1].Last+1 {
			t.Errorf("bar %d starts at retry %d after a bar ending at %d", i, b.First, bars[i-1].Last)
		}
	}
}

// BenchmarkCompute measures what the page does on every keystroke, natively;
// in the browser the same code runs as WebAssembly, a few times slower.
func BenchmarkCompute(b *testing.B) {
	for _, tc := range []struct{ retries, jitter string }{{"100", "full"}, {"100", "decorrelated"}, {"100000", "full"}} {
		in := map[string]string{"initial": "100ms", "multiplier": "1.5", "max": "1m", "retries": tc.retries, "jitter": tc.jitter, "deadline": "30m"}
		b.Run(tc.retries+"retries/"+tc.jitter, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Compute(in, English)
			}
		})
	}
}

// TestMessagesAreTheCLIs runs `again calc` in-process with the same wrong
// values and checks that the page shows what the command prints, word for
// word, a quoted value in the page's quotation marks (“fast”) where the
// terminal has Go's ("fast"), and bare milliseconds offered only where they
// are taken, on the page.
func TestMessagesAreTheCLIs(t *testing.T) {
	for _, tc := range []struct{ field, value string }{
		{"initial", "fast"},
		{"multiplier", "0.5"},
		{"max", "-1s"},
		{"retries", "many"},
		{"jitter", "proportional:2"},
		{"deadline", "soon"},
	} {
		var stdout, stderr bytes.Buffer
		code := root.Run(t.Context(), []string{"calc", "--" + tc.field, tc.value}, strings.NewReader(""), &stdout, &stderr)
		e := Compute(map[string]string{tc.field: tc.value}, English).Errors[0]
		// The page says under the field "Must be WANT, got VALUE." where the
		// command says `--FIELD "VALUE": want WANT`.
		want, value, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(e.Text, "Must be "), "."), ", got ")
		if value != tc.value && value != "“"+tc.value+"”" {
			t.Errorf("--%s %q: the page says %q, not the value as typed", tc.field, tc.value, e.Text)
		}
		// The page takes bare milliseconds; the command's flags want a unit.
		want = strings.Replace(want, ", or a bare number of milliseconds", "", 1)
		page := "--" + e.Field + " " + strconv.Quote(tc.value) + ": want " + want
		if code != cmdutil.ExitUsage || stderr.String() != "again calc: "+page+"\n" {
			t.Errorf("--%s %q: again calc exits %d with %q, the page says %q", tc.field, tc.value, code, stderr.String(), page)
		}
	}
}

func TestSolveForP99(t *testing.T) {
	in := map[string]string{"deadline": "60s", "target": "p99"}
	for k, v := range example {
		in[k] = v
	}
	r := Solve(in, "retries", English)
	n, err := strconv.Atoi(r.Value)
	if r.Error != "" || err != nil || n < 6 {
		t.Fatalf("Solve(example, p99 within 60 s, retries) = %+v, want at least the 6 retries whose worst case fits", r)
	}
	in["retries"] = r.Value
	res := Compute(in, English)
	if res.Summary.Verdict == nil || !res.Summary.Verdict.P99Fits {
		t.Errorf("with %d retries the 99th percentile does not fit: %+v", n, res.Summary.Verdict)
	}
	in["retries"] = strconv.Itoa(n + 1)
	if res := Compute(in, English); res.Summary.Verdict.P99Fits {
		t.Errorf("with %d retries the 99th percentile still fits: the solver did not find the largest", n+1)
	}
}

// TestExportIsTheCLIs runs `again calc --format csv|json` in-process with
// the page's inputs as flags: the page's downloads must be the very same
// bytes.
func TestExportIsTheCLIs(t *testing.T) {
	for _, in := range []map[string]string{
		example,
		{"initial": "1.5s", "multiplier": "1.6", "max": "0", "retries": "12", "jitter": "proportional:0.2", "deadline": "90s"},
		{"initial": "250", "retries": "20", "jitter": "decorrelated", "deadline": "1h", "seed": "7"},
		{"jitter": "equal", "retries": "1500"},
		{"initial": "2562047h", "max": "0", "retries": "70", "jitter": "none"},
	} {
		var args []string
		for _, f := range Fields() {
			if s, ok := in[f]; ok {
				args = append(args, "--"+f, withUnit(f, s)) // as the page's command writes it
			}
		}
		for _, format := range []string{"csv", "json"} {
			var stdout, stderr bytes.Buffer
			code := root.Run(t.Context(), append([]string{"calc", "--format", format}, args...), strings.NewReader(""), &stdout, &stderr)
			if code != 0 {
				t.Fatalf("again calc %v exits %d: %s", args, code, stderr.String())
			}
			if got := Export(in, format); got.Error != "" || got.Text != stdout.String() {
				t.Errorf("Export(%v, %s) = %+.200v\nwant what again calc prints:\n%.200s", in, format, got, stdout.String())
			}
		}
	}
	if got := Export(map[string]string{"retries": "-1"}, "csv"); got.Error != `--retries "-1": want a whole number from 0 to 100000` || got.Text != "" {
		t.Errorf("Export with retries -1 = %+v, want the CLI's message and no file", got)
	}
	if got := Export(example, "yaml"); got.Error == "" || got.Text != "" {
		t.Errorf("Export(example, yaml) = %+v, want an error", got)
	}
}

// TestCommandRuns runs the page's command line in-process: again calc must
// accept it and print the page's downloads, whatever the page keeps that
// the command does not take (the solver's target).
func TestCommandRuns(t *testing.T) {
	for _, in := range []map[string]string{
		example,
		{"initial": "1.5s", "multiplier": "1.6", "max": "0", "retries": "12", "jitter": "proportional:0.2", "deadline": "90s", "target": "p99"},
		{"initial": "250", "retries": "20", "jitter": "decorrelated", "deadline": "1h", "target": "max", "seed": "7"},
		{"retries": "2"},
	} {
		words := strings.Fields(Compute(in, English).Command)
		if len(words) < 2 || words[0] != "again" || words[1] != "calc" {
			t.Fatalf("command for %v = %q, want again calc ...", in, Compute(in, English).Command)
		}
		var stdout, stderr bytes.Buffer
		if code := root.Run(t.Context(), append(words[1:], "--format", "csv"), strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Errorf("%s: exit status %d, %s", Compute(in, English).Command, code, stderr.String())
			continue
		}
		if want := Export(in, "csv").Text; stdout.String() != want {
			t.Errorf("%s --format csv printed\n%.200s\nbut the page's download is\n%.200s", Compute(in, English).Command, stdout.String(), want)
		}
	}
}

// TestPageAndCLICannotDrift checks that the page shows what `again calc`
// prints for the same inputs: the totals, which of them are estimates, and
// the deadline verdict all come from the one calc.Report both render.
func TestPageAndCLICannotDrift(t *testing.T) {
	for _, v := range []map[string]string{
		{"initial": "500ms", "multiplier": "2", "max": "30s", "retries": "8", "jitter": "full", "deadline": "60s"},
		{"jitter": "decorrelated", "max": "1h", "retries": "4", "seed": "3", "deadline": "2s"},   // exact mean, estimated percentiles
		{"jitter": "decorrelated", "max": "2s", "retries": "12", "seed": "3", "deadline": "20s"}, // estimated mean
		{"initial": "0.25", "retries": "3", "jitter": "equal"},                                   // sub-millisecond
		{"jitter": "proportional:0.5", "max": "0", "retries": "20", "deadline": "10m"},
	} {
		res := Compute(v, English)
		if len(res.Errors) > 0 {
			t.Fatalf("Compute(%v) errors: %v", v, res.Errors)
		}
		in, err := calc.Parse(values(v))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := calc.Compute(in)
		if err != nil {
			t.Fatal(err)
		}
		var table bytes.Buffer
		if err := rep.WriteTable(&table); err != nil {
			t.Fatal(err)
		}
		cli := table.String()
		tot := res.Summary
		// The page's text is the report's number in Lang.Duration, which is
		// calc.Human's text below a day (and days or years above, where the
		// CLI prints hours).
		tr := rep.Total
		for _, c := range []struct {
			page string
			m    calc.Millis
		}{{tot.Shortest, tr.Min}, {tot.Mean, tr.Mean}, {tot.Worst, tr.Max}, {tot.P50, tr.P50}, {tot.P90, tr.P90}, {tot.P99, tr.P99}} {
			if d := time.Duration(c.m); c.page != English.Duration(d) || d < day && !strings.Contains(cli, c.page) {
				t.Errorf("%v: the page shows %q for %v, which `again calc` does not print:\n%s", v, c.page, d, cli)
			}
		}
		cliMean := strings.Contains(cli, "the mean and percentiles are a Monte Carlo estimate")
		cliPct := cliMean || strings.Contains(cli, "the percentiles are a Monte Carlo estimate")
		if tot.MeanEstimated != cliMean || tot.PercentilesEstimated != cliPct || (tot.Estimate != "") != cliPct {
			t.Errorf("%v: page estimated (note %q, mean %v, percentiles %v), CLI (mean %v, percentiles %v)",
				v, tot.Estimate, tot.MeanEstimated, tot.PercentilesEstimated, cliMean, cliPct)
		}
		if vd := res.Summary.Verdict; vd != nil {
			if vd.Fits != strings.Contains(cli, ": fits;") {
				t.Errorf("%v: page worst case fits = %v, CLI says:\n%s", v, vd.Fits, cli)
			}
			if !vd.Fits && vd.P99Fits != strings.Contains(cli, "ends within it.\n") {
				t.Errorf("%v: page p99 fits = %v, CLI says:\n%s", v, vd.P99Fits, cli)
			}
		}
	}
}
