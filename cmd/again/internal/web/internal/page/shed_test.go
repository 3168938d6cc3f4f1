package page

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/again-go/again/cmd/again/internal/cmd/root"
	"github.com/again-go/again/cmd/again/internal/sim/outage"
)

// simOutage runs command (an `again sim outage` command line) in-process
// with extra arguments and decodes its JSON rows into rows; it returns
// what the command wrote on its standard error.
func simOutage(t *testing.T, command string, rows any, extra ...string) string {
	t.Helper()
	words := append(strings.Fields(command)[1:], extra...)
	words = append(words, "--format", "json")
	var stdout, stderr bytes.Buffer
	if code := root.Run(t.Context(), words, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("%v: exit status %d: %s", words, code, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), rows); err != nil {
		t.Fatalf("%v: %v\n%.200s", words, err, stdout.String())
	}
	return stderr.String()
}

// limitWord is the --shed value of the view r.
func limitWord(r ShedResult) string {
	if r.Adaptive {
		return "adaptive"
	}
	return strconv.Itoa(r.Limit)
}

// TestShedIsSim: the shedding view draws, second by second, what `again
// sim outage` prints for its command (the server that sheds) and for the
// same command with --shed 0 (the server that does not), and its sentence
// states their summaries, for the page's own policy inputs.
func TestShedIsSim(t *testing.T) {
	for _, in := range []map[string]string{
		example,
		{"initial": "1s", "max": "30s", "retries": "6", "jitter": "none", "shed": "150"},
		{"initial": "100ms", "multiplier": "1.5", "max": "1m", "jitter": "decorrelated", "seed": "7", "shed": "60"},
		{"initial": "250ms", "retries": "5", "jitter": "proportional:0.2", "timeout": "1s", "deadline": "1m", "clients": "10"},
		{"initial": "500ms", "max": "30s", "jitter": "full", "shed": "adaptive"},
		{"initial": "1s", "multiplier": "3", "jitter": "equal", "seed": "3", "shed": " adaptive "},
		{"initial": "500ms", "jitter": "full", "shed": "30"}, // too few for the demand: a misfit
	} {
		r := Shed(in, English)
		if r.Error != "" {
			t.Fatalf("Shed(%v): %s", in, r.Error)
		}
		if want := " --strategy backoff --shed " + limitWord(r); !strings.HasSuffix(r.Command, want) {
			t.Errorf("Shed(%v).Command = %q, want it to end in %q", in, r.Command, want)
		}
		if r.Adaptive != (strings.TrimSpace(in["shed"]) == "adaptive") {
			t.Errorf("Shed(%v): Adaptive %v", in, r.Adaptive)
		}
		for _, run := range []struct {
			extra []string
			want  []int
		}{{nil, r.Shed}, {[]string{"--shed", "0"}, r.Bare}} {
			var secs []outage.Second
			simOutage(t, r.Command, &secs, append(run.extra, "--per-second")...)
			if len(secs) != len(run.want) {
				t.Fatalf("%s %v: %d seconds, the page has %d", r.Command, run.extra, len(secs), len(run.want))
			}
			for i, s := range secs {
				if s.Successes != run.want[i] || s.NewRequests != r.Demand[i] || (run.extra == nil && s.Shed != r.Shedded[i]) {
					t.Errorf("%s %v: second %d is %+v, the page has %d successes of %d new requests, %d shed",
						r.Command, run.extra, i, s, run.want[i], r.Demand[i], r.Shedded[i])
				}
			}
			var sum []outage.Summary
			simOutage(t, r.Command, &sum, run.extra...)
			if want := percent(sum[0].SuccessRatio, English); !strings.Contains(r.Text, " answers "+want) {
				t.Errorf("%s %v: success ratio %v, the page says %q", r.Command, run.extra, sum[0].SuccessRatio, r.Text)
			}
			if run.extra == nil && !strings.Contains(r.Text, fmt.Sprintf("shedding %d attempt", sum[0].Shed)) {
				t.Errorf("%s: %d shed, the page says %q", r.Command, sum[0].Shed, r.Text)
			}
		}
		top := r.Counts[len(r.Counts)-1]
		if r.Counts[0] != 0 || top < slices.Max(r.Demand) || top < slices.Max(r.Bare) || top < slices.Max(r.Shed) {
			t.Errorf("%s: counts %v below the series' peaks", r.Command, r.Counts)
		}
		if end := r.Time.Ticks[len(r.Time.Ticks)-1].Ms; end < float64(len(r.Demand))*1000 {
			t.Errorf("%s: the time axis ends at %v ms, before the %d seconds", r.Command, end, len(r.Demand))
		}
	}
}

