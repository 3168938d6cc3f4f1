package web_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserClasses checks the per-class section: a link with per-class
// inputs opens it and shows each class's schedule, computed by the Go
// code as again calc computes it; an edit keeps the URL in step and the
// command line with it; a wrong value is marked under its own field; and
// the section fits a phone's width and a desktop's.
func TestBrowserClasses(t *testing.T) {
	bctx, origin := startBrowser(t)
	const query = "?retries=4&jitter=none&on-overload.initial=1s&on-overload.max=30s&on-overload.retries=6&on-overload.jitter=none" +
		"&on-transient.initial=50ms&on-transient.retries=2&on-transient.jitter=none"
	tb := newTab(t, bctx, origin)
	tb.open(query)
	if !eval[bool](tb, `document.getElementById('classes').open`) {
		t.Errorf("the per-class section is closed, though the link gives per-class inputs")
	}
	titles := eval[[]string](tb, `[...document.querySelectorAll('#class-list h4')].map(e => e.textContent)`)
	totals := eval[[]string](tb, `[...document.querySelectorAll('#class-list .class-totals')].map(e => e.textContent)`)
	if len(titles) != 2 || len(totals) != 2 {
		t.Fatalf("classes shown: %q, %q; want overloads and network errors", titles, totals)
	}
	// Overloads: 1, 2, 4, 8 s, the call's 4 retries stopping the class's 6.
	for i, want := range []string{"4 retries if every attempt fails this way: shortest 15 s, mean 15 s, worst case 15 s. The call’s 4 retries stop this class before its own 6.",
		"2 retries if every attempt fails this way: shortest 150 ms, mean 150 ms, worst case 150 ms."} {
		if totals[i] != want {
			t.Errorf("class %q: %q, want %q", titles[i], totals[i], want)
		}
	}
	if rows := eval[int](tb, `document.querySelectorAll('#class-list tbody tr').length`); rows != 6 {
		t.Errorf("the classes' tables have %d rows, want 4 + 2", rows)
	}
	cmd := tb.text("#command")
	if want := "--on-overload initial=1s,max=30s,retries=6,jitter=none --on-transient initial=50ms,retries=2,jitter=none"; !strings.Contains(cmd, want) {
		t.Errorf("command %q lacks %q", cmd, want)
	}
	for _, w := range []int64{375, 1280} {
		tb.do(chromedp.EmulateViewport(w, 900))
		if over := eval[bool](tb, `document.documentElement.scrollWidth > window.innerWidth`); over {
			t.Errorf("at %d px the page scrolls sideways", w)
		}
		tb.screenshot(strconv.FormatInt(w, 10) + "px")
	}

	// In Russian, whose words are longer, the section still fits a phone.
	tb.do(chromedp.EmulateViewport(375, 900))
	tb.click("#lang-ru")
	tb.idle()
	if got := eval[string](tb, `document.querySelector('#class-list h4').textContent`); !strings.HasPrefix(got, "Перегрузка") {
		t.Errorf("in Russian the overloads' title is %q", got)
	}
	if over := eval[bool](tb, `document.documentElement.scrollWidth > window.innerWidth`); over {
		t.Errorf("in Russian at 375 px the page scrolls sideways")
	}
	tb.screenshot("375px-ru")
	tb.click("#lang-en")
	tb.idle()

	set := func(id, value string) {
		t.Helper()
		tb.do(chromedp.Evaluate[chromedp.Void](`(e => { e.value = ` + jsString(value) + `; e.dispatchEvent(new Event('input', {bubbles: true})); })(document.getElementById(` + jsString(id) + `))`))
		tb.idle()
	}
	set("on-overload.retries", "2")
	if q := tb.query(); q.Get("on-overload.retries") != "2" {
		t.Errorf("URL query on-overload.retries = %q after typing 2", q.Get("on-overload.retries"))
	}
	if got := eval[string](tb, `document.querySelector('#class-list .class-totals').textContent`); !strings.HasPrefix(got, "2 retries") || strings.Contains(got, "stop this class") {
		t.Errorf("overloads after retries=2: %q, want 2 retries within the call's 4", got)
	}
	// The aws preset is a policy with AWS's two classes: it fills both
	// classes' inputs (retry.AWSClasses'), and another preset clears them.
	tb.choosePreset("aws")
	for f, want := range map[string]string{"on-overload.initial": "1s", "on-transient.initial": "50ms", "on-overload.max": "20s", "on-transient.retries": "3"} {
		if got := eval[string](tb, `document.getElementById(`+jsString(f)+`).value`); got != want {
			t.Errorf("after the aws preset %s = %q, want %q", f, got, want)
		}
	}
	if got := eval[[]string](tb, `[...document.querySelectorAll('#class-list h4')].map(e => e.textContent)`); len(got) != 2 {
		t.Errorf("after the aws preset the classes shown are %q, want two", got)
	}
	if got := eval[string](tb, `document.getElementById('preset').value`); got != "aws" {
		t.Errorf("after the aws preset the menu shows %q", got)
	}
	set("on-overload.initial", "2s")
	if got := eval[string](tb, `document.getElementById('preset').value`); got != "" {
		t.Errorf("after editing a class the menu shows preset %q, want custom", got)
	}
	tb.choosePreset("again")
	if got := eval[string](tb, `document.getElementById('on-overload.initial').value + document.getElementById('on-transient.initial').value`); got != "" || !eval[bool](tb, `document.getElementById('classes-out').hidden`) {
		t.Errorf("after the again preset the classes' inputs hold %q, want none shown", got)
	}
	set("on-transient.multiplier", "0.5")
	if msg := tb.text("#on-transient\\.multiplier-err"); !strings.Contains(msg, "1") {
		t.Errorf("a multiplier of 0.5 for network errors: message %q under its field", msg)
	}
	if inv := eval[string](tb, `document.getElementById('on-transient.multiplier').getAttribute('aria-invalid')`); inv != "true" {
		t.Errorf("the wrong field is not marked invalid (aria-invalid %q)", inv)
	}
}
