package web_test

// Tests of the page in a real browser: Debian's Chromium driven through the
// DevTools protocol by chromedp. They never skip: CI installs chromium
// (see the test script), and a machine without it fails with a message
// saying how to install it. Set AGAIN_CHROMIUM to use another binary and
// AGAIN_SCREENSHOTS to a directory to keep the screenshots of TestLooks.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/again-go/again/web"
	"github.com/again-go/again/web/internal/page"
)

const exampleQuery = "?initial=500ms&multiplier=2&max=30s&retries=8&jitter=full"

// chromium returns the browser binary or fails the test saying how to get one.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("AGAIN_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("the browser tests need Chromium: run `apt-get install -y chromium` (the test script does this in CI) or set AGAIN_CHROMIUM to a Chrome binary")
	return ""
}

// startBrowser serves the page on a loopback port and starts a headless
// Chromium that cannot reach the network on its own.
func startBrowser(t *testing.T) (context.Context, string) {
	t.Helper()
	srv := httptest.NewServer(web.Handler())
	t.Cleanup(srv.Close)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("no-pings", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelBrowser(); cancelAlloc() })
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("starting %s: %v", chromium(t), err)
	}
	return bctx, srv.URL
}

// tab is one browser tab that records every request it makes.
type tab struct {
	t      *testing.T
	ctx    context.Context
	origin string

	mu       sync.Mutex
	requests []string
}

func newTab(t *testing.T, bctx context.Context, origin string) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(bctx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	tb := &tab{t: t, ctx: ctx, origin: origin}
	t.Cleanup(func() { cancelTimeout(); cancel() })
	t.Cleanup(func() {
		if t.Failed() {
			tb.screenshot("failure")
		}
	})
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			tb.mu.Lock()
			tb.requests = append(tb.requests, e.Request.URL)
			tb.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	return tb
}

// screenshot saves the whole page into a directory that outlives the test
// and logs its path.
func (tb *tab) screenshot(name string) {
	buf, err := chromedp.Run(tb.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.t.Logf("no screenshot: %v", err)
		return
	}
	dir := os.Getenv("AGAIN_SCREENSHOTS")
	if dir == "" {
		if dir, err = os.MkdirTemp("", "again-web-"); err != nil {
			tb.t.Logf("no screenshot: %v", err)
			return
		}
	}
	p := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(tb.t.Name())+"-"+name+".png")
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		tb.t.Logf("no screenshot: %v", err)
		return
	}
	tb.t.Logf("screenshot: %s", p)
}

// do runs the steps, failing the test if they take more than 30 seconds:
// well within the tab's own time, so that a page that never becomes ready
// still leaves time for the screenshot of the failure.
func (tb *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		tb.t.Fatal(err)
	}
}

func eval[T any](tb *tab, js string) T {
	tb.t.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		tb.t.Fatalf("evaluating %.60q: %v", js, err)
	}
	return v
}

// open loads the page with the query and waits until it computed.
func (tb *tab) open(query string) {
	tb.t.Helper()
	tb.do(chromedp.Navigate(tb.origin+"/"+query), chromedp.WaitVisible(`body[data-ready="true"]`))
}

// typeInto replaces the text of the input with id by typing text.
func (tb *tab) typeInto(id, text string) {
	tb.t.Helper()
	tb.do(chromedp.Focus("#"+id), chromedp.Evaluate[chromedp.Void](`document.getElementById(`+jsString(id)+`).select()`),
		chromedp.SendKeys("#"+id, text))
}

func (tb *tab) text(sel string) string {
	tb.t.Helper()
	return eval[string](tb, `document.querySelector(`+jsString(sel)+`).textContent.trim()`)
}

func (tb *tab) rows() [][]string {
	tb.t.Helper()
	return eval[[][]string](tb, `[...document.querySelectorAll('#rows tr')].map(tr => [...tr.cells].map(c => c.textContent))`)
}

func (tb *tab) query() url.Values {
	tb.t.Helper()
	loc, err := chromedp.Run(tb.ctx, chromedp.Location())
	if err != nil {
		tb.t.Fatal(err)
	}
	u, err := url.Parse(loc)
	if err != nil {
		tb.t.Fatal(err)
	}
	return u.Query()
}

