package page

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/cmd/again/internal/calc"
	"github.com/again-go/again/cmd/again/internal/cmd/root"
	"github.com/again-go/again/cmd/again/internal/web/internal/catalog"
)

// TestExactDeadline: the deadline and an attempt's timeout, values the user
// gave, are echoed as given, in either language: 1,5 typed in Deadline is
// 1.5 ms, not the 2 ms Duration would round it to. Below a day Exact is
// calc.HumanExact's text, as `again calc` prints a deadline.
func TestExactDeadline(t *testing.T) {
	in := map[string]string{"deadline": "1,5", "timeout": "2.25ms"}
	for k, v := range example {
		in[k] = v
	}
	for l, want := range map[Lang][2]string{
		English: {"Misses the 1.5 ms deadline by ", "Including the attempts’ own time: 9 × 2.25 ms."},
		Russian: {"Не укладывается в дедлайн 1,5 мс: не хватает ", "Включая время самих попыток: 9 × 2,25 мс."},
	} {
		s := Compute(in, l).Summary
		if !strings.HasPrefix(s.Verdict.Headline, want[0]) || s.Attempts != want[1] {
			t.Errorf("%s: verdict %q and %q, want %q… and %q", l, s.Verdict.Headline, s.Attempts, want[0], want[1])
		}
	}
	if got, want := Solve(map[string]string{"initial": "2s", "retries": "8", "deadline": "1.5ms"}, "multiplier", English).Error,
		"No multiplier keeps the worst-case total wait within 1.5 ms."; got != want {
		t.Errorf("solving within 1.5 ms: %q, want %q", got, want)
	}
	r := rand.New(rand.NewPCG(7, 8))
	for range 3000 {
		d := time.Duration(r.Int64N(int64(day)))
		d >>= r.IntN(40)
		if got, want := English.Exact(d), calc.HumanExact(d); got != want {
			t.Errorf("English.Exact(%v) = %q, want calc.HumanExact's %q", d, got, want)
		}
		if got, typed := Russian.Exact(d), normalize(calc.FieldDeadline, Russian.Exact(d)); d >= time.Millisecond && typed != d.String() {
			t.Errorf("Russian.Exact(%v) = %q, which reads back as %s", d, got, typed)
		}
	}
	for d, want := range map[time.Duration]string{
		3*day + 4*time.Hour:                   "3 d 4 h",
		3*day + 90*time.Second + 1:            "3 d 1 min 30.000000001 s",
		1000 * day:                            "1000 d",
		maxDuration:                           "106751 d 23 h 47 min 16.854775807 s",
		1500 * time.Microsecond:               "1.5 ms",
		59*time.Second + 999*time.Millisecond: "59.999 s",
	} {
		if got := English.Exact(d); got != want {
			t.Errorf("English.Exact(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestDurationIsHumanBelowADay: below a day the page writes durations as
// `again calc` does, so the two never show different text for one number.
func TestDurationIsHumanBelowADay(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		d := time.Duration(r.Int64N(int64(day - 500*time.Millisecond)))
		if r.IntN(3) == 0 {
			d %= time.Second // sub-millisecond and millisecond values too
		}
		if got, want := English.Duration(d), calc.Human(d); got != want {
			t.Errorf("English.Duration(%v) = %q, want calc.Human's %q", d, got, want)
		}
	}
}

func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		d      time.Duration
		en, ru string
	}{
		{0, "0 ms", "0 мс"},
		{250 * time.Microsecond, "250 µs", "250 мкс"},
		{999999, "1 ms", "1 мс"},
		{7, "7 ns", "7 нс"},
		{45750 * time.Millisecond, "45.8 s", "45,8 с"},
		{91500 * time.Millisecond, "1 min 32 s", "1 мин 32 с"},
		{3*time.Hour + 5*time.Second, "3 h 5 s", "3 ч 5 с"},
		{26 * time.Hour, "1 d 2 h", "1 дн. 2 ч"},
		{1281023*time.Hour + 53*time.Minute, "146 years", "146 лет"},
		{time.Duration(365.25 * 3 * float64(day)), "3 years", "3 года"},
		{999 * day, "999 d", "999 дн."},
		{time.Duration(365.25 * 21 * float64(day)), "21 years", "21 год"},
		{maxDuration, "more than 292 years", "больше 292 лет"},
		{-1500 * time.Millisecond, "−1.5 s", "−1,5 с"},
	} {
		if got := English.Duration(tc.d); got != tc.en {
			t.Errorf("English.Duration(%v) = %q, want %q", tc.d, got, tc.en)
		}
		if got := Russian.Duration(tc.d); got != tc.ru {
			t.Errorf("Russian.Duration(%v) = %q, want %q", tc.d, got, tc.ru)
		}
	}
}

// TestOwnOutputTypedBack: whatever the page writes in either language
// can be typed back into a field and means that duration (to the
// precision shown).
func TestOwnOutputTypedBack(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 500 {
		d := time.Duration(r.Int64N(int64(900 * day)))
		for _, l := range []Lang{English, Russian} {
			text := l.Duration(d)
			got, ok := humanDuration(text)
			if !ok {
				t.Fatalf("%s: %q (for %v) is not read back", l, text, d)
			}
			if l.Duration(got) != text {
				t.Errorf("%s: %q reads back as %v, shown as %q", l, text, got, l.Duration(got))
			}
			if res := Compute(map[string]string{"initial": text, "retries": "2", "timeout": text}, l); len(res.Errors) > 0 {
				t.Errorf("%s: initial and timeout %q: %v", l, text, res.Errors)
			}
		}
	}
	for _, tc := range []struct{ field, in, want string }{
		{"max", "30 s", "30s"},
		{"deadline", "1 min 32 s", "1m32s"},
		{"initial", "45,8 с", "45.8s"},
		{"initial", "2,5", "2.5"},
		{"initial", "500ms", "500ms"},
		{"multiplier", "1,5", "1.5"},
		{"jitter", "proportional:0,2", "proportional:0.2"},
		{"max", "soon", "soon"},
	} {
		if got := normalize(tc.field, tc.in); got != tc.want {
			t.Errorf("normalize(%s, %q) = %q, want %q", tc.field, tc.in, got, tc.want)
		}
	}
	got := Compute(map[string]string{"initial": "0,5 с", "multiplier": "2", "max": "30 с", "retries": "8"}, Russian)
	if len(got.Errors) > 0 || got.Summary.Worst != "1 мин 32 с" || !strings.Contains(got.Command, "--initial 500ms") || !strings.Contains(got.Command, "--max 30s") {
		t.Errorf("the worked example typed in Russian: %+v, command %q", got.Summary, got.Command)
	}
}

// TestRussianMessages: on the Russian page every error and solver message
// is Russian and quotes what was typed.
func TestRussianMessages(t *testing.T) {
	for _, tc := range []struct{ field, value string }{
		{"initial", "fast"}, {"multiplier", "0.5"}, {"max", "-1s"}, {"retries", "many"},
		{"jitter", "proportional:2"}, {"deadline", "soon"}, {"timeout", "x"},
	} {
		r := Compute(map[string]string{tc.field: tc.value}, Russian)
		if len(r.Errors) != 1 {
			t.Fatalf("%s=%q: errors %v, want one", tc.field, tc.value, r.Errors)
		}
		e := r.Errors[0]
		if e.Field != tc.field || !strings.HasPrefix(e.Text, "Нужн") || !strings.Contains(e.Text, tc.value) || strings.Contains(e.Text, "must") {
			t.Errorf("%s=%q: error %+v, want a Russian message for the field quoting the value", tc.field, tc.value, e)
		}
		if r.Announce != e.Text {
			t.Errorf("%s=%q: announces %q, want the error", tc.field, tc.value, r.Announce)
		}
	}
	in := map[string]string{"initial": "2s", "retries": "8", "deadline": "1s"}
	if got := Solve(in, "multiplier", Russian).Error; got != "Ни при каком значении множителя худшее общее ожидание не укладывается в 1 с." {
		t.Errorf("solving for the initial delay within 1 s in Russian: %q", got)
	}
	in["deadline"] = "60s"
	if got := Solve(in, "retries", Russian); got.Note != "Число повторов: 7." {
		t.Errorf("solving for retries in Russian: %+v", got)
	}
}

func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		in             map[string]string
		headline, more string
	}{
		// The worst case is 91.5 s, and the loop keeps 100 ms for the last
		// attempt.
		{map[string]string{"deadline": "100s"}, "Fits the 1 min 40 s deadline with 8.4 s to spare", ""},
		{map[string]string{"deadline": "91.6s"}, "Fits the 1 min 31.6 s deadline exactly", ""}, // as given, not rounded
		{map[string]string{"deadline": "91.5s"}, "Misses the 1 min 31.5 s deadline by 100 ms", "The 99th percentile, 1 min 15 s, fits."},
		{map[string]string{"deadline": "60s"}, "Misses the 1 min deadline by 31.6 s",
			"In the worst case only the first 7 of 8 retries start in time. The 99th percentile, 1 min 15 s, misses it too."},
		{map[string]string{"deadline": "100ms"}, "Misses the 100 ms deadline by 1 min 32 s",
			"In the worst case not even the first retry starts in time. The 99th percentile, 1 min 15 s, misses it too."},
	} {
		for k, v := range example {
			tc.in[k] = v
		}
		v := Compute(tc.in, English).Summary.Verdict
		if v.Headline != tc.headline || v.Detail != tc.more {
			t.Errorf("deadline %s: verdict %q / %q, want %q / %q", tc.in["deadline"], v.Headline, v.Detail, tc.headline, tc.more)
		}
	}
}

