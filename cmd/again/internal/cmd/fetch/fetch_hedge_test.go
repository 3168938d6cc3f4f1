package fetch

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
	"go.uber.org/goleak"
)

// slowFirst is a loopback server that answers every request at once with
// its number, but the first, which waits until its client goes away.
func slowFirst(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		if i == 1 {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Second):
			}
		}
		fmt.Fprintf(w, "answer %d\n", i)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestFetchHedgeAfter(t *testing.T) {
	srv, n := slowFirst(t)
	r := run(t, "fetch", "-v", "--hedge-after", "20ms", srv.URL)
	if r.Code != 0 || r.Stdout != "answer 2\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want the hedge's answer", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{"again fetch: attempt 1: sending hedge 1 (no answer after ", "again fetch: attempt 1 answered by hedge 1\n"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("-v stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
	if n.Load() != 2 {
		t.Errorf("server got %d requests; want 2", n.Load())
	}
}

// Only what may run twice at once is hedged: a safe method, or any method
// with an Idempotency-Key. A POST without one is never hedged (nor
// retried); a PUT or DELETE without one is retried but not hedged, since
// its hedge would run beside a copy that may have succeeded (a DELETE's
// would answer 404). An explicit --idempotency-key auto, or a key, lets
// them be hedged.
func TestFetchHedgeFollowsRetryRules(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		requests int32
	}{
		{"GET", nil, 2},
		{"POST without a key", []string{"--idempotency-key", "off", "-d", "x"}, 1},
		{"POST with its automatic key", []string{"-d", "x"}, 2},
		{"PUT without a key", []string{"-X", "PUT", "-d", "x"}, 1},
		{"DELETE without a key", []string{"-X", "DELETE"}, 1},
		{"PUT with --idempotency-key auto", []string{"-X", "PUT", "-d", "x", "--idempotency-key", "auto"}, 2},
		{"DELETE with --idempotency-key auto", []string{"-X", "DELETE", "--idempotency-key", "auto"}, 2},
		{"DELETE with a key", []string{"-X", "DELETE", "-H", "Idempotency-Key: k1"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int32
			second := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) == 2 {
					close(second)
				}
				// Answer when a hedge arrives, or after 300 ms: long past the
				// delay, so that a hedge would have been sent.
				select {
				case <-second:
				case <-time.After(300 * time.Millisecond):
				}
				fmt.Fprint(w, "ok")
			}))
			defer srv.Close()
			r := run(t, append(append([]string{"fetch", "--hedge-after", "10ms"}, tt.args...), srv.URL)...)
			if r.Code != 0 || n.Load() != tt.requests {
				t.Errorf("exit %d, %d requests; want 0, %d (stderr %q)", r.Code, n.Load(), tt.requests, r.Stderr)
			}
		})
	}
}

// The default hedge budget bounds the hedges of --repeat: 10 % of the
// requests (and a burst of 4), where --max-hedges 10 after 1 ms would
// hedge every request ten times; the summary says how many it denied.
// --hedge-budget off lifts it.
func TestFetchHedgeBudget(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // every copy is slower than the delay
		case <-time.After(20 * time.Millisecond):
		case <-r.Context().Done():
		}
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	sent := regexp.MustCompile(`hedges    (\d+) launched \([^)]*\), \d+ won(, (\d+) denied by the budget)?\n$`)
	r := run(t, "fetch", "--repeat", "20", "--hedge-after", "1ms", "--max-hedges", "10", srv.URL)
	m := sent.FindStringSubmatch(r.Stdout)
	if r.Code != 0 || m == nil || m[3] == "" {
		t.Fatalf("exit %d, stdout %q; want a summary with the hedges denied", r.Code, r.Stdout)
	}
	// 4 of the burst, and 0.1 a success: at most 6 of 200 asked for.
	if n, _ := strconv.Atoi(m[1]); n > 6 {
		t.Errorf("%d hedges launched; want at most 6 under the default budget", n)
	}
	if d, _ := strconv.Atoi(m[3]); d == 0 {
		t.Errorf("0 hedges denied; want the budget to have denied some")
	}
	r = run(t, "fetch", "--repeat", "2", "--hedge-after", "1ms", "--max-hedges", "3", "--hedge-budget", "off", srv.URL)
	m = sent.FindStringSubmatch(r.Stdout)
	if r.Code != 0 || m == nil || m[3] != "" || m[1] != "6" {
		t.Errorf("--hedge-budget off: exit %d, stdout %q; want 6 hedges, none denied, no budget named", r.Code, r.Stdout)
	}
}

