package web_test

// Tests of the page in a real browser: Debian's Chromium driven through the
// DevTools protocol by chromedp. They skip only under `go test -short`;
// the full run never skips: CI installs chromium (see the test script),
// and a machine without it fails with a message saying how to install it.
// Set AGAIN_CHROMIUM to use another binary and AGAIN_SCREENSHOTS to a
// directory to keep the screenshots of TestLooks. BenchmarkPage measures
// the page's first render and recompute times for BENCHMARKS.md.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/again-go/again/cmd/again/internal/web"
	"github.com/again-go/again/cmd/again/internal/web/internal/page"
)

const exampleQuery = "?initial=500ms&multiplier=2&max=30s&retries=8&jitter=full"

// chromium returns the browser binary or fails the test saying how to get one.
func chromium(t testing.TB) string {
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
func startBrowser(t testing.TB) (context.Context, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("the browser tests need Chromium; they run without -short")
	}
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
	t      testing.TB
	ctx    context.Context
	origin string

	mu       sync.Mutex
	requests []string
}

func newTab(t testing.TB, bctx context.Context, origin string) *tab {
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

func eval[T any](tb *tab, js string, opts ...chromedp.EvaluateOption) T {
	tb.t.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[T](js, opts...))
	if err != nil {
		tb.t.Fatalf("evaluating %.60q: %v", js, err)
	}
	return v
}

// idle waits until the page shows the result of the last edit: the Go code
// runs in a Web Worker, so results arrive after the input event.
func (tb *tab) idle() {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`againIdle().then(() => true)`, chromedp.EvalAwaitPromise)); err != nil {
		tb.t.Fatal(err)
	}
}

// open loads the page with the query and waits until it computed.
func (tb *tab) open(query string) {
	tb.t.Helper()
	tb.do(chromedp.Navigate(tb.origin+"/"+query), chromedp.WaitVisible(`body[data-ready="true"]`))
}

// typeInto replaces the text of the input with id by typing text.
func (tb *tab) typeInto(id, text string) {
	tb.t.Helper()
	if text == "" {
		tb.do(chromedp.Evaluate[chromedp.Void](`(e => { e.value = ''; e.dispatchEvent(new Event('input', {bubbles: true})); })(document.getElementById(` + jsString(id) + `))`))
		tb.idle()
		return
	}
	tb.do(chromedp.Focus("#"+id), chromedp.Evaluate[chromedp.Void](`document.getElementById(`+jsString(id)+`).select()`),
		chromedp.SendKeys("#"+id, text))
	tb.idle()
}

func (tb *tab) text(sel string) string {
	tb.t.Helper()
	return eval[string](tb, `document.querySelector(`+jsString(sel)+`).textContent.trim()`)
}

func (tb *tab) rows() [][]string {
	tb.t.Helper()
	// The cells' own text, without the "capped" mark.
	return eval[[][]string](tb, `[...document.querySelectorAll('#rows tr')].map(tr => [...tr.cells].map(c =>
		[...c.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim()))`)
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
	tb.idle()
}

// click clicks the element and waits for the page to settle.
func (tb *tab) click(sel string) {
	tb.t.Helper()
	tb.do(chromedp.Click(sel))
	tb.idle()
}