// choosePreset selects a preset as the keyboard would, firing change.
func (tb *tab) choosePreset(id string) {
	tb.t.Helper()
	tb.do(chromedp.Evaluate[chromedp.Void](`{const s = document.getElementById('preset'); s.value = ` + jsString(id) +
		`; s.dispatchEvent(new Event('change', {bubbles: true}));}`))
}

func jsString(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

func TestBrowser(t *testing.T) {
	bctx, origin := startBrowser(t)

	t.Run("worked example by URL", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open(exampleQuery)
		rows := tb.rows()
		wantDelays := []string{"500 ms", "1 s", "2 s", "4 s", "8 s", "16 s", "30 s", "30 s"}
		if len(rows) != len(wantDelays) {
			t.Fatalf("table has %d rows, want %d: %v", len(rows), len(wantDelays), rows)
		}
		for i, want := range wantDelays {
			if rows[i][1] != want {
				t.Errorf("row %d delay = %q, want %q", i+1, rows[i][1], want)
			}
		}
		if got := rows[7][6]; got != "1 min 32 s" {
			t.Errorf("cumulative worst case after retry 8 = %q, want 1 min 32 s", got)
		}
		if got := tb.text("#t-max"); got != "1 min 32 s" {
			t.Errorf("longest total wait = %q, want 1 min 32 s", got)
		}
		if got := tb.text("#t-mean"); got != "45.8 s" {
			t.Errorf("mean total wait = %q, want 45.8 s", got)
		}
		for f, want := range map[string]string{"initial": "500ms", "multiplier": "2", "max": "30s", "retries": "8", "jitter": "full"} {
			if got := eval[string](tb, `document.getElementById('`+f+`').value`); got != want {
				t.Errorf("input %s = %q, want %q from the URL", f, got, want)
			}
		}
		if n := eval[int](tb, `document.querySelectorAll('#chart rect.bar').length`); n != 8 {
			t.Errorf("chart has %d bars, want 8", n)
		}
	})

	t.Run("editing updates table, totals and URL", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open(exampleQuery)
		tb.typeInto("retries", "9")
		if rows := tb.rows(); len(rows) != 9 || rows[8][6] != "2 min 2 s" {
			t.Errorf("after retries 9: %d rows, last cumulative %q; want 9 rows ending at 2 min 2 s", len(rows), rows[len(rows)-1][6])
		}
		if got := tb.text("#t-max"); got != "2 min 2 s" {
			t.Errorf("longest total wait after retries 9 = %q, want 2 min 2 s", got)
		}
		if q := tb.query(); q.Get("retries") != "9" || q.Get("initial") != "500ms" {
			t.Errorf("URL query after retries 9 = %v, want retries=9 and the other fields kept", q)
		}
		tb.typeInto("deadline", "60s")
		if q := tb.query(); q.Get("deadline") != "60s" {
			t.Errorf("URL query after deadline 60s = %v", q)
		}
		verdict := tb.text("#verdict")
		if !strings.Contains(verdict, "Does not fit") || !strings.Contains(verdict, "first 6 of 9") {
			t.Errorf("verdict = %q, want it not to fit with 6 of 9 retries in time", verdict)
		}
		if n := eval[int](tb, `document.querySelectorAll('#chart line.deadline').length`); n != 1 {
			t.Errorf("chart has %d deadline rules, want 1", n)
		}
		// Proportional jitter with its factor goes into the URL in the CLI's syntax.
		tb.do(chromedp.SetValue("#jitter", "proportional"),
			chromedp.Evaluate[chromedp.Void](`document.getElementById('jitter').dispatchEvent(new Event('input', {bubbles: true}))`))
		tb.typeInto("factor", "0.5")
		if q := tb.query(); q.Get("jitter") != "proportional:0.5" {
			t.Errorf("URL jitter = %q, want proportional:0.5", q.Get("jitter"))
		}
		if got := tb.text("#t-min"); got != "1 min 1 s" {
			t.Errorf("shortest total wait with ±50%% jitter = %q, want 1 min 1 s (half of 2 min 2 s)", got)
		}
	})

	t.Run("invalid input shows the error and keeps the last result", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open(exampleQuery)
		tb.typeInto("initial", "fast")
		msg := tb.text("#initial-err")
		want := page.Compute(map[string]string{"initial": "fast"}, "en").Errors[0].Text
		if msg == "" || msg != want {
			t.Errorf("error at Initial delay = %q, want the CLI's message %q", msg, want)
		}
		if got := eval[string](tb, `document.getElementById('initial').getAttribute('aria-invalid')`); got != "true" {
			t.Errorf("aria-invalid of the field = %q, want true", got)
		}
		if rows := tb.rows(); len(rows) != 8 || tb.text("#t-max") != "1 min 32 s" {
			t.Errorf("after invalid input: %d rows and total %q, want the last good result (8 rows, 1 min 32 s)", len(rows), tb.text("#t-max"))
		}
		if q := tb.query(); q.Get("initial") != "fast" {
			t.Errorf("URL initial = %q, want what was typed", q.Get("initial"))
		}
		tb.typeInto("initial", "1s")
		if msg := tb.text("#initial-err"); msg != "" {
			t.Errorf("error after fixing the field = %q, want none", msg)
		}
		if got := tb.text("#t-max"); got != "2 min 1 s" {
			t.Errorf("longest total wait with initial 1s = %q, want 2 min 1 s", got)
		}
	})

	t.Run("presets", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open("")
		ids := eval[[]string](tb, `[...document.getElementById('preset').options].map(o => o.value).filter(v => v)`)
		if len(ids) < 10 {
			t.Fatalf("%d presets, want at least 10: %v", len(ids), ids)
		}
		for _, id := range ids {
			tb.choosePreset(id)
			if got := eval[string](tb, `document.getElementById('preset').value`); got != id {
				t.Errorf("preset %s: after filling the inputs the preset shows %q", id, got)
			}
			if note := tb.text("#preset-note"); note == "" {
				t.Errorf("preset %s has no note", id)
			}
			errs := eval[string](tb, `[...document.querySelectorAll('.err')].map(e => e.textContent).join('')`)
			if errs != "" {
				t.Errorf("preset %s shows errors: %s", id, errs)
			}
		}
		tb.choosePreset("grpc-conn")
		q := tb.query()
		if q.Get("initial") != "1s" || q.Get("multiplier") != "1.6" || q.Get("max") != "120s" || q.Get("jitter") != "proportional:0.2" {
			t.Errorf("gRPC connection backoff preset gives query %v", q)
		}
		if got := eval[string](tb, `document.getElementById('factor').value`); got != "0.2" {
			t.Errorf("jitter factor of the gRPC preset = %q, want 0.2", got)
		}
		// Changing a value makes the preset "custom".
		tb.typeInto("retries", "4")
		if got := eval[string](tb, `document.getElementById('preset').value`); got != "" {
			t.Errorf("after editing, the preset is %q, want custom", got)
		}
	})

	t.Run("solving", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open(exampleQuery + "&deadline=60s")
		tb.do(chromedp.Click(`button[data-solve="retries"]`))
		if got := eval[string](tb, `document.getElementById('retries').value`); got != "6" {
			t.Errorf("solving for retries with a 60 s deadline set retries to %q, want 6 (%s)", got, tb.text("#solve-msg"))
		}
		if !strings.Contains(tb.text("#verdict"), "Fits") || tb.query().Get("retries") != "6" {
			t.Errorf("after solving: verdict %q, URL %v", tb.text("#verdict"), tb.query())
		}
		if got := tb.text("#solve-msg"); got != "Retries set to 6." {
			t.Errorf("after solving for retries the page says %q, want Retries set to 6.", got)
		}
		tb.do(chromedp.Click("#lang-ru"))
		if got := tb.text("#solve-msg"); got != "Число повторов: 6." {
			t.Errorf("after switching to Russian the solver's note says %q, want Число повторов: 6.", got)
		}
		tb.do(chromedp.Click("#lang-en"))
		for _, param := range []string{"initial", "multiplier"} {
			tb.open(exampleQuery + "&deadline=60s")
			tb.do(chromedp.Click(`button[data-solve="` + param + `"]`))
			if !strings.Contains(tb.text("#verdict"), "Fits") {
				t.Errorf("after solving for %s (%s = %q): verdict %q, want it to fit", param, param,
					eval[string](tb, `document.getElementById('`+param+`').value`), tb.text("#verdict"))
			}
		}
	})

	t.Run("CSV download", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open(exampleQuery + "&deadline=60s")
		dir := t.TempDir()
		events := true
		if _, err := chromedp.CallBrowser(tb.ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: &events,
		}); err != nil {
			t.Fatal(err)
		}
		done := make(chan string, 1)
		if err := chromedp.ListenBrowser(tb.ctx, func(ev any) {
			if e, ok := ev.(*browser.EventDownloadProgress); ok && e.State == browser.DownloadProgressStateCompleted {
				select {
				case done <- e.GUID:
				default:
				}
			}
		}); err != nil {
			t.Fatal(err)
		}
		tb.do(chromedp.Click("#dl-csv"))
		var guid string
		select {
		case guid = <-done:
		case <-tb.ctx.Done():
			t.Fatal("the CSV download did not complete")
		}
		got, err := os.ReadFile(filepath.Join(dir, guid))
		if err != nil {
			t.Fatal(err)
		}
		want := page.Export(map[string]string{"initial": "500ms", "multiplier": "2", "max": "30s", "retries": "8", "jitter": "full", "deadline": "60s"}, "csv").Text
		if string(got) != want {
			t.Errorf("downloaded CSV:\n%s\nwant what `again calc --format csv` writes:\n%s", got, want)
		}
	})

	t.Run("Russian", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open(exampleQuery + "&lang=ru")
		checkRussian(t, tb)
		// The switch goes back to English and says so in the URL.
		tb.do(chromedp.Click("#lang-en"))
		if got := eval[string](tb, `document.querySelector('h1').innerText`); got != "Exponential backoff calculator" {
			t.Errorf("heading after switching to English = %q", got)
		}
		if got := tb.query().Get("lang"); got != "en" {
			t.Errorf("URL lang after the switch = %q, want en", got)
		}
	})

	t.Run("verdict and jitter names read naturally", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		for _, tc := range []struct{ query, verdict, jitter string }{
			{"?initial=10s&max=10s&retries=21&jitter=none&deadline=15s&lang=en", "only the first of 21 retries is sure to start in time.", "none"},
			{"?initial=10s&max=10s&retries=21&jitter=none&deadline=15s&lang=ru", "успеет начаться наверняка только первый из 21 повтора.", "нет"},
			{"?initial=10s&max=10s&retries=21&jitter=full&deadline=35s&lang=ru", "успеют начаться наверняка только первые 3 из 21 повтора.", "полный"},
			{"?initial=10s&max=10s&retries=8&jitter=equal&deadline=35s&lang=ru", "успеют начаться наверняка только первые 3 из 8 повторов.", "равный"},
		} {
			tb.open(tc.query)
			if v := tb.text("#verdict"); !strings.Contains(v, tc.verdict) {
				t.Errorf("%s: verdict %q, want it to say %q", tc.query, v, tc.verdict)
			}
			if got := eval[string](tb, `(s => s.options[s.selectedIndex].text)(document.getElementById('jitter'))`); got != tc.jitter {
				t.Errorf("%s: the jitter shows as %q, want %q", tc.query, got, tc.jitter)
			}
		}
	})

	t.Run("Russian from the browser language", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		if _, err := chromedp.Call(tb.ctx, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{
			UserAgent: "Mozilla/5.0 (X11; Linux x86_64) again-test", AcceptLanguage: "ru-RU,ru;q=0.9,en;q=0.5",
		}); err != nil {
			t.Fatal(err)
		}
		tb.open(exampleQuery)
		checkRussian(t, tb)
		if got := tb.query().Get("lang"); got != "" {
			t.Errorf("URL lang without a choice = %q, want none", got)
		}
	})

	t.Run("no requests while editing, none to another origin", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open(exampleQuery)
		tb.mu.Lock()
		loaded := len(tb.requests)
		tb.mu.Unlock()
		tb.typeInto("initial", "750ms")
		tb.typeInto("retries", "12")
		tb.typeInto("deadline", "2m")
		tb.typeInto("multiplier", "x")
		tb.typeInto("multiplier", "1.5")
		tb.choosePreset("aws")
		tb.do(chromedp.Click(`button[data-solve="retries"]`), chromedp.Click("#lang-ru"), chromedp.Click("#lang-en"),
			chromedp.Click("#copy-go"))
		tb.mu.Lock()
		reqs := slices.Clone(tb.requests)
		tb.mu.Unlock()
		if len(reqs) > loaded {
			t.Errorf("editing made %d requests: %v", len(reqs)-loaded, reqs[loaded:])
		}
		for _, r := range reqs {
			u, err := url.Parse(r)
			if err != nil || u.Scheme+"://"+u.Host != origin {
				t.Errorf("request to %s, outside the page's origin %s", r, origin)
			}
		}
		if loaded == 0 {
			t.Error("saw no requests at all while loading; the network events are not being watched")
		}
	})

	t.Run("keyboard only", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open(exampleQuery)
		// Tab to the skip link, follow it, Tab to the preset and then to Initial delay.
		tb.do(chromedp.KeyEvent("\t"), chromedp.KeyEvent("\r"), chromedp.KeyEvent("\t"))
		if got := eval[string](tb, `document.activeElement.id`); got != "preset" {
			t.Fatalf("after Tab, Enter on the skip link and Tab, focus is on %q, want the preset", got)
		}
		tb.do(chromedp.KeyEvent("\t"), chromedp.KeyEvent("2s"))
		if got := tb.query().Get("initial"); got != "2s" {
			t.Errorf("typing into the focused Initial delay gave initial=%q, want 2s", got)
		}
		if got := tb.text("#t-max"); got != "2 min 30 s" {
			t.Errorf("longest total wait with initial 2s = %q, want 2 min 30 s", got)
		}
	})

	t.Run("no retries at all", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open("?retries=0&deadline=1s")
		if rows := tb.rows(); len(rows) != 0 || tb.text("#t-max") != "0 ms" || !strings.HasPrefix(tb.text("#verdict"), "Fits") {
			t.Errorf("with 0 retries: %d rows, longest total wait %q, verdict %q; want none, 0 ms, fits", len(rows), tb.text("#t-max"), tb.text("#verdict"))
		}
		if got := tb.text("#chart"); got == "" || !strings.Contains(got, "No retries") {
			t.Errorf("the chart with 0 retries says %q, want that there are none", got)
		}
		// Solving down to no retries at all, then back.
		tb.open("?initial=2s&retries=8&deadline=1s")
		tb.do(chromedp.Click(`button[data-solve="retries"]`))
		if got := eval[string](tb, `document.getElementById('retries').value`); got != "0" || len(tb.rows()) != 0 {
			t.Errorf("solving for retries within 1 s from a 2 s first delay: retries %q and %d rows, want 0 and none", got, len(tb.rows()))
		}
		tb.typeInto("retries", "3")
		if rows := tb.rows(); len(rows) != 3 {
			t.Errorf("after typing 3 retries the table has %d rows", len(rows))
		}
	})

	t.Run("column headings stay on top of a scrolled table", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open("?initial=100ms&multiplier=1.5&max=1m&retries=100&jitter=full")
		got := eval[string](tb, `(() => {
			const wrap = document.querySelector('.table-wrap');
			wrap.scrollIntoView();
			wrap.scrollTop = 600;
			const r = wrap.querySelector('thead th').getBoundingClientRect();
			return document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2).closest('th, td').innerText;
		})()`)
		if got != "Retry" {
			t.Errorf("scrolled down the table, the first column's heading shows %q, want Retry", got)
		}
	})

	t.Run("exported copy on a plain file server", func(t *testing.T) {
		dir := t.TempDir()
		if err := web.Export(dir); err != nil {
			t.Fatal(err)
		}
		// No CSP header and whatever Content-Types the file server picks:
		// the page must still work, protected by its meta CSP.
		plain := httptest.NewServer(http.FileServer(http.Dir(dir)))
		defer plain.Close()
		tb := newTab(t, bctx, plain.URL)
		tb.open("index.html" + exampleQuery)
		if got := tb.text("#t-max"); got != "1 min 32 s" {
			t.Errorf("exported page: longest total wait = %q, want 1 min 32 s", got)
		}
	})

	t.Run("page agrees with the Go code", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open("")
		inputs := randomInputs(300)
		js, _ := json.Marshal(inputs) // plain strings always marshal
		got := eval[[]json.RawMessage](tb, `(`+string(js)+`).map(v => JSON.parse(againCompute(JSON.stringify(v))))`)
		if len(got) != len(inputs) {
			t.Fatalf("page computed %d results for %d inputs", len(got), len(inputs))
		}
		for i, in := range inputs {
			want, _ := json.Marshal(page.Compute(in, "en"))
			var a, b any
			json.Unmarshal(got[i], &a)
			json.Unmarshal(want, &b)
			ga, _ := json.Marshal(a)
			gb, _ := json.Marshal(b)
			if string(ga) != string(gb) {
				t.Errorf("inputs %v: the page (again.wasm) computed\n%.300s\nbut the Go code computes\n%.300s\n(run `go generate ./web`?)", in, ga, gb)
			}
		}
		// The downloads, for a few of them.
		some := inputs[:30]
		js, _ = json.Marshal(some)
		files := eval[[][2]page.Download](tb, `(`+string(js)+`).map(v => ['csv', 'json'].map(f => JSON.parse(againExport(JSON.stringify(v), f))))`)
		for i, in := range some {
			for j, format := range []string{"csv", "json"} {
				if want := page.Export(in, format); files[i][j] != want {
					t.Errorf("inputs %v: the page's %s download is\n%+.300v\nbut the Go code writes\n%+.300v\n(run `go generate ./web`?)", in, format, files[i][j], want)
				}
			}
		}
	})

	t.Run("measurements", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open(exampleQuery)
		first := eval[float64](tb, `performance.getEntriesByName('again-first-table')[0].startTime`)
		tb.open("?initial=100ms&multiplier=1.5&max=1m&retries=99&jitter=full&deadline=30m")
		// Alternate 100 and 99 retries; time the input event, the Go
		// computation, the DOM update and the layout that follows.
		times := eval[[]float64](tb, `(() => {
			const el = document.getElementById('retries'), out = [];
			for (let i = 0; i < 41; i++) {
				const t0 = performance.now();
				el.value = i % 2 ? '99' : '100';
				el.dispatchEvent(new Event('input', {bubbles: true}));
				document.body.getBoundingClientRect();
				out.push(performance.now() - t0);
			}
			return out;
		})()`)
		if rows := tb.rows(); len(rows) != 100 {
			t.Fatalf("after the last edit the table has %d rows, want 100", len(rows))
		}
		sort.Float64s(times)
		t.Logf("navigation to first rendered table: %.0f ms", first)
		t.Logf("recompute after an edit, 100 retries: median %.1f ms, max %.1f ms (%d edits)", times[len(times)/2], times[len(times)-1], len(times))
		// The longest schedule the calculator takes: the table stops at
		// page.MaxRows and the downloads wait for a pause in typing.
		tb.open("?initial=100ms&multiplier=1.5&max=1m&retries=100000&jitter=full")
		long := eval[[]float64](tb, `(() => {
			const el = document.getElementById('retries'), out = [];
			for (let i = 0; i < 5; i++) {
				const t0 = performance.now();
				el.value = String(99999 - i);
				el.dispatchEvent(new Event('input', {bubbles: true}));
				document.body.getBoundingClientRect();
				out.push(performance.now() - t0);
			}
			return out;
		})()`)
		sort.Float64s(long)
		t.Logf("recompute after an edit, 100,000 retries: median %.0f ms, max %.0f ms (%d edits)", long[len(long)/2], long[len(long)-1], len(long))
	})
}