// A hedge whose body cannot be had (the --data @FILE changed while the
// first copy was in flight) is not sent, and the first copy, which
// succeeds, is the answer: it once failed the fetch with "GetBody".
func TestFetchHedgeBodyChanged(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(data, []byte("x=1"), 0o600); err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.ReadAll(r.Body)
		os.WriteFile(data, []byte("x=2, changed in place"), 0o600)
		select { // past the hedge delay
		case <-time.After(300 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, "first")
	}))
	defer srv.Close()
	r := run(t, "fetch", "-X", "POST", "-H", "Idempotency-Key: k", "-d", "@"+data, "--hedge-after", "50ms", srv.URL)
	if r.Code != 0 || r.Stdout != "first" || n.Load() != 1 {
		t.Errorf("exit %d, stdout %q, %d requests, stderr %q; want 0, the first copy's answer, no hedge", r.Code, r.Stdout, n.Load(), r.Stderr)
	}
}

func TestFetchRepeatSummary(t *testing.T) {
	srv, n := slowFirst(t)
	// A delay long enough that only the stalled first request is hedged,
	// even on a busy machine.
	r := run(t, "fetch", "--repeat", "5", "--hedge-after", "300ms", "--max-hedges", "2", srv.URL)
	if r.Code != 0 {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
	want := regexp.MustCompile(`^requests  5 \(0 failed\)\nlatency   p50 \S+  p90 \S+  p99 \S+  max \S+\nhedges    1 launched \(20\.0 % of requests\), 1 won, 0 denied by the budget\n$`)
	if !want.MatchString(r.Stdout) {
		t.Errorf("summary:\n%s\nwant it to match %s", r.Stdout, want)
	}
	if n.Load() != 6 {
		t.Errorf("server got %d requests; want 6 (5 and one hedge)", n.Load())
	}
}

// TestFetchRepeatHedgesLaunched: the summary's hedges are those launched,
// the most the server can have got: a hedge launched as its request
// answers is called off, often before it reaches the server. With every
// copy answering about when the next is due, a loopback server counting
// requests got fewer than the hedges launched, where the summary once
// called them sent (5 sent, 4 received).
func TestFetchRepeatHedgesLaunched(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		select { // about the hedge delay: hedges race their requests' answers
		case <-time.After(2 * time.Millisecond):
		case <-r.Context().Done():
		}
	}))
	r := run(t, "fetch", "--repeat", "40", "--hedge-after", "2ms", "--hedge-budget", "off", srv.URL)
	srv.Close() // waits for the handlers: every request is counted
	m := regexp.MustCompile(`(?m)^hedges    (\d+) launched \(\d+\.\d % of requests\), (\d+) won$`).FindStringSubmatch(r.Stdout)
	if r.Code != 0 || m == nil {
		t.Fatalf("exit %d, stdout %q; want a summary of the hedges launched", r.Code, r.Stdout)
	}
	launched, _ := strconv.Atoi(m[1])
	if extra := int(n.Load()) - 40; extra > launched || extra < 0 {
		t.Errorf("the server got %d hedges, the summary says %d launched: it can have got at most those launched", extra, launched)
	}
}

func TestFetchRepeatCountsFailures(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	r := run(t, "fetch", "--repeat", "3", srv.URL)
	if r.Code != 1 || !strings.HasPrefix(r.Stdout, "requests  3 (3 failed)\nlatency   p50 -") || !strings.Contains(r.Stderr, "3 of 3 requests failed (the last: server answered 404 Not Found)") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1, the summary and the failures", r.Code, r.Stdout, r.Stderr)
	}
}

func TestFetchHedgeUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--hedge-after", "p100"}, `again fetch: --hedge-after "p100": want a duration such as 50ms or a percentile from p1 to p99.9`},
		{[]string{"--hedge-after", "pfast"}, `again fetch: --hedge-after "pfast": want a duration such as 50ms or a percentile from p1 to p99.9`},
		// Each refusal says what is accepted: 0 is not ("from 0" was said).
		{[]string{"--hedge-after", "0s"}, `again fetch: --hedge-after "0s": want a duration above 0 with a unit (such as 50ms or 1.5s) or a percentile from p1 to p99.9`},
		{[]string{"--hedge-after", "-1s"}, `again fetch: --hedge-after "-1s": want a duration above 0 with a unit (such as 50ms or 1.5s) or a percentile from p1 to p99.9`},
		{[]string{"--hedge-after", "10ms", "--hedge-budget", "0"}, `again fetch: --hedge-budget "0": want a ratio from 0.001 to 1, or off`},
		{[]string{"--hedge-budget", "0.2"}, `again fetch: --hedge-budget needs --hedge-after`},
		{[]string{"--hedge-after", "20"}, `again fetch: --hedge-after "20": want a duration with a unit, such as 20s or 20ms (a bare number is seconds to timeout and curl, milliseconds to the calculator page)`},
		{[]string{"--hedge-after", "10ms", "--max-hedges", "0"}, `again fetch: --max-hedges "0": want a whole number from 1 to 10`},
		{[]string{"--max-hedges", "2"}, `again fetch: --max-hedges needs --hedge-after`},
		{[]string{"--hedge-warmup", "5"}, `again fetch: --hedge-warmup needs --hedge-after`},
		{[]string{"--hedge-after", "10ms", "--hedge-warmup", "5"}, `again fetch: --hedge-warmup needs --hedge-after pNN; a fixed delay has no warm-up`},
		{[]string{"--hedge-after", "p95", "--hedge-warmup", "0"}, `again fetch: --hedge-warmup "0": want a whole number from 1 to 200`},
		{[]string{"--repeat", "0"}, `again fetch: --repeat "0": want a whole number from 1 to 1000000`},
		{[]string{"--repeat", "2", "-o", "out"}, `again fetch: --repeat prints a summary instead of the bodies: it cannot be combined with --output`},
		{[]string{"--repeat", "2", "-i"}, `again fetch: --repeat prints a summary instead of the bodies: it cannot be combined with --include`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			wantUsageError(t, run(t, append(append([]string{"fetch"}, tt.args...), "http://a/")...), tt.want)
		})
	}
}

// --repeat reports an error as a single fetch does: the URL's password
// and query values not in it, a signal as "stopped" with 128+N.
func TestFetchRepeatStopped(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the servers close
	// hanging is a server that never answers; arrived tells of a request.
	hanging := func(t *testing.T) (target string, arrived chan struct{}) {
		arrived = make(chan struct{}, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case arrived <- struct{}{}:
			default:
			}
			<-r.Context().Done()
		}))
		t.Cleanup(srv.Close)
		return "http://u:SECRETPW@" + srv.Listener.Addr().String() + "/h?mode=hang&token=SECRETTOK", arrived
	}
	t.Run("deadline", func(t *testing.T) {
		target, _ := hanging(t)
		single := run(t, "fetch", "--deadline", "50ms", target)
		r := run(t, "fetch", "--repeat", "3", "--deadline", "50ms", target)
		if r.Code != cmdutil.ExitDeadline || r.Stderr != single.Stderr || strings.Contains(r.Stderr, "SECRET") {
			t.Errorf("exit %d, stderr %q; want %d and what a single fetch says, %q", r.Code, r.Stderr, cmdutil.ExitDeadline, single.Stderr)
		}
	})
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(cmdutil.SignalName(sig), func(t *testing.T) {
			target, arrived := hanging(t)
			wantStoppedBy(t, t.Context(), []string{"fetch", "--repeat", "3", target}, arrived, sig)
		})
	}
}

// The failures --repeat counts are told as a single fetch tells them.
func TestFetchRepeatFailureWords(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the servers close
	srv := newFetchServer(t, map[string][]answer{"/hang": {{hang: true}}})
	args := []string{"fetch", "--retries", "0", "--attempt-timeout", "20ms", srv.URL + "/hang?token=SECRET"}
	single := run(t, args...)
	r := run(t, append([]string{"fetch", "--repeat", "2"}, args[1:]...)...)
	want := "again fetch: 2 of 2 requests failed (the last: " + strings.TrimPrefix(strings.TrimSuffix(single.Stderr, "\n"), "again fetch: ") + ")\n"
	if r.Code != 1 || r.Stderr != want || !strings.Contains(want, "timed out after 20ms") {
		t.Errorf("exit %d, stderr %q; want 1, %q", r.Code, r.Stderr, want)
	}
}