// TestTimeout: a per-attempt timeout adds each attempt's own time to the
// totals, the table, the chart and the verdict.
func TestTimeout(t *testing.T) {
	in := map[string]string{"timeout": "2s", "deadline": "2m"}
	for k, v := range example {
		in[k] = v
	}
	r := Compute(in, English)
	if len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	// 91.5 s of waits and 9 attempts of 2 s.
	if s := r.Summary; s.Worst != "1 min 50 s" || s.Attempts != "Including the attempts’ own time: 9 × 2 s." {
		t.Errorf("worst case with 2 s attempts = %q (%q), want 1 min 50 s over 9 attempts", s.Worst, s.Attempts)
	}
	if got := r.Rows[0].TotalMax; got != "2.5 s" {
		t.Errorf("retry 1 starts at the latest at %q, want 2.5 s (one 2 s attempt and 500 ms)", got)
	}
	if v := r.Summary.Verdict; !v.Fits || v.Headline != "Fits the 2 min deadline with 10.5 s to spare" {
		t.Errorf("verdict = %+v", v)
	}
	if a := r.Chart.Attempts; a[1].MaxMs != 2500 || a[8].MaxMs != 91500+8*2000 {
		t.Errorf("timeline = %+v, want attempt 2 at 2.5 s and attempt 9 at 107.5 s", a)
	}
	if strings.Contains(r.Command, "timeout") || !strings.Contains(r.Snippet, "context.WithTimeout(ctx, 2 * time.Second)") {
		t.Errorf("command %q and snippet:\n%s\nwant no --timeout (again calc has none) and the timeout in the Go code", r.Command, r.Snippet)
	}
	in["deadline"] = "1m"
	s := Solve(in, "retries", English)
	n := s.Value
	in["retries"] = n
	if v := Compute(in, English).Summary.Verdict; s.Error != "" || !v.Fits {
		t.Errorf("solved retries with 2 s attempts = %+v, whose verdict is %+v", s, v)
	}
	in["retries"] = n + "1"
	if v := Compute(in, English).Summary.Verdict; v.Fits {
		t.Errorf("%s retries still fit: the solver did not find the largest", in["retries"])
	}
}