// solveFor clicks a solve button and waits for the solver's note.
func (tb *tab) solveFor(param string) {
	tb.t.Helper()
	tb.do(chromedp.Evaluate[chromedp.Void](`document.getElementById('solve-msg').textContent = ''`),
		chromedp.Click(`button[data-solve="`+param+`"]`), chromedp.WaitVisible(`#solve-msg:not(:empty)`))
	tb.idle()
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
		if got := rows[7][2]; got != "1 min 32 s" {
			t.Errorf("latest start of retry 8 = %q, want 1 min 32 s", got)
		}
		if n := eval[int](tb, `document.querySelectorAll('#rows .capped-mark').length`); n != 2 {
			t.Errorf("%d delays marked capped, want 2 (retries 7 and 8)", n)
		}
		if got := tb.text("#worst"); got != "1 min 32 s" {
			t.Errorf("worst case = %q, want 1 min 32 s", got)
		}
		if got := tb.text("#mean"); got != "45.8 s" {
			t.Errorf("mean = %q, want 45.8 s", got)
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

	// The results come first: the worst case and the mean, then the verdict
	// stating the gap, then the details.
	t.Run("results first", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open(exampleQuery + "&deadline=60s")
		if got := tb.text("#verdict"); got != "Misses the 1 min deadline by 31.6 s" {
			t.Errorf("verdict = %q, want Misses the 1 min deadline by 31.6 s (91.5 s and the 100 ms kept for the last attempt)", got)
		}
		order := eval[[]float64](tb, `['worst', 'mean', 'verdict', 'verdict-detail', 't-p99', 'chart'].map(id => document.getElementById(id).getBoundingClientRect().top)`)
		if !(order[0] == order[1] && order[1] < order[2] && order[2] < order[3] && order[3] < order[4] && order[4] < order[5]) {
			t.Errorf("tops of worst case, mean, verdict, its detail, p99, chart = %v: want the headline, then the verdict, then the details", order)
		}
		if got, want := tb.text("#verdict-detail"), "In the worst case only the first 7 of 8 retries start in time. The 99th percentile, 1 min 15 s, misses it too."; got != want {
			t.Errorf("verdict detail = %q, want %q", got, want)
		}
		tb.typeInto("deadline", "100s")
		if got := tb.text("#verdict"); got != "Fits the 1 min 40 s deadline with 8.4 s to spare" {
			t.Errorf("verdict with 100 s = %q", got)
		}
		if got := eval[string](tb, `getComputedStyle(document.getElementById('verdict'), '::before').content`); got != `"✓ "` {
			t.Errorf("a fitting verdict is marked %s, want a check mark besides the colour", got)
		}
		// The deadline as typed, not rounded: 1,5 is 1.5 ms, in the
		// verdict and on the chart.
		tb.typeInto("deadline", "1,5")
		if got, label := tb.text("#verdict"), tb.text("#chart .deadline-label"); got != "Misses the 1.5 ms deadline by 1 min 32 s" || label != "1.5 ms" {
			t.Errorf("verdict with a 1,5 deadline = %q, chart label %q; want Misses the 1.5 ms deadline by 1 min 32 s, and 1.5 ms", got, label)
		}
	})

	t.Run("editing updates table, totals and URL", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open(exampleQuery)
		tb.typeInto("retries", "9")
		if rows := tb.rows(); len(rows) != 9 || rows[8][2] != "2 min 2 s" {
			t.Errorf("after retries 9: %d rows, last %v; want 9 rows ending at 2 min 2 s", len(rows), rows[len(rows)-1])
		}
		if got := tb.text("#worst"); got != "2 min 2 s" {
			t.Errorf("worst case after retries 9 = %q, want 2 min 2 s", got)
		}
		if q := tb.query(); q.Get("retries") != "9" || q.Get("initial") != "500ms" {
			t.Errorf("URL query after retries 9 = %v, want retries=9 and the other fields kept", q)
		}
		tb.typeInto("deadline", "60s")
		if q := tb.query(); q.Get("deadline") != "60s" {
			t.Errorf("URL query after deadline 60s = %v", q)
		}
		if got := tb.text("#verdict-detail"); !strings.Contains(got, "first 7 of 9") {
			t.Errorf("verdict detail = %q, want 7 of 9 retries in time", got)
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

	// Point 3: every result that no longer matches the input goes grey.
	t.Run("invalid input greys out every result", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		reduceMotion(t, tb) // no fading: the opacities are final at once
		tb.open(exampleQuery + "&deadline=60s")
		tb.typeInto("initial", "fast")
		want := page.Compute(map[string]string{"initial": "fast"}, page.English).Errors[0].Text
		if msg := tb.text("#initial-err"); msg != want {
			t.Errorf("error at Initial delay = %q, want %q", msg, want)
		}
		if got := eval[string](tb, `document.getElementById('initial').getAttribute('aria-invalid')`); got != "true" {
			t.Errorf("aria-invalid of the field = %q, want true", got)
		}
		if rows := tb.rows(); len(rows) != 8 || tb.text("#worst") != "1 min 32 s" {
			t.Errorf("after invalid input: %d rows and worst case %q, want the last good result greyed", len(rows), tb.text("#worst"))
		}
		for _, sel := range []string{"#worst", "#verdict", "#verdict-detail", "#t-p99", "#chart", "#timeline", "#rows", "#command", "#snippet"} {
			if o := eval[float64](tb, `(e => { let o = 1; for (; e; e = e.parentElement) o *= +getComputedStyle(e).opacity; return o; })(document.querySelector('`+sel+`'))`); o > 0.5 {
				t.Errorf("%s shows at opacity %.2f with invalid input, want it greyed out (at most 0.5)", sel, o)
			}
		}
		if got := tb.text("#status"); !strings.Contains(got, "last valid input") {
			t.Errorf("status = %q, want it to say the results are for the last valid input", got)
		}
		if q := tb.query(); q.Get("initial") != "fast" {
			t.Errorf("URL initial = %q, want what was typed", q.Get("initial"))
		}
		tb.typeInto("initial", "1s")
		if msg := tb.text("#initial-err"); msg != "" {
			t.Errorf("error after fixing the field = %q, want none", msg)
		}
		if o := eval[float64](tb, `+getComputedStyle(document.getElementById('summary')).opacity`); o != 1 {
			t.Errorf("headline opacity after fixing = %v, want 1", o)
		}
		if got := tb.text("#worst"); got != "2 min 1 s" {
			t.Errorf("worst case with initial 1s = %q, want 2 min 1 s", got)
		}
	})

	// Points 7 and 10.
	t.Run("presets", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open("?deadline=45s")
		ids := eval[[]string](tb, `[...document.getElementById('preset').options].map(o => o.value).filter(v => v)`)
		if len(ids) < 10 {
			t.Fatalf("%d presets, want at least 10: %v", len(ids), ids)
		}
		for _, id := range ids {
			tb.choosePreset(id)
			if got := eval[string](tb, `document.getElementById('preset').value`); got != id {
				t.Errorf("preset %s: after filling the inputs the preset shows %q", id, got)
			}
			if got := tb.query().Get("deadline"); got != "45s" {
				t.Errorf("preset %s: deadline %q, want the caller's 45s kept", id, got)
			}
			note := eval[[]string](tb, `(b => [b.querySelector('p').innerText, String(!!b.querySelector('details') && !b.querySelector('details').open)])(document.getElementById('preset-note'))`)
			// Another library's or service's values carry the date they
			// were checked, inside the sentence; the page's own do not.
			dated := id != "example" && id != "again"
			if len([]rune(note[0])) > 150 || dated != datedNote.MatchString(note[0]) || strings.Contains(note[0], "as of") != dated || note[1] != "true" {
				t.Errorf("preset %s: note %q (folded %s), want a short line, dated %v before its full stop, and the rest folded away", id, note[0], note[1], dated)
			}
			errs := eval[string](tb, `[...document.querySelectorAll('.err')].map(e => e.textContent).join('')`)
			if errs != "" {
				t.Errorf("preset %s shows errors: %s", id, errs)
			}
		}
		tb.choosePreset("grpc-conn")
		q := tb.query()
		if q.Get("initial") != "1s" || q.Get("multiplier") != "1.6" || q.Get("max") != "120s" || q.Get("jitter") != "grpc:0.2" {
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
		// A link with a deadline still shows its preset.
		tb.open(exampleQuery + "&deadline=60s&timeout=1s")
		if got := eval[string](tb, `document.getElementById('preset').value`); got != "example" {
			t.Errorf("the worked example with a deadline shows preset %q, want example", got)
		}
	})

	t.Run("solving", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open(exampleQuery + "&deadline=60s")
		tb.solveFor("retries")
		if got := eval[string](tb, `document.getElementById('retries').value`); got != "6" {
			t.Errorf("solving for retries with a 60 s deadline set retries to %q, want 6 (%s)", got, tb.text("#solve-msg"))
		}
		if !strings.HasPrefix(tb.text("#verdict"), "Fits") || tb.query().Get("retries") != "6" {
			t.Errorf("after solving: verdict %q, URL %v", tb.text("#verdict"), tb.query())
		}
		if got := tb.text("#solve-msg"); got != "Retries set to 6." {
			t.Errorf("after solving for retries the page says %q, want Retries set to 6.", got)
		}
		tb.click("#lang-ru")
		tb.do(chromedp.WaitVisible(`#solve-msg:not(:empty)`))
		if got := tb.text("#solve-msg"); got != "Число повторов: 6." {
			t.Errorf("after switching to Russian the solver's note says %q, want Число повторов: 6.", got)
		}
		tb.open(exampleQuery + "&deadline=1s&lang=ru")
		tb.solveFor("multiplier")
		want := page.Solve(map[string]string{"initial": "500ms", "multiplier": "2", "max": "30s", "retries": "8", "jitter": "full", "deadline": "1s"}, "multiplier", page.Russian).Error
		if got := tb.text("#solve-msg"); got != want || want == "" {
			t.Errorf("a solver failure on the Russian page says %q, want %q", got, want)
		}
		for _, param := range []string{"initial", "multiplier"} {
			tb.open(exampleQuery + "&deadline=60s&lang=en")
			tb.solveFor(param)
			if !strings.HasPrefix(tb.text("#verdict"), "Fits") {
				t.Errorf("after solving for %s (%s = %q): verdict %q, want it to fit", param, param,
					eval[string](tb, `document.getElementById('`+param+`').value`), tb.text("#verdict"))
			}
		}
	})

	// Point 8.
	t.Run("per-attempt timeout", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open(exampleQuery + "&deadline=2m")
		tb.typeInto("timeout", "2s")
		if got := tb.text("#worst"); got != "1 min 50 s" {
			t.Errorf("worst case with 2 s attempts = %q, want 1 min 50 s (91.5 s + 9 × 2 s)", got)
		}
		if got := tb.text("#attempts-note"); !strings.Contains(got, "9 × 2 s") {
			t.Errorf("the page says %q, want it to say the totals include 9 attempts of 2 s", got)
		}
		if got := tb.query().Get("timeout"); got != "2s" {
			t.Errorf("URL timeout = %q, want 2s", got)
		}
		if got := tb.text("#command-note"); got == "" || strings.Contains(tb.text("#command"), "timeout") {
			t.Errorf("command %q with note %q: want no --timeout and a note saying why", tb.text("#command"), got)
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
		// The proportional jitter's hint and its factor's empty field
		// write the default with a decimal comma.
		tb.do(chromedp.SetValue("#jitter", "proportional"),
			chromedp.Evaluate[chromedp.Void](`document.getElementById('jitter').dispatchEvent(new Event('input', {bubbles: true}))`))
		tb.idle()
		if got, want := tb.text("#jitter-hint"), "Случайная задержка от расчётной × (1 − f) до расчётной × (1 + f); 0 < f ≤ 1, по умолчанию 0,25"; got != want {
			t.Errorf("the proportional jitter's hint in Russian = %q, want %q", got, want)
		}
		if got := eval[string](tb, `document.getElementById('factor').placeholder`); got != "0,25" {
			t.Errorf("the factor's placeholder in Russian = %q, want 0,25", got)
		}
		tb.click("#lang-en")
		if got := eval[string](tb, `document.getElementById('factor').placeholder`); got != "0.25" || !strings.HasSuffix(tb.text("#jitter-hint"), "default 0.25") {
			t.Errorf("in English the factor's placeholder is %q and the hint %q, want 0.25 in both", got, tb.text("#jitter-hint"))
		}
		tb.click("#lang-ru")
		tb.do(chromedp.SetValue("#jitter", "full"),
			chromedp.Evaluate[chromedp.Void](`document.getElementById('jitter').dispatchEvent(new Event('input', {bubbles: true}))`))
		tb.idle()
		// The switch goes back to English and says so in the URL.
		tb.click("#lang-en")
		if got := eval[string](tb, `document.querySelector('h1').innerText`); got != "Exponential backoff calculator" {
			t.Errorf("heading after switching to English = %q", got)
		}
		if got := tb.text("#worst"); got != "1 min 32 s" {
			t.Errorf("worst case after switching to English = %q", got)
		}
		if got := tb.query().Get("lang"); got != "en" {
			t.Errorf("URL lang after the switch = %q, want en", got)
		}
	})

	// Point 9: messages in the page's language, from Go; the page's own
	// output typed back in.
	t.Run("Russian messages and typed-back output", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open(exampleQuery + "&lang=ru")
		for _, tc := range []struct{ field, value string }{{"initial", "быстро"}, {"retries", "-1"}, {"timeout", "x"}} {
			tb.typeInto(tc.field, tc.value)
			want := page.Compute(map[string]string{tc.field: tc.value}, page.Russian).Errors[0].Text
			if got := tb.text("#" + tc.field + "-err"); got != want || !strings.HasPrefix(got, "Нужн") {
				t.Errorf("%s = %q on the Russian page: error %q, want Go's Russian message %q", tc.field, tc.value, got, want)
			}
			tb.typeInto(tc.field, map[string]string{"initial": "500ms", "retries": "8", "timeout": ""}[tc.field])
		}
		// The page writes "1 мин 32 с" and "45,8 с": both can be typed back.
		tb.typeInto("deadline", "1 мин 32 с")
		tb.typeInto("multiplier", "1,5")
		if errs := eval[string](tb, `[...document.querySelectorAll('.err')].map(e => e.textContent).join('')`); errs != "" {
			t.Errorf("typing the page's own output back gives errors: %s", errs)
		}
		if got := tb.text("#command"); !strings.Contains(got, "--deadline 1m32s") || !strings.Contains(got, "--multiplier 1.5") {
			t.Errorf("command line = %q, want the typed values in again calc's syntax", got)
		}
	})

	t.Run("verdict and jitter names read naturally", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		for _, tc := range []struct{ query, detail, jitter string }{
			// The loop shortens the wait that would end past the deadline, so
			// a retry starts 100 ms before it: one at 9.9 s of a 10 s one.
			{"?initial=10s&max=10s&retries=21&jitter=none&deadline=10s&lang=en", "only the first of 21 retries starts in time.", "none"},
			{"?initial=10s&max=10s&retries=21&jitter=none&deadline=10s&lang=ru", "вовремя начнётся только первый из 21 повтора.", "нет"},
			{"?initial=10s&max=10s&retries=21&jitter=full&deadline=35s&lang=ru", "вовремя начнутся только первые 4 из 21 повтора.", "полный"},
			{"?initial=10s&max=10s&retries=8&jitter=equal&deadline=35s&lang=ru", "вовремя начнутся только первые 4 из 8 повторов.", "равный"},
		} {
			tb.open(tc.query)
			if v := tb.text("#verdict-detail"); !strings.Contains(v, tc.detail) {
				t.Errorf("%s: verdict detail %q, want it to say %q", tc.query, v, tc.detail)
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
		// The server counts what it serves: the worker's own requests
		// (worker.js, wasm_exec.js, again.wasm) do not show in the tab's
		// network events.
		var mu sync.Mutex
		var served []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			served = append(served, r.URL.Path)
			mu.Unlock()
			web.Handler().ServeHTTP(w, r)
		}))
		defer srv.Close()
		tb := newTab(t, bctx, srv.URL)
		tb.open(exampleQuery)
		mu.Lock()
		loaded := slices.Clone(served)
		mu.Unlock()
		for _, f := range []string{"/", "/app.js", "/worker.js", "/wasm_exec.js", "/again.wasm"} {
			if !slices.Contains(loaded, f) {
				t.Errorf("loading the page did not fetch %s: %v", f, loaded)
			}
		}
		tb.typeInto("initial", "750ms")
		tb.typeInto("retries", "12")
		tb.typeInto("deadline", "2m")
		tb.typeInto("timeout", "1s")
		tb.typeInto("multiplier", "x")
		tb.typeInto("multiplier", "1.5")
		tb.choosePreset("aws")
		tb.solveFor("retries")
		tb.click("#lang-ru")
		tb.click("#lang-en")
		tb.click("#copy-go")
		mu.Lock()
		after := slices.Clone(served)
		mu.Unlock()
		if len(after) > len(loaded) {
			t.Errorf("editing made %d requests: %v", len(after)-len(loaded), after[len(loaded):])
		}
		tb.mu.Lock()
		reqs := slices.Clone(tb.requests)
		tb.mu.Unlock()
		for _, r := range reqs {
			u, err := url.Parse(r)
			if err != nil || u.Scheme+"://"+u.Host != srv.URL && u.Scheme != "blob" {
				t.Errorf("request to %s, outside the page's origin %s", r, srv.URL)
			}
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
		// Past the preset's note (its links and folded text) to Initial delay.
		for i := 0; i < 4 && eval[string](tb, `document.activeElement.id`) != "initial"; i++ {
			tb.do(chromedp.KeyEvent("\t"))
		}
		tb.do(chromedp.KeyEvent("2s"))
		tb.idle()
		if got := tb.query().Get("initial"); got != "2s" {
			t.Errorf("typing into the focused Initial delay gave initial=%q, want 2s", got)
		}
		if got := tb.text("#worst"); got != "2 min 30 s" {
			t.Errorf("worst case with initial 2s = %q, want 2 min 30 s", got)
		}
	})

	// Point 5: degenerate schedules.
	t.Run("no retries at all", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open("?retries=0&deadline=1s")
		if rows := tb.rows(); len(rows) != 0 || tb.text("#worst") != "0 ms" || !strings.HasPrefix(tb.text("#verdict"), "Fits") {
			t.Errorf("with 0 retries: %d rows, worst case %q, verdict %q; want none, 0 ms, fits", len(rows), tb.text("#worst"), tb.text("#verdict"))
		}
		if shown := eval[[]bool](tb, `['chart', 'timeline', 'chart-empty'].map(id => document.getElementById(id).getClientRects().length > 0)`); shown[0] || shown[1] || !shown[2] {
			t.Errorf("with 0 retries the chart, timeline and note show %v, want only the note", shown)
		}
		if got := tb.text("#chart-empty"); !strings.Contains(got, "No retries") {
			t.Errorf("the chart's note with 0 retries says %q", got)
		}
		// Solving down to no retries at all, then back.
		tb.open("?initial=2s&retries=8&deadline=1s")
		tb.solveFor("retries")
		if got := eval[string](tb, `document.getElementById('retries').value`); got != "0" || len(tb.rows()) != 0 {
			t.Errorf("solving for retries within 1 s from a 2 s first delay: retries %q and %d rows, want 0 and none", got, len(tb.rows()))
		}
		tb.typeInto("retries", "3")
		if rows := tb.rows(); len(rows) != 3 || eval[int](tb, `document.querySelectorAll('#chart rect.bar').length`) != 3 {
			t.Errorf("after typing 3 retries the table has %d rows", len(rows))
		}
	})

	t.Run("huge uncapped schedule", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open("?initial=1s&multiplier=2&max=0&retries=100&jitter=none")
		cells := eval[[]string](tb, `[...document.querySelectorAll('#rows td')].map(c => c.textContent)`)
		for _, c := range cells {
			var h int
			if i := strings.Index(c, " h"); i > 0 {
				fmt.Sscan(c[strings.LastIndex(" "+c[:i], " "):i], &h)
			}
			if h >= 24 {
				t.Errorf("a cell reads %q, want days or years for long durations", c)
				break
			}
		}
		if got := tb.rows()[29][1]; got != "17 years" {
			t.Errorf("delay of retry 30 = %q, want 17 years", got)
		}
		if got := tb.text("#worst"); got != "more than 292 years" {
			t.Errorf("worst case = %q, want more than 292 years", got)
		}
		ticks := eval[[]string](tb, `[...document.querySelectorAll('#chart text.tick')].map(t => t.textContent)`)
		for _, tick := range ticks {
			if strings.HasSuffix(tick, "000 d") {
				t.Errorf("chart gridline %q: want familiar units on a logarithmic axis", tick)
			}
		}
	})

	// Point 4.
	t.Run("chart", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open("?initial=100ms&multiplier=1.5&max=1m&retries=40&jitter=full&deadline=2m")
		r := page.Compute(map[string]string{"initial": "100ms", "multiplier": "1.5", "max": "1m", "retries": "40", "jitter": "full", "deadline": "2m"}, page.English)
		if n := eval[int](tb, `document.querySelectorAll('#legend li:not([hidden])').length`); n != 6 {
			t.Errorf("the legend has %d entries, want 6", n)
		}
		titles := eval[[]string](tb, `[...document.querySelectorAll('#chart .axis-title, #timeline .axis-title')].map(t => t.textContent)`)
		if !slices.Equal(titles, []string{"Latest start", "Delay", "Retry", "Attempt", "Time since the first attempt"}) {
			t.Errorf("axis titles = %q", titles)
		}
		ticks := eval[[]string](tb, `[...document.querySelectorAll('#chart text.tick')].map(t => t.textContent)`)
		var want []string
		for _, tk := range r.Chart.Total.Ticks {
			want = append(want, tk.Label)
		}
		for _, tk := range r.Chart.Delay.Ticks {
			want = append(want, tk.Label)
		}
		for _, k := range r.Chart.RetryTicks {
			want = append(want, fmt.Sprint(k))
		}
		if !slices.Equal(ticks, want) || r.Chart.Total.Log || ticks[0] != "0" {
			t.Errorf("chart labels = %q, want Go's %q starting at 0", ticks, want)
		}
		if !slices.Equal(r.Chart.RetryTicks, []int{1, 5, 10, 15, 20, 25, 30, 35, 40}) {
			t.Errorf("retry ticks = %v, want round numbers", r.Chart.RetryTicks)
		}
		ends := eval[[]string](tb, `[...document.querySelectorAll('#chart .end-label')].map(t => t.textContent)`)
		if len(ends) == 0 || ends[0] != r.Summary.Worst {
			t.Errorf("end labels = %q, want the worst case %q first", ends, r.Summary.Worst)
		}
		if n := eval[int](tb, `document.querySelectorAll('#chart .cross').length`); n != 1 || r.Chart.Cross == 0 {
			t.Errorf("%d crossing marks (first late retry %d), want 1", n, r.Chart.Cross)
		}
		// The deadline and the worst case differ in more than colour.
		st := eval[[]string](tb, `['line.deadline', 'polyline.cum'].map(s => getComputedStyle(document.querySelector('#chart ' + s)).strokeDasharray)`)
		if st[0] == st[1] || st[0] == "none" {
			t.Errorf("dash patterns of the deadline and the worst case = %q", st)
		}
		if c := contrast(t, eval[[]string](tb, `['line.deadline', 'polyline.cum'].map(s => getComputedStyle(document.querySelector('#chart ' + s)).stroke)`)); c < 3 {
			t.Errorf("contrast between the deadline and the worst-case line = %.2f, want at least 3", c)
		}
		if n := eval[int](tb, `document.querySelectorAll('#timeline line.span').length`); n != 41 {
			t.Errorf("the timeline shows %d attempts, want 41", n)
		}
		if got := tb.text("#chart-text"); got != r.Chart.Text || !strings.Contains(got, r.Summary.Worst) {
			t.Errorf("the chart's text alternative = %q, want Go's %q with the numbers", got, r.Chart.Text)
		}
		if got := eval[string](tb, `document.getElementById('chart').getAttribute('aria-describedby')`); got != "chart-text" {
			t.Errorf("the chart is described by %q, want chart-text", got)
		}
	})

	// Every tick label lies inside its chart, clear of the axis titles,
	// however wide the labels: the timeline's 100001 attempts, the storm's
	// 100000 clients. The timeline draws attempts too many for a line each
	// as the band, mean and latest start the schedule's chart draws.
	t.Run("axis labels fit", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		check := func(query string, ids ...string) {
			t.Helper()
			tb.open(query)
			tb.do(chromedp.WaitVisible(`#storm-box:not(.stale)`))
			js, _ := json.Marshal(ids)
			problems := eval[[]string](tb, `(`+string(js)+`).flatMap(id => {
				const svg = document.getElementById(id), box = svg.getBoundingClientRect(), out = [];
				const rects = (sel) => [...svg.querySelectorAll(sel)].map(t => [t.textContent, t.getBoundingClientRect()]);
				const ticks = rects('text.tick'), titles = rects('text.axis-title');
				if (ticks.length === 0) out.push(id + ': no tick labels');
				for (const [s, r] of ticks) if (r.left < box.left - 0.5 || r.right > box.right + 0.5) out.push(id + ': the label ' + s + ' is cut at the edge');
				for (const [a, ra] of titles) for (const [s, r] of ticks) {
					if (ra.left < r.right && r.left < ra.right && ra.top < r.bottom && r.top < ra.bottom) out.push(id + ': the title ' + a + ' overlaps the label ' + s);
				}
				return out;
			})`)
			for _, p := range problems {
				t.Errorf("%s: %s", query, p)
			}
		}
		check("?initial=1ms&multiplier=1.0001&max=0&retries=100000&jitter=full&deadline=1h&lang=ru", "chart", "timeline")
		if got := eval[[]int](tb, `['polygon.cum-band', 'polyline.cum-mean', 'polyline.cum', 'line.span'].map(s => document.querySelectorAll('#timeline ' + s).length)`); !slices.Equal(got, []int{1, 1, 1, 0}) {
			t.Errorf("the timeline of 100001 attempts draws %v bands, mean lines, latest-start lines and attempt lines; want one band and its two lines", got)
		}
		check("?retries=1&clients=100000&lang=en", "chart", "timeline", "storm")
		check(exampleQuery+"&deadline=60s&lang=en", "chart", "timeline", "storm")
	})

	// The x-axis labels of every chart stand apart and inside their SVG at
	// a phone's width and a desktop's, in both languages: long durations
	// ("1 h 15 min") thin the labelled ticks, and the last label ("1 мин
	// 30 с") is not cut at the right edge.
	t.Run("x labels apart", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		for _, width := range []int64{390, 1280} {
			tb.do(chromedp.EmulateViewport(width, 900))
			for _, q := range []string{
				"?initial=1s&multiplier=2&max=30m&retries=8&jitter=full&deadline=2h",
				"?initial=1s&multiplier=2&max=30m&retries=8&jitter=full&deadline=80m", // gridlines 15 min apart
				exampleQuery + "&deadline=60s",
			} {
				for _, lang := range []string{"en", "ru"} {
					query := q + "&lang=" + lang
					tb.open(query)
					tb.do(chromedp.WaitVisible(`#storm-box:not(.stale)`), chromedp.WaitVisible(`#shed-box:not(.stale)`))
					// An SVG's x labels are its tick labels on the lowest row.
					problems := eval[[]string](tb, `['chart', 'timeline', 'storm', 'shed-chart'].flatMap(id => {
						const svg = document.getElementById(id), box = svg.getBoundingClientRect(), out = [];
						const ticks = [...svg.querySelectorAll('text.tick')];
						const row = Math.max(...ticks.map(t => +t.getAttribute('y')));
						const xs = ticks.filter(t => +t.getAttribute('y') === row).map(t => [t.textContent, t.getBoundingClientRect()]).sort((a, b) => a[1].left - b[1].left);
						if (xs.length < 2) out.push(id + ': ' + xs.length + ' x labels');
						for (const [s, r] of xs) if (r.left < box.left - 0.5 || r.right > box.right + 0.5) out.push(id + ': the label ' + s + ' lies outside the SVG');
						for (let i = 1; i < xs.length; i++) if (xs[i][1].left < xs[i - 1][1].right) out.push(id + ': the labels ' + xs[i - 1][0] + ' and ' + xs[i][0] + ' overlap');
						return out;
					})`)
					for _, p := range problems {
						t.Errorf("%d px, %s: %s", width, query, p)
					}
				}
			}
		}
	})

	// The command boxes wrap between arguments, never inside a flag, and
	// hold the command exactly: their text and what a reader copies.
	t.Run("command lines wrap between arguments", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		in := map[string]string{"initial": "500ms", "multiplier": "2", "max": "30s", "retries": "8", "jitter": "full", "deadline": "60s"}
		want := map[string]string{"command": page.Compute(in, page.English).Command, "storm-command": page.Storm(in, page.English).Command}
		for _, width := range []int64{390, 1280} {
			tb.do(chromedp.EmulateViewport(width, 900))
			tb.open(exampleQuery + "&deadline=60s&lang=en")
			tb.do(chromedp.WaitVisible(`#storm-box:not(.stale)`))
			for id, cmd := range want {
				got := eval[[]string](tb, `(el => {
					getSelection().selectAllChildren(el);
					const copied = getSelection().toString();
					getSelection().removeAllRanges();
					// The box's lines as laid out: its characters grouped by their line's top.
					const lines = [];
					let top = null;
					const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
					for (let n; (n = walk.nextNode());) {
						for (let i = 0; i < n.length; i++) {
							const r = document.createRange();
							r.setStart(n, i);
							r.setEnd(n, i + 1);
							const rect = r.getClientRects()[0];
							if (!rect) continue;
							if (top === null || rect.top > top + 2) { lines.push(''); top = rect.top; }
							lines[lines.length - 1] += n.data[i];
						}
					}
					return [el.textContent, copied, ...lines.map(l => l.trim())];
				})(document.getElementById(`+jsString(id)+`))`)
				if got[0] != cmd || got[1] != cmd {
					t.Errorf("%d px: #%s holds %q and copies as %q, want the command %q", width, id, got[0], got[1], cmd)
				}
				lines := got[2:]
				for _, line := range lines {
					if strings.HasPrefix(line, "-") && !strings.HasPrefix(line, "--") || strings.HasSuffix(line, "-") {
						t.Errorf("%d px: #%s breaks inside a flag: lines %q", width, id, lines)
						break
					}
				}
				if width == 390 && len(lines) < 2 {
					t.Errorf("390 px: #%s is one line %q, want it wrapped", id, lines)
				}
			}
		}
	})

	// Point 11.
	t.Run("accessibility", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open(exampleQuery + "&deadline=60s")
		for _, scheme := range []string{"light", "dark"} {
			if _, err := chromedp.Call(tb.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
			}); err != nil {
				t.Fatal(err)
			}
			bg := eval[string](tb, `getComputedStyle(document.querySelector('form')).backgroundColor`)
			for _, sel := range []string{"#initial", "#jitter"} {
				if c := contrast(t, []string{eval[string](tb, `getComputedStyle(document.querySelector('`+sel+`')).borderTopColor`), bg}); c < 3 {
					t.Errorf("%s: %s's border has %.2f:1 contrast with the form, want at least 3:1", scheme, sel, c)
				}
			}
			tb.do(chromedp.Focus("#initial"))
			ring := eval[string](tb, `getComputedStyle(document.getElementById('initial')).outlineColor`)
			if c := contrast(t, []string{ring, bg}); c < 3 {
				t.Errorf("%s: the focus ring %s has %.2f:1 contrast, want at least 3:1", scheme, ring, c)
			}
			panel := eval[string](tb, `getComputedStyle(document.getElementById('chart')).backgroundColor`)
			for _, m := range [][2]string{{"rect.bar", "fill"}, {"polyline.cum", "stroke"}, {"line.deadline", "stroke"}, {"line.mean", "stroke"}} {
				col := eval[string](tb, `getComputedStyle(document.querySelector('#chart `+m[0]+`')).`+m[1])
				if c := contrast(t, []string{col, panel}); c < 3 {
					t.Errorf("%s: chart mark %s (%s) has %.2f:1 contrast, want at least 3:1", scheme, m[0], col, c)
				}
			}
			if c := contrast(t, eval[[]string](tb, `['line.deadline', 'polyline.cum'].map(s => getComputedStyle(document.querySelector('#chart ' + s)).stroke)`)); c < 3 {
				t.Errorf("%s: contrast between the deadline and the worst-case line = %.2f, want at least 3", scheme, c)
			}
			if c := contrast(t, eval[[]string](tb, `[getComputedStyle(document.querySelector('#chart line.mean')).stroke, getComputedStyle(document.querySelector('#chart rect.bar')).fill]`)); c < 3 {
				t.Errorf("%s: the mean's line on its bar has %.2f:1 contrast, want at least 3:1", scheme, c)
			}
		}
		// One live region, read out once after a burst of edits.
		if n := eval[int](tb, `document.querySelectorAll('[aria-live]').length`); n != 1 {
			t.Errorf("%d live regions, want 1", n)
		}
		// The page's own announcement of its first result comes 700 ms
		// after that result, which a loaded machine may delay past the
		// checks above: wait for it, so that only the edits' are counted.
		initial := page.Compute(map[string]string{"initial": "500ms", "multiplier": "2", "max": "30s", "retries": "8", "jitter": "full", "deadline": "60s"}, page.English).Announce
		eval[bool](tb, `againIdle().then(() => new Promise(r => { const c = () => document.getElementById('announce').textContent === `+strconv.Quote(initial)+` ? r(true) : setTimeout(c, 50); c(); }))`, chromedp.EvalAwaitPromise)
		tb.do(chromedp.Evaluate[chromedp.Void](`window.announced = []; new MutationObserver(() => announced.push(document.getElementById('announce').textContent)).observe(document.getElementById('announce'), {childList: true, characterData: true, subtree: true})`))
		tb.typeInto("retries", "10")
		tb.typeInto("deadline", "2m")
		// Wait for the first announcement and a second longer, in which a
		// region that spoke on every update would speak again.
		eval[bool](tb, `new Promise(r => { const c = () => announced.length ? setTimeout(() => r(true), 1000) : setTimeout(c, 50); c(); })`, chromedp.EvalAwaitPromise)
		want := page.Compute(map[string]string{"initial": "500ms", "multiplier": "2", "max": "30s", "retries": "10", "jitter": "full", "deadline": "2m"}, page.English).Announce
		if got := eval[[]string](tb, `announced`); len(got) != 1 || got[0] != want {
			t.Errorf("the live region said %q, want once %q", got, want)
		}
		tb.click("#lang-ru")
		if got := eval[[]string](tb, `[...document.querySelectorAll('pre')].map(p => p.lang)`); !slices.Equal(got, []string{"en", "en", "en", "en"}) {
			t.Errorf("the code blocks on the Russian page have lang %q, want en", got)
		}
		reduceMotion(t, tb)
		if got := eval[string](tb, `getComputedStyle(document.querySelector('#summary .headline')).transitionDuration`); got != "0s" {
			t.Errorf("with reduced motion the headline still fades (%s)", got)
		}
	})

	// Point 2: on a phone the result stays in view while editing, and the
	// table keeps its key column.
	t.Run("phone layout", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.do(chromedp.EmulateViewport(390, 844))
		tb.open("?initial=100ms&multiplier=1.5&max=1m&retries=30&jitter=full&deadline=2m")
		geo := func() []float64 {
			return eval[[]float64](tb, `(r => [r.top, r.bottom, innerHeight])(document.getElementById('summary').getBoundingClientRect())`)
		}
		if g := geo(); g[1] > 300 {
			t.Errorf("the headline ends %.0f px down a 390 px phone, want it near the top", g[1])
		}
		tb.do(chromedp.Focus("#timeout"), chromedp.Evaluate[chromedp.Void](`document.getElementById('timeout').scrollIntoView({block: 'end'})`))
		if g := geo(); g[0] < 0 || g[1] > g[2] {
			t.Errorf("editing the last field, the headline is at %v px in a %v px screen, want it in view", g[:2], g[2])
		}
		if w := eval[[]int](tb, `[document.documentElement.scrollWidth, window.innerWidth]`); w[0] > w[1] {
			t.Errorf("the page is %d px wide in a %d px window", w[0], w[1])
		}
		// The latest-start column is in view without scrolling; scrolled
		// sideways, the retry number stays.
		got := eval[[]string](tb, `(() => {
			const wrap = document.querySelector('.table-wrap');
			wrap.scrollIntoView({block: 'center'}); // below the sticky headline
			const cell = document.querySelector('#rows tr:nth-child(3) td:nth-child(3)').getBoundingClientRect();
			const inView = String(cell.right <= wrap.getBoundingClientRect().right);
			wrap.scrollLeft = wrap.scrollWidth;
			const th = document.querySelector('#rows tr:nth-child(3) th').getBoundingClientRect();
			return [inView, document.elementFromPoint(th.left + 4, th.top + th.height / 2).closest('th, td').innerText];
		})()`)
		if got[0] != "true" || got[1] != "3" {
			t.Errorf("on a phone: latest-start column in view %s, the first column scrolled sideways shows %q; want true and 3", got[0], got[1])
		}
		// On a desktop the form is beside the results.
		tb.do(chromedp.EmulateViewport(1366, 900))
		side := eval[[]float64](tb, `[document.querySelector('form').getBoundingClientRect().right, document.getElementById('summary').getBoundingClientRect().left, document.getElementById('summary').getBoundingClientRect().top]`)
		if side[1] < side[0] || side[2] > 250 {
			t.Errorf("at 1366 px the form ends at %.0f and the headline starts at %.0f, %.0f px down; want it beside the form, near the top", side[0], side[1], side[2])
		}
	})

	t.Run("column headings stay on top of a scrolled table", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open("?initial=100ms&multiplier=1.5&max=1m&retries=100&jitter=full")
		got := eval[string](tb, `(() => {
			const wrap = document.querySelector('.table-wrap');
			wrap.scrollIntoView();
			wrap.scrollTop = 600;
			const r = wrap.querySelector('thead th:nth-child(2)').getBoundingClientRect();
			return document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2).closest('th, td').innerText;
		})()`)
		if got != "Delay" {
			t.Errorf("scrolled down the table, the second column's heading shows %q, want Delay", got)
		}
	})

	// Point 12: typing never waits for the computation.
	t.Run("typing never blocks", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open("?initial=100ms&multiplier=1.5&max=1m&retries=100000&jitter=decorrelated")
		got := eval[[]bool](tb, `new Promise(resolve => {
			const el = document.getElementById('retries'), t0 = performance.now();
			el.value = '99999';
			el.dispatchEvent(new Event('input', {bubbles: true}));
			// A timer set after the edit runs while the worker computes,
			// and the stale results are marked meanwhile.
			let timerFirst = null, pendingSeen = false;
			setTimeout(() => { timerFirst = document.body.dataset.busy === 'true'; }, 0);
			const poll = setInterval(() => { pendingSeen ||= document.getElementById('calculator').classList.contains('pending'); }, 20);
			// Results that arrive within 120 ms are not marked, so that
			// quick edits do not flicker.
			againIdle().then(() => { clearInterval(poll); resolve([timerFirst === true, pendingSeen || performance.now() - t0 < 200, document.getElementById('summary').getAttribute('aria-busy') === 'false']); });
		})`, chromedp.EvalAwaitPromise)
		if !got[0] || !got[1] || !got[2] {
			t.Errorf("at 100,000 decorrelated retries: a timer ran before the result %v, stale results marked %v, unmarked after %v; want all true", got[0], got[1], got[2])
		}
		if rows := tb.rows(); len(rows) != page.MaxRows || !strings.Contains(tb.text("#more-rows"), "99999") {
			t.Errorf("after the edit the table has %d rows and says %q", len(rows), tb.text("#more-rows"))
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
		if got := tb.text("#worst"); got != "1 min 32 s" {
			t.Errorf("exported page: worst case = %q, want 1 min 32 s", got)
		}
	})

	t.Run("page agrees with the Go code", func(t *testing.T) {
		tb := newTab(t, bctx, origin)
		tb.open("")
		inputs := randomInputs(300)
		js, _ := json.Marshal(inputs) // plain strings always marshal
		got := eval[[]json.RawMessage](tb, `Promise.all((`+string(js)+`).map((v, i) => againCall('Compute', JSON.stringify(v), i % 2 ? 'ru' : 'en').then(JSON.parse)))`, chromedp.EvalAwaitPromise)
		if len(got) != len(inputs) {
			t.Fatalf("page computed %d results for %d inputs", len(got), len(inputs))
		}
		for i, in := range inputs {
			l := page.English
			if i%2 == 1 {
				l = page.Russian
			}
			want, _ := json.Marshal(page.Compute(in, l))
			var a, b any
			json.Unmarshal(got[i], &a)
			json.Unmarshal(want, &b)
			ga, _ := json.Marshal(a)
			gb, _ := json.Marshal(b)
			if string(ga) != string(gb) {
				t.Errorf("inputs %v: the page (again.wasm) computed\n%.300s\nbut the Go code computes\n%.300s\n(run `go generate ./cmd/again/internal/web`?)", in, ga, gb)
			}
		}
		// The downloads, for a few of them.
		some := inputs[:30]
		js, _ = json.Marshal(some)
		files := eval[[][2]page.Download](tb, `Promise.all((`+string(js)+`).map(v => Promise.all(['csv', 'json'].map(f => againCall('Export', JSON.stringify(v), f).then(JSON.parse)))))`, chromedp.EvalAwaitPromise)
		for i, in := range some {
			for j, format := range []string{"csv", "json"} {
				if want := page.Export(in, format); files[i][j] != want {
					t.Errorf("inputs %v: the page's %s download is\n%+.300v\nbut the Go code writes\n%+.300v\n(run `go generate ./cmd/again/internal/web`?)", in, format, files[i][j], want)
				}
			}
		}
	})
}