func checkRussian(t *testing.T, tb *tab) {
	t.Helper()
	if got := eval[string](tb, `document.documentElement.lang`); got != "ru" {
		t.Errorf("html lang = %q, want ru", got)
	}
	if got := eval[string](tb, `document.querySelector('h1').innerText`); got != "Калькулятор экспоненциальной задержки (backoff)" {
		t.Errorf("heading = %q, want the Russian one", got)
	}
	if got := tb.text("#t-max"); got != "1 мин 32 с" {
		t.Errorf("longest total wait = %q, want 1 мин 32 с", got)
	}
	if got := tb.text("#t-mean"); got != "45,8 с" {
		t.Errorf("mean total wait = %q, want 45,8 с", got)
	}
	example := strings.ReplaceAll(eval[string](tb, `document.querySelector('#about').innerText`), "\u00a0", " ")
	if !strings.Contains(example, "0,5 + 1 + 2 + 4 + 8 + 16 + 30 + 30 = 91,5 с") || strings.Contains(example, "worked example") {
		t.Errorf("the worked example is not shown in Russian only:\n%.400s", example)
	}
	if label := eval[string](tb, `document.querySelector('label[for=initial]').innerText`); label != "Первая задержка" {
		t.Errorf("label of the first field = %q, want Первая задержка", label)
	}
	titles := eval[[]string](tb, `[...document.querySelectorAll('#totals abbr')].filter(a => a.getClientRects().length).map(a => a.title)`)
	if !slices.Equal(titles, []string{"50-й процентиль, медиана", "90-й процентиль", "99-й процентиль"}) {
		t.Errorf("the percentiles' visible titles are %q, want the Russian ones", titles)
	}
}