func TestNoRetries(t *testing.T) {
	r := Compute(map[string]string{"retries": "0", "deadline": "1s"}, English)
	if r.Chart.Retries != 0 || len(r.Chart.Bars) != 0 || r.Summary.NoRetries == "" || r.Summary.Worst != "0 ms" || !r.Summary.Verdict.Fits {
		t.Errorf("no retries: chart %+v, summary %+v", r.Chart, r.Summary)
	}
}

// TestVerdictIsCalcs: without a per-attempt timeout, the page's verdict is
// the one `again calc` prints for the command the page shows, run
// in-process: whether the worst case and the 99th percentile fit, how many
// retries start in time, and the words that say how many.
func TestVerdictIsCalcs(t *testing.T) {
	for _, deadline := range []string{"100ms", "1s", "1.5s", "3.5s", "1m", "80s", "91.5s", "2m", "1.5ms", "1,5", "1m0.25s"} {
		in := map[string]string{"deadline": deadline}
		for k, v := range example {
			in[k] = v
		}
		r := Compute(in, English)
		v := r.Summary.Verdict
		words := strings.Fields(r.Command)
		var stdout, stderr bytes.Buffer
		if code := root.Run(t.Context(), append(words[1:], "--format", "json"), strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("%s: exit status %d: %s", r.Command, code, stderr.String())
		}
		var rep struct {
			Deadline *struct {
				WorstCaseFits bool `json:"worst_case_fits"`
				P99Fits       bool `json:"p99_fits"`
				RetriesWithin int  `json:"retries_within_deadline"`
			} `json:"deadline"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.Deadline == nil {
			t.Fatalf("%s: %v, no deadline in\n%.200s", r.Command, err, stdout.String())
		}
		d := rep.Deadline
		if v.Fits != d.WorstCaseFits || v.P99Fits != d.P99Fits || v.RetriesWithin != d.RetriesWithin {
			t.Errorf("%s: the page's verdict %+v, again calc's %+v", r.Command, *v, *d)
		}
		stdout.Reset()
		if code := root.Run(t.Context(), words[1:], strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("%s: exit status %d: %s", r.Command, code, stderr.String())
		}
		retries, _, _ := strings.Cut(v.Detail, ". ")
		if v.RetriesWithin < r.Retries && !strings.Contains(stdout.String(), " "+retries+". ") {
			t.Errorf("%s: the page says %q, again calc does not:\n%s", r.Command, retries+".", stdout.String())
		}
		// Both echo the deadline as given, unrounded.
		if !strings.Contains(stdout.String(), "\nDeadline "+v.Deadline+": ") || !strings.Contains(v.Headline, " "+v.Deadline+" deadline") {
			t.Errorf("%s: the page's verdict %q names the deadline %q; again calc says\n%s", r.Command, v.Headline, v.Deadline, stdout.String())
		}
	}
}

// TestStormIsSim: the storm view's numbers are `again sim storm`'s for the
// command the page shows, run in-process.
func TestStormIsSim(t *testing.T) {
	for _, in := range []map[string]string{
		example,
		{"initial": "1s", "max": "30s", "retries": "6", "jitter": "none", "clients": "50"},
		{"initial": "100ms", "multiplier": "1.5", "max": "1m", "retries": "12", "jitter": "decorrelated", "seed": "7", "clients": "1000"},
		{"initial": "250ms", "retries": "5", "jitter": "proportional:0.2", "timeout": "1s", "deadline": "1m"},
	} {
		r := Storm(in, English)
		if r.Error != "" {
			t.Fatalf("Storm(%v): %s", in, r.Error)
		}
		rows := simStorm(t, r.Command)
		if len(rows) != len(r.Attempts) {
			t.Fatalf("%s: %d buckets, the page has %d", r.Command, len(rows), len(r.Attempts))
		}
		total := 0
		for i, row := range rows {
			if row.Attempts != r.Attempts[i] || row.NoJitter != r.NoJitter[i] || row.StartMS != float64(i)*r.BucketMs {
				t.Errorf("%s: bucket %d is %+v, the page has %d and %d", r.Command, i, row, r.Attempts[i], r.NoJitter[i])
			}
			total += r.Attempts[i]
		}
		if want := r.Clients * (Compute(in, English).Retries + 1); total != want {
			t.Errorf("%s: %d attempts in all, want %d", r.Command, total, want)
		}
		if n := len(r.Attempts); n > 4*maxStormBuckets || r.Shown > n || r.Counts[0] != 0 || r.Counts[len(r.Counts)-1] < slices.Max(r.NoJitter) {
			t.Errorf("%s: %d buckets, counts %v", r.Command, n, r.Counts)
		}
	}
	// Decorrelated jitter ends long before the same schedule without it:
	// the view shows the short storm and says where the long one ends.
	d := Storm(map[string]string{"initial": "100ms", "multiplier": "1.5", "max": "1m", "retries": "40", "jitter": "decorrelated"}, English)
	if d.Error != "" || d.Shown*4 > len(d.Attempts) || !strings.Contains(d.Text, "the attempts without jitter go on until") {
		t.Errorf("decorrelated storm: %d of %d buckets shown, text %q", d.Shown, len(d.Attempts), d.Text)
	}
	if r := Storm(map[string]string{"clients": "0"}, Russian); !strings.HasPrefix(r.Error, "Нужно целое число от 1 до") {
		t.Errorf("0 clients in Russian: %q", r.Error)
	}
	if r := Storm(map[string]string{"retries": "100000", "clients": "100"}, English); !strings.Contains(r.Error, "again sim storm") {
		t.Errorf("10 million attempts: %q, want a note pointing to again sim storm", r.Error)
	}
	r := Storm(example, Russian)
	if !strings.HasPrefix(r.Text, "100 клиентов получают ошибку одновременно. Без джиттера повторы идут синхронными волнами (8) по 100 попыток в один момент; с полным джиттером за 500 мс от сбоя — ") {
		t.Errorf("the storm in Russian: %q", r.Text)
	}
}

// stormRow is one line of `again sim storm --format json`.
type stormRow struct {
	StartMS  float64 `json:"start_ms"`
	Attempts int     `json:"attempts"`
	NoJitter int     `json:"no_jitter"`
}

// simStorm runs the storm view's command in-process and returns its rows.
func simStorm(t *testing.T, command string) []stormRow {
	t.Helper()
	words := strings.Fields(command)
	var stdout, stderr bytes.Buffer
	if code := root.Run(t.Context(), append(words[1:], "--format", "json"), strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("%s: exit status %d: %s", command, code, stderr.String())
	}
	var rows []stormRow
	if err := json.Unmarshal(stdout.Bytes(), &rows); err != nil {
		t.Fatalf("%s: %v\n%.200s", command, err, stdout.String())
	}
	return rows
}

// TestStormSaysWhatTheChartShows: the storm view's sentence states numbers
// that its chart draws and the command under it prints, in the chart's own
// buckets ("Attempts per 500 ms"). In the worked example the first bucket
// holds the 100 first attempts and, with full jitter, the first retries,
// all drawn within the first 500 ms: the sentence says so, and gives the
// busiest bucket after it.
func TestStormSaysWhatTheChartShows(t *testing.T) {
	r := Storm(example, English)
	if r.Error != "" {
		t.Fatal(r.Error)
	}
	if r.BucketMs != 500 || r.YTitle != "Attempts per 500 ms" || r.NoJitter[0] != r.Clients || slices.Max(r.NoJitter[1:]) != r.Clients {
		t.Fatalf("%v ms buckets titled %q, without jitter %v", r.BucketMs, r.YTitle, r.NoJitter)
	}
	rows := simStorm(t, r.Command)
	first, later := rows[0].Attempts, 0
	for _, row := range rows[1:] {
		later = max(later, row.Attempts)
	}
	if first <= r.Clients || later == 0 || later >= r.Clients {
		t.Fatalf("%s prints %d attempts in the first bucket and at most %d later; want more than the %d first attempts, then fewer than a wave", r.Command, first, later, r.Clients)
	}
	want := fmt.Sprintf("100 clients fail at once. Without jitter their retries come in 8 synchronised waves of 100 attempts at one instant; "+
		"with full jitter %d attempts start in the first 500 ms (100 first attempts and %d retries), and no 500 ms after it holds more than %d.", first, first-100, later)
	if r.Text != want {
		t.Errorf("the storm says %q, want %q", r.Text, want)
	}
	for _, tc := range []struct {
		in   map[string]string
		l    Lang
		want string
	}{
		// Without jitter there is nothing to compare.
		{map[string]string{"initial": "1s", "max": "30s", "retries": "6", "jitter": "none", "clients": "1"}, English,
			"1 client fails at once. Without jitter their retries come in 6 synchronised waves of 1 attempt."},
		// No wait at all: every wave in the first bucket, with jitter or without.
		{map[string]string{"initial": "0", "retries": "3", "jitter": "full"}, English,
			"100 clients fail at once. Without jitter their retries come in 3 synchronised waves of 100 attempts at one instant, up to 400 attempts in one 1 ms; " +
				"with full jitter 400 attempts start in the first 1 ms (100 first attempts and 300 retries)."},
		{map[string]string{"retries": "0", "clients": "21"}, Russian, "21 клиент получает ошибку одновременно. Повторов нет."},
	} {
		if got := Storm(tc.in, tc.l).Text; got != tc.want {
			t.Errorf("Storm(%v): %q, want %q", tc.in, got, tc.want)
		}
	}
	// Equal jitter draws no retry within the first bucket: the sentence
	// gives the busiest bucket after it, which the command prints.
	for _, l := range []Lang{English, Russian} {
		in := map[string]string{"retries": "5", "jitter": "equal"}
		r := Storm(in, l)
		rows := simStorm(t, r.Command)
		later := 0
		for _, row := range rows[1:] {
			later = max(later, row.Attempts)
		}
		want := map[Lang]string{
			English: fmt.Sprintf("; with equal jitter no 100 ms after the first holds more than %d attempts.", later),
			Russian: fmt.Sprintf("; с равным джиттером после 100 мс от сбоя — не больше %d попыток за 100 мс.", later),
		}[l]
		if rows[0].Attempts != r.Clients || !strings.HasSuffix(r.Text, want) {
			t.Errorf("%s prints %d attempts first; the storm says %q, want it to end %q", r.Command, rows[0].Attempts, r.Text, want)
		}
	}
}

// TestRussianNumbersUseComma: the Russian page writes every decimal it
// computes with a comma: durations, a proportional jitter's factor, a
// solved multiplier. The catalogue's default factor, which the page shows
// in the factor's empty field, is backoff's.
func TestRussianNumbersUseComma(t *testing.T) {
	in := map[string]string{"initial": "250ms", "multiplier": "1.5", "retries": "5", "jitter": "proportional:0.2", "deadline": "2.5s"}
	r, s, sv := Compute(in, Russian), Storm(in, Russian), Solve(in, "multiplier", Russian)
	if len(r.Errors) > 0 || s.Error != "" || sv.Error != "" {
		t.Fatalf("%v: %v, %q, %q", in, r.Errors, s.Error, sv.Error)
	}
	texts := []string{r.Summary.Worst, r.Summary.Mean, r.Summary.P99, r.Summary.Verdict.Headline, r.Summary.Verdict.Detail, r.Chart.Text, s.Text, s.Legend[1], sv.Value, sv.Note}
	for _, text := range texts {
		if m := regexp.MustCompile(`\d\.\d`).FindString(text); m != "" {
			t.Errorf("the Russian page writes %q in %q", m, text)
		}
	}
	if !strings.Contains(s.Legend[1], "±0,2") || !strings.Contains(sv.Value, ",") {
		t.Errorf("legend %q, solved multiplier %q: want the factor and the multiplier with a decimal comma", s.Legend[1], sv.Value)
	}
	// The solved text typed back in gives the same multiplier.
	in["multiplier"] = sv.Value
	if c := Compute(in, Russian); len(c.Errors) > 0 || !c.Summary.Verdict.Fits || !strings.Contains(c.Command, "--multiplier "+strings.Replace(sv.Value, ",", ".", 1)) {
		t.Errorf("the solved multiplier %q typed back: %v, %q", sv.Value, c.Errors, c.Command)
	}
	def := strconv.FormatFloat(backoff.Policy{Jitter: backoff.ProportionalJitter}.EffectiveJitterFactor(), 'g', -1, 64)
	if en, ru := catalog.Text("en", "js.factorDefault"), catalog.Text("ru", "js.factorDefault"); en != def || ru != strings.Replace(def, ".", ",", 1) {
		t.Errorf("the catalogue's default jitter factor is %q and %q, backoff's %s", en, ru, def)
	}
}

// TestQuotingIsOneRule: every field error shows the typed value by one
// rule in both languages, again calc's: a number as it is, anything else
// in the language's quotation marks, a long value cut.
func TestQuotingIsOneRule(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, tc := range []struct {
		field, value string
		en, ru       string
	}{
		{"multiplier", "1e309", ", got 1e309.", "; введено 1e309."},
		{"retries", "-1", ", got -1.", "; введено -1."},
		{"initial", "fast", ", got “fast”.", "; введено «fast»."},
		{"jitter", "proportional:2", ", got “proportional:2”.", "; введено «proportional:2»."},
		{"timeout", "1e400ms", ", got “1e400ms”.", "; введено «1e400ms»."},
		{"deadline", long, ", got “" + long[:48] + "”… (100 bytes).", "; введено «" + long[:48] + "»… (100 байт)."},
		{"clients", "many", ", got “many”.", "; введено «many»."},
	} {
		for l, want := range map[Lang]string{English: tc.en, Russian: tc.ru} {
			var got string
			if tc.field == FieldClients {
				got = Storm(map[string]string{tc.field: tc.value}, l).Error
			} else if errs := Compute(map[string]string{tc.field: tc.value}, l).Errors; len(errs) == 1 {
				got = errs[0].Text
			}
			if !strings.HasSuffix(got, want) || strings.Contains(got, `"`) {
				t.Errorf("%s %s=%.20q: %q, want it to end %q", l, tc.field, tc.value, got, want)
			}
		}
	}
}

// TestEveryKeyIsRussian: every message internal/calc can give about an
// input has a Russian form, with the same placeholders as its arguments.
func TestEveryKeyIsRussian(t *testing.T) {
	for _, k := range []calc.Key{calc.KeyDuration, calc.KeyDurationNoCap, calc.KeyNumberAtLeast,
		calc.KeyWholeNumber, calc.KeyJitter, calc.KeyOneOf, calc.KeyUnknownField, calc.KeyRequiresDeadline, calc.KeyInvalidPolicy} {
		if _, ok := catalog.Lookup("ru", "calc."+string(k)); !ok {
			t.Errorf("calc key %q has no Russian message", k)
		}
	}
	for _, in := range []map[string]string{{"target": "p100"}, {"seed": "-1"}, {"max": "x"}, {"deadline": "-1s"}, {"solve": "retries"}} {
		for _, e := range Compute(in, Russian).Errors {
			if strings.ContainsAny(e.Text, "{}") || strings.Contains(e.Text, "must") {
				t.Errorf("%v: %q, want a Russian message with its arguments filled in", in, e.Text)
			}
		}
	}
}