// datedNote matches a preset's short note that ends with the date its
// values were checked, before the full stop, and the link to its source.
var datedNote = regexp.MustCompile(`[^ ] \(as of 2026-[01][0-9]\)\.(?: Source)?$`)

// reduceMotion makes the tab prefer reduced motion.
func reduceMotion(t *testing.T, tb *tab) {
	t.Helper()
	if _, err := chromedp.Call(tb.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-reduced-motion", Value: "reduce"}},
	}); err != nil {
		t.Fatal(err)
	}
}

// contrast returns the WCAG contrast ratio of two CSS colours in the
// rgb()/rgba() form getComputedStyle returns.
func contrast(t *testing.T, colours []string) float64 {
	t.Helper()
	var lum [2]float64
	for i, c := range colours[:2] {
		var r, g, b float64
		if _, err := fmt.Sscanf(strings.NewReplacer("rgba(", "rgb(", ",", " ").Replace(c), "rgb(%g %g %g", &r, &g, &b); err != nil {
			t.Fatalf("colour %q: %v", c, err)
		}
		lin := func(v float64) float64 {
			v /= 255
			if v <= 0.04045 {
				return v / 12.92
			}
			return math.Pow((v+0.055)/1.055, 2.4)
		}
		lum[i] = 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
	}
	hi, lo := max(lum[0], lum[1]), min(lum[0], lum[1])
	return (hi + 0.05) / (lo + 0.05)
}

