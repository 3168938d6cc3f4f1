package catalog

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestCatalogues checks that every key is in both languages (calc.* in
// Russian only: calc writes its English), and that both languages' strings
// of a key take the same arguments: the same {name} placeholders, fmt
// verbs that accept the same arguments, and the plural forms a language
// has.
func TestCatalogues(t *testing.T) {
	en, ru := Keys("en"), Keys("ru")
	for _, k := range en {
		if _, ok := Lookup("ru", k); !ok {
			t.Errorf("%q is in the English catalogue, not in the Russian one", k)
		}
	}
	for _, k := range ru {
		if _, ok := Lookup("en", k); !ok && !strings.HasPrefix(k, "calc.") {
			t.Errorf("%q is in the Russian catalogue, not in the English one", k)
		}
	}
	placeholder := regexp.MustCompile(`\{[a-z]+\}`)
	verb := regexp.MustCompile(`%(?:\[(\d)\])?([a-z])`)
	for _, k := range en {
		e, r := Text("en", k), Text("ru", k)
		if e == "" || r == "" {
			t.Errorf("%q is empty in a language: %q, %q", k, e, r)
		}
		switch {
		case strings.HasSuffix(k, ".plural"):
			if n, m := strings.Count(e, "|"), strings.Count(r, "|"); n != 1 || m != 2 {
				t.Errorf("%q has %d English and %d Russian forms, want 2 and 3", k, n+1, m+1)
			}
		case strings.HasPrefix(k, "go."):
			// Format both with arguments of the English verbs' types:
			// the Russian must take them without a complaint from fmt.
			var args []any
			for i, m := range verb.FindAllStringSubmatch(e, -1) {
				if m[1] != "" && m[1] != fmt.Sprint(i+1) {
					continue // an argument used again
				}
				if m[2] == "d" {
					args = append(args, 7)
				} else {
					args = append(args, "x")
				}
			}
			for _, s := range []string{e, r} {
				if out := fmt.Sprintf(s, args...); strings.Contains(out, "%!") {
					t.Errorf("%q: %q with the English arguments gives %q", k, s, out)
				}
			}
		default:
			pe, pr := placeholder.FindAllString(e, -1), placeholder.FindAllString(r, -1)
			slices.Sort(pe)
			slices.Sort(pr)
			if !slices.Equal(slices.Compact(pe), slices.Compact(pr)) {
				t.Errorf("%q: placeholders %v in English, %v in Russian", k, pe, pr)
			}
		}
	}
}

// TestNoInternalWords: the page speaks to its users, not to the project:
// none of the words the project uses among itself (its seed documents, its
// issues, its briefs) appear in either language. The Monte Carlo seed, a
// flag of again calc, is the one seed users meet.
func TestNoInternalWords(t *testing.T) {
	internal := regexp.MustCompile(`(?i)\bseeds?\b|seeds’|\bissues?\b|\bbrief\b|\blead\b|\bhelper\b|исходн[а-я]* текст|зерн[а-я]*|задач[а-я]* проекта`)
	montecarlo := []string{"go.estimate.mean", "go.estimate.percentiles"}
	for _, lang := range Languages() {
		for _, k := range Keys(lang) {
			if s := Text(lang, k); internal.MatchString(s) && !slices.Contains(montecarlo, k) {
				t.Errorf("%s %q says %q: %q", lang, k, internal.FindString(s), s)
			}
		}
	}
	if s := Text("en", "preset.example.short"); s != "The worked example explained below the calculator." {
		t.Errorf("the worked example's preset note is %q", s)
	}
}

// TestRussianDecimalComma: Russian writes a decimal with a comma ("0,25",
// "45,8 с"). A point is left only in code a reader copies as it is: Go
// durations ("1.5s", in <code> or in the syntax an error message names)
// and other programs' settings (gRPC's initialBackoff 0.1s, urllib3's
// backoff_factor=0.5).
func TestRussianDecimalComma(t *testing.T) {
	code := regexp.MustCompile(`<code[^>]*>[^<]*</code>`)
	verbatim := regexp.MustCompile(`\d+\.\d+[a-zµ]+\b|=\d+\.\d+`)
	point := regexp.MustCompile(`\d\.\d`)
	for _, k := range Keys("ru") {
		s := verbatim.ReplaceAllString(code.ReplaceAllString(Text("ru", k), ""), "")
		if m := point.FindString(s); m != "" {
			t.Errorf("ru %q writes %q with a decimal point: %q", k, m, Text("ru", k))
		}
	}
	if got := Text("ru", "js.factorDefault"); got != "0,25" {
		t.Errorf("the Russian default jitter factor is %q, want 0,25", got)
	}
}

// TestPresetNotesEndInFullStop: the page puts a preset's date inside its
// short note, before the full stop (js.asOf), which every note ends with.
func TestPresetNotesEndInFullStop(t *testing.T) {
	for _, lang := range Languages() {
		for _, k := range Keys(lang) {
			if strings.HasPrefix(k, "preset.") && strings.HasSuffix(k, ".short") && !strings.HasSuffix(Text(lang, k), ".") {
				t.Errorf("%s %q = %q, want a sentence ending in a full stop", lang, k, Text(lang, k))
			}
		}
		if s := Text(lang, "js.asOf"); !strings.HasPrefix(s, "{text} ") || !strings.HasSuffix(s, ").") {
			t.Errorf("%s js.asOf = %q, want the note, then the date in brackets and the full stop", lang, s)
		}
	}
}

func TestText(t *testing.T) {
	if got := Text("ru", "go.noRetries"); got != "Повторов нет: первая попытка — единственная." {
		t.Errorf(`Text("ru", "go.noRetries") = %q`, got)
	}
	if got := Text("fr", "go.noRetries"); got != "No retries: the first attempt is the only one." {
		t.Errorf("an unknown language reads as English: got %q", got)
	}
	if got := Text("en", "no.such.key"); got != "no.such.key" {
		t.Errorf("a missing key = %q, want the key", got)
	}
	if _, ok := Lookup("en", "calc.duration"); ok {
		t.Error("calc.duration is in the English catalogue; calc writes its English")
	}
}