// TestShedSaysWhatTheChartShows: the sentence names the limit and how each
// server came out of the spike, in both languages; the legend names the
// limit.
func TestShedSaysWhatTheChartShows(t *testing.T) {
	en, ru := Shed(example, English), Shed(example, Russian)
	if en.Limit != DefaultShed || ru.Limit != DefaultShed {
		t.Fatalf("limit %d and %d, want the default %d", en.Limit, ru.Limit, DefaultShed)
	}
	for _, tc := range []struct {
		r    ShedResult
		want []string
	}{
		{en, []string{"40 new requests a second, 80 during a spike from 20 s to 40 s", "waits 3 s", "at most 3 attempts", "A server that queues everything answers", "One that serves at most 100 at once"}},
		{ru, []string{"40 новых запросов в секунду, 80 во время всплеска с 20 с до 40 с", "ждёт ответа 3 с", "не больше 3 попыток", "не больше 100,"}},
	} {
		for _, w := range tc.want {
			if !strings.Contains(tc.r.Text, w) {
				t.Errorf("the view says %q, want %q in it", tc.r.Text, w)
			}
		}
		if !strings.Contains(tc.r.Legend[2], "100") {
			t.Errorf("legend %q does not name the limit", tc.r.Legend)
		}
	}
	if en.Command != "again sim outage --initial 500ms --multiplier 2 --max 30s --jitter full --strategy backoff --shed 100" || ru.Command != en.Command {
		t.Errorf("commands %q and %q", en.Command, ru.Command)
	}
	// An adaptive limit: the same token in both languages, named as
	// adaptive in the sentence and the legend, with no number.
	in := maps.Clone(example)
	in["shed"] = "adaptive"
	en, ru = Shed(in, English), Shed(in, Russian)
	for _, tc := range []struct {
		r    ShedResult
		want []string
	}{
		{en, []string{"One that learns its limit from its latency (Gradient2)", "answers "}},
		{ru, []string{"Сервер, который подбирает лимит по своей задержке (Gradient2)", "отвечает на "}},
	} {
		if tc.r.Error != "" || !tc.r.Adaptive || tc.r.Limit != 0 {
			t.Fatalf("shed adaptive: %+v", tc.r)
		}
		for _, w := range tc.want {
			if !strings.Contains(tc.r.Text, w) {
				t.Errorf("with an adaptive limit the view says %q, want %q in it", tc.r.Text, w)
			}
		}
		if strings.Contains(tc.r.Text, "100") || !strings.Contains(tc.r.Legend[2], "adaptive") && !strings.Contains(tc.r.Legend[2], "адаптивного") {
			t.Errorf("with an adaptive limit: legend %q, text %q; want the limit named adaptive, with no number", tc.r.Legend, tc.r.Text)
		}
		if tc.r.Note != "" {
			t.Errorf("with an adaptive limit: note %q, want none (the command warns only for a fixed limit)", tc.r.Note)
		}
	}
	if want := "again sim outage --initial 500ms --multiplier 2 --max 30s --jitter full --strategy backoff --shed adaptive"; en.Command != want || ru.Command != want {
		t.Errorf("commands %q and %q, want %q", en.Command, ru.Command, want)
	}
}