// BenchmarkPage measures what BENCHMARKS.md records: the navigation to the
// first rendered table, and the time from an edit to its rendered result
// (the input event, the Go code in the worker, the DOM update and layout)
// for a short and the longest schedules, and the input event's own time,
// the only part that blocks typing. It reports milliseconds per operation
// from the page's own performance marks.
func BenchmarkPage(b *testing.B) {
	bctx, origin := startBrowser(b)
	tb := newTab(b, bctx, origin)
	b.Run("first-render", func(b *testing.B) {
		var total float64
		for b.Loop() {
			tb.open(exampleQuery)
			total += eval[float64](tb, `performance.getEntriesByName('again-first-table')[0].startTime`)
		}
		b.ReportMetric(total/float64(b.N), "ms/render")
	})
	for _, tc := range []struct{ name, query, a, b string }{
		{"edit/100-retries", "?initial=100ms&multiplier=1.5&max=1m&retries=100&jitter=full&deadline=30m", "99", "100"},
		{"edit/100000-retries", "?initial=100ms&multiplier=1.5&max=1m&retries=100000&jitter=full", "99999", "100000"},
		{"edit/20000-decorrelated", "?initial=100ms&multiplier=1.5&max=1m&retries=20000&jitter=decorrelated", "19999", "20000"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			tb.open(tc.query)
			var total, handler float64
			i := 0
			for b.Loop() {
				v := tc.a
				if i++; i%2 == 0 {
					v = tc.b
				}
				// The input event's own time is what blocks typing; the
				// rest happens in the worker.
				got := eval[[2]float64](tb, `new Promise(resolve => {
					performance.clearMeasures('again-update');
					const el = document.getElementById('retries');
					el.value = '`+v+`';
					const t0 = performance.now();
					el.dispatchEvent(new Event('input', {bubbles: true}));
					const handler = performance.now() - t0;
					againIdle().then(() => { document.body.getBoundingClientRect(); resolve([performance.getEntriesByName('again-update')[0].duration, handler]); });
				})`, chromedp.EvalAwaitPromise)
				total += got[0]
				handler += got[1]
			}
			b.ReportMetric(handler/float64(b.N), "ms/input-event")
			b.ReportMetric(total/float64(b.N), "ms/edit")
		})
	}
}