// randomInputs returns n reproducible input sets covering every jitter,
// with and without cap and deadline, and some invalid fields.
func randomInputs(n int) []map[string]string {
	r := rand.New(rand.NewPCG(1, 2))
	units := []string{"ms", "s", "m", "us"}
	dur := func() string {
		switch r.IntN(8) {
		case 0:
			return "0"
		case 1:
			return fmt.Sprint(r.IntN(5000)) // bare milliseconds
		case 2:
			return fmt.Sprintf("%.1f%s", r.Float64()*100, units[r.IntN(len(units))])
		default:
			return fmt.Sprintf("%d%s", 1+r.IntN(900), units[r.IntN(2)])
		}
	}
	jitters := []string{"none", "full", "equal", "decorrelated", "proportional", "proportional:0.1", "proportional:0.5", "proportional:1"}
	out := make([]map[string]string, n)
	for i := range out {
		in := map[string]string{
			"initial":    dur(),
			"multiplier": fmt.Sprint([]float64{1, 1.5, 1.6, 2, 3, 10}[r.IntN(6)]),
			"max":        dur(),
			"retries":    fmt.Sprint(r.IntN(40)),
			"jitter":     jitters[r.IntN(len(jitters))],
		}
		if r.IntN(2) == 0 {
			in["deadline"] = dur()
		}
		if r.IntN(10) == 0 {
			in[[]string{"initial", "multiplier", "max", "retries", "jitter"}[r.IntN(5)]] = "bogus"
		}
		out[i] = in
	}
	return out
}