// trickling is a loopback server that sends its headers at once, then its
// 100-byte body one byte per 20 ms tick: 2 s in all, unless the client
// goes away.
func trickling(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for range 100 {
			select {
			case <-tick.C:
			case <-r.Context().Done():
				return
			}
			w.Write([]byte("x"))
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// --attempt-timeout bounds the response body with --hedge-after and --repeat too,
// as without them: the winner's body and each repeated request's are
// read within the attempt's limit.
func TestFetchTimeoutCoversBodyHedgedRepeated(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the servers close
	url := trickling(t)
	tests := []struct {
		name   string
		args   []string
		stdout string
		stderr string
	}{
		// As without --hedge-after (the winner's body is read within its
		// attempt): the output, stdout, cannot start over.
		{"--hedge-after", []string{"--hedge-after", "50ms", "--retries", "0"}, "",
			"again fetch: reading the response body: attempt timed out after 200ms (not retried: the output cannot start over)\n"},
		{"--repeat", []string{"--repeat", "1"}, "",
			"again fetch: 1 of 1 requests failed (the last: reading the response body: timed out after --attempt-timeout 200ms)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, append(append([]string{"fetch", "--attempt-timeout", "200ms"}, tt.args...), url)...)
			if r.Code != 1 || r.Stderr != tt.stderr {
				t.Errorf("exit %d, stderr %q; want 1, %q", r.Code, r.Stderr, tt.stderr)
			}
		})
	}
}

// A body from stdin of up to 1 MiB is kept in memory: it is hedged (and
// repeated) like any other; a larger one, streamed once, is neither, and
// the help says so.
func TestFetchHedgeStdin(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the servers close
	var n atomic.Int32
	bodies := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read first: the server sees its client leave only then.
		b, _ := io.ReadAll(r.Body)
		bodies <- string(b)
		if n.Add(1) == 1 {
			<-r.Context().Done() // the first copy, until the hedge has won
			return
		}
		fmt.Fprint(w, "hedge")
	}))
	t.Cleanup(srv.Close)
	var out, errOut strings.Builder
	code := againRun(t.Context(), []string{"fetch", "-X", "PUT", "-d", "@-", "--idempotency-key", "auto", "--hedge-after", "20ms", srv.URL}, strings.NewReader("small"), &out, &errOut)
	if code != 0 || out.String() != "hedge" || n.Load() != 2 {
		t.Fatalf("exit %d, stdout %q, %d requests, stderr %q; want the hedge's answer", code, out.String(), n.Load(), errOut.String())
	}
	for range 2 {
		if b := <-bodies; b != "small" {
			t.Errorf("a copy sent %q, want all of stdin, %q", b, "small")
		}
	}
	out.Reset()
	errOut.Reset()
	code = againRun(t.Context(), []string{"fetch", "-X", "PUT", "-d", "@-", "--repeat", "2", srv.URL}, strings.NewReader(strings.Repeat("s", 1<<20+1)), &out, &errOut)
	want := "again fetch: --repeat needs a request body that can be sent again; one from stdin over 1 MiB is streamed once (send a file with -d @FILE instead)\n"
	if code != cmdutil.ExitUsage || errOut.String() != want {
		t.Errorf("--repeat with a large stdin: exit %d, stderr %q; want 2, %q", code, errOut.String(), want)
	}
	help := run(t, "fetch", "--help").Stdout + cmdtest.Guide(t) // the help, or the guide it points to
	for _, want := range []string{
		"stdin over 1 MiB, streamed once, is neither retried nor hedged",
		"@- for stdin (retried and hedged only if at most 1 MiB)",
		"up to 1 MiB it is sent with its length and can be retried and hedged,",
	} {
		if !strings.Contains(strings.Join(strings.Fields(help), " "), want) {
			t.Errorf("again fetch --help lacks %q", want)
		}
	}
	if strings.Contains(run(t, "fetch", "--help").Stdout, "never hedged") {
		t.Errorf("again fetch --help still says a body from stdin is never hedged")
	}
}