func checkRussian(t *testing.T, tb *tab) {
	t.Helper()
	if got := eval[string](tb, `document.documentElement.lang`); got != "ru" {
		t.Errorf("html lang = %q, want ru", got)
	}
	if got := eval[string](tb, `document.querySelector('h1').innerText`); got != "Калькулятор экспоненциальной задержки (backoff)" {
		t.Errorf("heading = %q, want the Russian one", got)
	}
	if got := tb.text("#worst"); got != "1 мин 32 с" {
		t.Errorf("worst case = %q, want 1 мин 32 с", got)
	}
	if got := tb.text("#mean"); got != "45,8 с" {
		t.Errorf("mean = %q, want 45,8 с", got)
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

// TestLooks renders the page at desktop and phone width, in both
// languages and in dark mode, and checks what a reader would notice: no
// sideways scrolling on a phone, a dark background in dark mode, the
// headline within the first screen. With AGAIN_SCREENSHOTS set it keeps a
// screenshot of each.
func TestLooks(t *testing.T) {
	bctx, origin := startBrowser(t)
	for _, tc := range []struct {
		name          string
		width, height int64
		dark          bool
		query         string
	}{
		{"desktop", 1366, 900, false, exampleQuery + "&deadline=60s&lang=en"},
		{"desktop russian", 1366, 900, false, exampleQuery + "&deadline=60s&lang=ru"},
		{"phone", 390, 844, false, exampleQuery + "&deadline=60s&lang=en"},
		{"phone russian", 390, 844, false, exampleQuery + "&deadline=60s&lang=ru"},
		{"dark", 1366, 900, true, exampleQuery + "&deadline=60s&lang=en"},
		{"russian phone dark", 390, 844, true, exampleQuery + "&deadline=60s&lang=ru"},
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
			if bottom := eval[float64](tb, `document.getElementById('verdict').getBoundingClientRect().bottom`); bottom > float64(tc.height)/2 {
				t.Errorf("the verdict ends %.0f px down a %d px screen, want it in the upper half", bottom, tc.height)
			}
			if os.Getenv("AGAIN_SCREENSHOTS") != "" {
				tb.do(chromedp.WaitVisible(`#storm-box:not(.stale)`))
				tb.screenshot("look")
			}
		})
	}
}