// TestShedMisfitIsSim: the view notes that a fixed limit does not fit the
// server exactly when `again sim outage` warns so for its command, and
// names the same reason, the same rate and the same range of limits that
// fit, in both languages.
func TestShedMisfitIsSim(t *testing.T) {
	for _, tc := range []struct {
		shed   string
		misfit string // the reason both give, "" if the limit fits
	}{
		{"100", ""}, {"67", ""}, {"199", ""}, {"adaptive", ""},
		{"30", "fewer than"}, {"66", "fewer than"}, {"1", "fewer than"},
		{"200", "timeout"}, {"250", "timeout"}, {"100000", "timeout"},
	} {
		in := maps.Clone(example)
		in["shed"] = tc.shed
		en, ru := Shed(in, English), Shed(in, Russian)
		if en.Error != "" {
			t.Fatalf("shed %s: %s", tc.shed, en.Error)
		}
		var sum []outage.Summary
		stderr := simOutage(t, en.Command, &sum)
		if tc.misfit == "" {
			if en.Note != "" || ru.Note != "" || stderr != "" {
				t.Errorf("shed %s fits: the page notes %q (%q), the command warns %q; want neither", tc.shed, en.Note, ru.Note, stderr)
			}
			continue
		}
		if !strings.Contains(stderr, tc.misfit) || !strings.Contains(en.Note, tc.misfit) {
			t.Errorf("shed %s: the command warns %q, the page notes %q; want both to say %q", tc.shed, stderr, en.Note, tc.misfit)
		}
		// The range that fits, and the rate the limit serves.
		fits := regexp.MustCompile(`a limit from (\d+) to (\d+) fits`).FindStringSubmatch(stderr)
		if fits == nil {
			t.Fatalf("shed %s: the command warns %q, with no range of limits that fit", tc.shed, stderr)
		}
		if want := fmt.Sprintf("Limits from %s to %s fit", fits[1], fits[2]); !strings.Contains(en.Note, want) {
			t.Errorf("shed %s: the page notes %q, want %q in it", tc.shed, en.Note, want)
		}
		if want := fmt.Sprintf("от %s до %s", fits[1], fits[2]); !strings.Contains(ru.Note, want) {
			t.Errorf("shed %s: the Russian page notes %q, want %q in it", tc.shed, ru.Note, want)
		}
		if rate := regexp.MustCompile(`serves at most (\d+\.\d) requests a second`).FindStringSubmatch(stderr); rate != nil {
			if !strings.Contains(en.Note, "at most "+rate[1]+" requests a second") || !strings.Contains(ru.Note, strings.Replace(rate[1], ".", ",", 1)) {
				t.Errorf("shed %s: the command warns %q, the page notes %q and %q; want the rate %s in both", tc.shed, stderr, en.Note, ru.Note, rate[1])
			}
		} else if tc.misfit == "fewer than" {
			t.Errorf("shed %s: the command warns %q, with no rate", tc.shed, stderr)
		}
	}
}

// TestShedLimitErrors: a limit that is not a whole number from 1 to the
// simulator's bound is refused with a message naming what was typed, and
// the view shows nothing else.
func TestShedLimitErrors(t *testing.T) {
	for _, tc := range []struct {
		v    string
		l    Lang
		want string
	}{
		{"0", English, "Must be a whole number from 1 to 100000 or adaptive, got 0."},
		{"1.5", English, "Must be a whole number from 1 to 100000 or adaptive, got 1.5."},
		{"many", English, "Must be a whole number from 1 to 100000 or adaptive, got “many”."},
		{"Adaptive", English, "Must be a whole number from 1 to 100000 or adaptive, got “Adaptive”."}, // as --shed
		{"100001", Russian, "Нужно целое число от 1 до 100000 или adaptive; введено 100001."},
		{"адаптивно", Russian, "Нужно целое число от 1 до 100000 или adaptive; введено «адаптивно»."},
	} {
		r := Shed(map[string]string{"shed": tc.v}, tc.l)
		if r.Error != tc.want || r.Text != "" || r.Command != "" || r.Demand != nil {
			t.Errorf("shed %q in %s: %+v, want only the error %q", tc.v, tc.l, r, tc.want)
		}
	}
	// An invalid policy is the calculator's error, as for the storm view.
	if r := Shed(map[string]string{"multiplier": "0.5"}, English); r.Error == "" || r.Text != "" {
		t.Errorf("multiplier 0.5: %+v, want an error", r)
	}
}

// BenchmarkShed measures the shedding view's run, which the page makes in
// WebAssembly when typing pauses (about 10 times this), with the default
// fixed limit and an adaptive one (whose limiter runs on every request).
func BenchmarkShed(b *testing.B) {
	for _, shed := range []string{"100", "adaptive"} {
		in := maps.Clone(example)
		in["shed"] = shed
		b.Run("shed="+shed, func(b *testing.B) {
			for b.Loop() {
				Shed(in, English)
			}
		})
	}
}