// TestLooks renders the page at desktop and phone width, in dark mode and
// in Russian, and checks what a reader would notice: no sideways scrolling
// on a phone, a dark background in dark mode.
func TestLooks(t *testing.T) {
	bctx, origin := startBrowser(t)
	for _, tc := range []struct {
		name          string
		width, height int64
		dark          bool
		query         string
	}{
		{"desktop", 1280, 900, false, exampleQuery + "&deadline=60s"},
		{"phone", 375, 800, false, exampleQuery + "&deadline=60s"},
		{"dark", 1280, 900, true, exampleQuery + "&deadline=60s"},
		{"russian phone dark", 375, 800, true, exampleQuery + "&deadline=60s&lang=ru"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := newTab(t, bctx, origin)
			scheme := "light"
			if tc.dark {
				scheme = "dark"
			}
			if _, err := chromedp.Call(tb.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
			}); err != nil {
				t.Fatal(err)
			}
			tb.do(chromedp.EmulateViewport(tc.width, tc.height))
			tb.open(tc.query)
			if w := eval[[]int](tb, `[document.documentElement.scrollWidth, window.innerWidth]`); w[0] > w[1] {
				t.Errorf("the page is %d px wide in a %d px window: it scrolls sideways", w[0], w[1])
			}
			bg := eval[string](tb, `getComputedStyle(document.body).backgroundColor`)
			var r, g, b int
			fmt.Sscanf(bg, "rgb(%d, %d, %d)", &r, &g, &b)
			if dark := r+g+b < 3*128; dark != tc.dark {
				t.Errorf("background %s with prefers-color-scheme %s", bg, scheme)
			}
			if os.Getenv("AGAIN_SCREENSHOTS") != "" {
				tb.screenshot("look")
			}
		})
	}
}