// Point 6: the storm view draws internal/sim/storm's numbers, the code of
// `again sim storm` (TestStormIsSim in package page compares the two).
func TestStormView(t *testing.T) {
	bctx, origin := startBrowser(t)
	tb := newTab(t, bctx, origin)
	waitStorm := func() {
		t.Helper()
		tb.do(chromedp.WaitVisible(`#storm-box:not(.stale)`))
	}
	tb.open(exampleQuery)
	waitStorm()
	in := map[string]string{"initial": "500ms", "multiplier": "2", "max": "30s", "retries": "8", "jitter": "full"}
	want := page.Storm(in, page.English)
	got := eval[page.StormResult](tb, `againCall('Storm', JSON.stringify({initial: '500ms', multiplier: '2', max: '30s', retries: '8', jitter: 'full'}), 'en').then(JSON.parse)`, chromedp.EvalAwaitPromise)
	if !slices.Equal(got.Attempts, want.Attempts) || !slices.Equal(got.NoJitter, want.NoJitter) || got.Text != want.Text {
		t.Errorf("the page's storm (again.wasm) is %+v, the Go code's %+v", got, want)
	}
	if got := tb.text("#storm-text"); got != want.Text {
		t.Errorf("the storm view says %q, want %q", got, want.Text)
	}
	var nonzero [2]int
	for i := range want.Shown {
		if want.Attempts[i] > 0 {
			nonzero[0]++
		}
		if want.NoJitter[i] > 0 {
			nonzero[1]++
		}
	}
	if n := eval[[]int](tb, `['rect.storm-jit', 'rect.storm-flat'].map(s => document.querySelectorAll('#storm ' + s).length)`); n[0] != nonzero[0] || n[1] != nonzero[1] {
		t.Errorf("the storm view draws %v bars, want %v (jittered, without jitter)", n, nonzero)
	}
	if got := tb.text("#storm-command"); got != want.Command {
		t.Errorf("storm command = %q, want %q", got, want.Command)
	}
	// The number of clients is an input, kept in the URL.
	tb.typeInto("clients", "1000")
	waitStorm()
	in["clients"] = "1000"
	if got, want := tb.text("#storm-text"), page.Storm(in, page.English).Text; got != want || tb.query().Get("clients") != "1000" {
		t.Errorf("with 1000 clients the storm view says %q, want %q (URL %v)", got, want, tb.query())
	}
	tb.typeInto("clients", "0")
	waitStorm()
	if got := tb.text("#clients-err"); !strings.HasPrefix(got, "Must be a whole number from 1 to") {
		t.Errorf("0 clients: error %q", got)
	}
	tb.open(exampleQuery + "&lang=ru&clients=50")
	waitStorm()
	in["clients"] = "50"
	if got, want := tb.text("#storm-text"), page.Storm(in, page.Russian).Text; got != want {
		t.Errorf("the Russian storm view says %q, want %q", got, want)
	}
}

// The shedding view draws internal/sim/outage's numbers, the code of
// `again sim outage --shed` (TestShedIsSim in package page compares the
// two): the goodput of a server that queues everything and of one that
// sheds, for the page's own policy, with the limit an input kept in the
// URL. Typing the limit runs the shedding view only, not the storm view.
func TestShedView(t *testing.T) {
	bctx, origin := startBrowser(t)
	tb := newTab(t, bctx, origin)
	waitShed := func() {
		t.Helper()
		tb.do(chromedp.WaitVisible(`#shed-box:not(.stale)`), chromedp.WaitVisible(`#storm-box:not(.stale)`))
	}
	tb.open(exampleQuery)
	waitShed()
	in := map[string]string{"initial": "500ms", "multiplier": "2", "max": "30s", "retries": "8", "jitter": "full"}
	want := page.Shed(in, page.English)
	type timed struct {
		R  page.ShedResult `json:"r"`
		Ms float64         `json:"ms"`
	}
	got := eval[timed](tb, `(async () => {
		const t0 = performance.now();
		const r = JSON.parse(await againCall('Shed', JSON.stringify({initial: '500ms', multiplier: '2', max: '30s', retries: '8', jitter: 'full'}), 'en'));
		return {r, ms: performance.now() - t0};
	})()`, chromedp.EvalAwaitPromise)
	t.Logf("the shedding view's run took %.0f ms in WebAssembly", got.Ms)
	if !slices.Equal(got.R.Demand, want.Demand) || !slices.Equal(got.R.Bare, want.Bare) || !slices.Equal(got.R.Shed, want.Shed) ||
		!slices.Equal(got.R.Shedded, want.Shedded) || got.R.Text != want.Text || got.R.Command != want.Command {
		t.Errorf("the page's shedding view (again.wasm) is %+v, the Go code's %+v", got.R, want)
	}
	// The same with an adaptive limit, whose limiter runs on every request.
	adaptive := maps.Clone(in)
	adaptive["shed"] = "adaptive"
	wantAd := page.Shed(adaptive, page.English)
	gotAd := eval[timed](tb, `(async () => {
		const t0 = performance.now();
		const r = JSON.parse(await againCall('Shed', JSON.stringify({initial: '500ms', multiplier: '2', max: '30s', retries: '8', jitter: 'full', shed: 'adaptive'}), 'en'));
		return {r, ms: performance.now() - t0};
	})()`, chromedp.EvalAwaitPromise)
	t.Logf("with an adaptive limit it took %.0f ms", gotAd.Ms)
	if !slices.Equal(gotAd.R.Shed, wantAd.Shed) || !slices.Equal(gotAd.R.Shedded, wantAd.Shedded) || gotAd.R.Text != wantAd.Text || gotAd.R.Command != wantAd.Command || !gotAd.R.Adaptive {
		t.Errorf("the page's shedding view (again.wasm) with an adaptive limit is %+v, the Go code's %+v", gotAd.R, wantAd)
	}
	if got := tb.text("#shed-text"); got != want.Text {
		t.Errorf("the shedding view says %q, want %q", got, want.Text)
	}
	if got := tb.text("#shed-command"); got != want.Command {
		t.Errorf("shedding command = %q, want %q", got, want.Command)
	}
	// One line per series, a point per second; the text describes the chart.
	points := eval[[]int](tb, `['shed-demand', 'shed-bare', 'shed-on'].map(c => {
		const l = document.querySelectorAll('#shed-chart polyline.' + c);
		return l.length === 1 ? l[0].getAttribute('points').trim().split(/\s+/).length : -l.length;
	})`)
	if n := len(want.Demand); !slices.Equal(points, []int{n, n, n}) {
		t.Errorf("the shedding view draws %v points (new requests, no shedding, shedding), want %d each", points, n)
	}
	if got := eval[string](tb, `document.getElementById('shed-chart').getAttribute('aria-describedby')`); got != "shed-text" {
		t.Errorf("the shedding chart is described by %q, want shed-text", got)
	}
	legend := eval[[]string](tb, `['demand', 'bare', 'on', 'spike'].map(k => document.getElementById('shed-key-' + k).textContent)`)
	if !slices.Equal(legend, want.Legend[:]) {
		t.Errorf("the legend says %q, want %q", legend, want.Legend)
	}
	// The limit is an input, kept in the URL; it runs the shedding view only.
	storm := eval[string](tb, `document.body.dataset.storm`)
	tb.typeInto("shed", "150")
	waitShed()
	in["shed"] = "150"
	if got, want := tb.text("#shed-text"), page.Shed(in, page.English).Text; got != want || tb.query().Get("shed") != "150" {
		t.Errorf("with a limit of 150 the shedding view says %q, want %q (URL %v)", got, want, tb.query())
	}
	if got := eval[string](tb, `document.body.dataset.storm`); got != storm {
		t.Errorf("typing the limit ran the storm view again: its inputs %q, were %q", got, storm)
	}
	// An adaptive limit, the word --shed takes: the same run and command
	// as the Go code's, with no note (the command warns only for a fixed
	// limit).
	tb.typeInto("shed", "adaptive")
	waitShed()
	in["shed"] = "adaptive"
	ad := page.Shed(in, page.English)
	if got := tb.text("#shed-text"); got != ad.Text || tb.query().Get("shed") != "adaptive" {
		t.Errorf("with an adaptive limit the shedding view says %q, want %q (URL %v)", got, ad.Text, tb.query())
	}
	if got := tb.text("#shed-command"); got != ad.Command || !strings.HasSuffix(got, "--shed adaptive") {
		t.Errorf("with an adaptive limit the command is %q, want %q", got, ad.Command)
	}
	if got := tb.text("#shed-key-on"); got != ad.Legend[2] {
		t.Errorf("with an adaptive limit the legend says %q, want %q", got, ad.Legend[2])
	}
	if eval[bool](tb, `!document.getElementById('shed-fit').hidden`) {
		t.Errorf("with an adaptive limit the view notes %q, want no note", tb.text("#shed-fit"))
	}
	// A limit that does not fit the server: the note under the view says
	// what again sim outage warns (TestShedMisfitIsSim), with the range
	// that fits; a limit that fits takes it away.
	for _, limit := range []string{"250", "100"} {
		tb.typeInto("shed", limit)
		waitShed()
		in["shed"] = limit
		want := page.Shed(in, page.English).Note
		shown := eval[bool](tb, `!document.getElementById('shed-fit').hidden`)
		if got := tb.text("#shed-fit"); shown != (want != "") || (shown && got != want) {
			t.Errorf("with a limit of %s the view notes %q (shown %v), want %q", limit, got, shown, want)
		}
	}
	if in["shed"] = "250"; page.Shed(in, page.English).Note == "" {
		t.Error("a limit of 250 fits the server, want a misfit to test the note with")
	}
	tb.typeInto("shed", "0")
	waitShed()
	if got := tb.text("#shed-err"); !strings.HasPrefix(got, "Must be a whole number from 1 to") {
		t.Errorf("a limit of 0: error %q", got)
	}
	if got := eval[bool](tb, `document.getElementById('shed-chart').hasAttribute('hidden') && document.getElementById('shed').getAttribute('aria-invalid') === 'true'`); !got {
		t.Errorf("a limit of 0: the chart is still shown, or the field not marked invalid")
	}
	tb.open(exampleQuery + "&lang=ru&shed=60")
	waitShed()
	in["shed"] = "60"
	ru := page.Shed(in, page.Russian)
	if got := tb.text("#shed-text"); got != ru.Text {
		t.Errorf("the Russian shedding view says %q, want %q", got, ru.Text)
	}
	if got := tb.text("#shed-fit"); ru.Note == "" || got != ru.Note {
		t.Errorf("the Russian shedding view notes %q for a limit of 60, want %q", got, ru.Note)
	}
	tb.open(exampleQuery + "&lang=ru&shed=adaptive")
	waitShed()
	in["shed"] = "adaptive"
	if got, want := tb.text("#shed-command"), page.Shed(in, page.Russian).Command; got != want {
		t.Errorf("the Russian page's command for shed=adaptive is %q, want %q", got, want)
	}
	if got := tb.text("#shed-err"); got != "" {
		t.Errorf("the Russian page refuses shed=adaptive: %q", got)
	}
	// The view at a phone's width and a desktop's, with the note of a
	// limit that does not fit: its x labels apart and inside the SVG, the
	// legend, the text and the note within the screen.
	for _, width := range []int64{390, 1280} {
		tb.do(chromedp.EmulateViewport(width, 900))
		tb.open(exampleQuery + "&shed=250")
		waitShed()
		if tb.text("#shed-fit") == "" {
			t.Errorf("%d px: no note for a limit of 250", width)
		}
		// The limit's hint, which a phone shows while the input has the focus.
		tb.do(chromedp.Focus(`#shed`))
		if eval[bool](tb, `document.getElementById('shed-hint').getBoundingClientRect().height === 0`) {
			t.Errorf("%d px: the limit's hint is not shown while the limit has the focus", width)
		}
		problems := eval[[]string](tb, `(() => {
			const svg = document.getElementById('shed-chart'), box = svg.getBoundingClientRect(), out = [];
			const ticks = [...svg.querySelectorAll('text.tick')];
			const row = Math.max(...ticks.map(t => +t.getAttribute('y')));
			const xs = ticks.filter(t => +t.getAttribute('y') === row).map(t => [t.textContent, t.getBoundingClientRect()]).sort((a, b) => a[1].left - b[1].left);
			if (xs.length < 2) out.push(xs.length + ' x labels');
			for (const [s, r] of xs) if (r.left < box.left - 0.5 || r.right > box.right + 0.5) out.push('the label ' + s + ' lies outside the SVG');
			for (let i = 1; i < xs.length; i++) if (xs[i][1].left < xs[i - 1][1].right) out.push('the labels ' + xs[i - 1][0] + ' and ' + xs[i][0] + ' overlap');
			for (const id of ['shed-box', 'shed-legend', 'shed-text', 'shed-fit', 'shed-hint']) {
				const r = document.getElementById(id).getBoundingClientRect();
				if (r.right > innerWidth + 0.5) out.push(id + ' ends at ' + r.right + ' px, past the screen');
			}
			return out;
		})()`)
		for _, p := range problems {
			t.Errorf("%d px: %s", width, p)
		}
		if dir := os.Getenv("AGAIN_SCREENSHOTS"); dir != "" {
			buf, err := chromedp.Run(tb.ctx, chromedp.Screenshot(`#shed-box`))
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, fmt.Sprintf("TestShedView-%d.png", width)), buf, 0o644)
			}
			if err != nil {
				t.Logf("no screenshot: %v", err)
			}
		}
	}
}
