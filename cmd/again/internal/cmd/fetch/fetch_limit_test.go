package fetch

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gatedServer answers "ok" to each request once two are in flight at once
// (from then on at once), and records in most the most in flight at once.
func gatedServer(t *testing.T) (*httptest.Server, string, *atomic.Int64) {
	var in, most atomic.Int64
	release := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := in.Add(1)
		defer in.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if n >= 2 {
			once.Do(func() { close(release) }) // two at once: the workers run in parallel
		}
		<-release
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv, strings.TrimPrefix(srv.URL, "http://"), &most
}

// TestFetchRepeatParallelLimit: --parallel sends from several workers at
// once, and --limit bounds what reaches the host at once, the others
// refused locally and counted in the summary.
func TestFetchRepeatParallelLimit(t *testing.T) {
	for _, tt := range []struct {
		name      string
		args      []string
		most      int64
		summarize bool
	}{
		{"parallel", []string{"--parallel", "4"}, 4, false},
		{"limit 2", []string{"--parallel", "8", "--limit", "2"}, 2, true},
		{"adaptive", []string{"--parallel", "4", "--limit", "adaptive"}, 4, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, host, most := gatedServer(t)
			r := run(t, append(append([]string{"fetch", "--repeat", "40", "--retries", "0"}, tt.args...), srv.URL)...)
			if most.Load() < 2 || most.Load() > tt.most {
				t.Errorf("at most %d requests at once at the server, want 2 to %d", most.Load(), tt.most)
			}
			m := regexp.MustCompile(`\nlimit     ` + regexp.QuoteMeta(host) + `: (\d+) attempts refused locally, 0 queued, limit (\d+) at the end\n$`).FindStringSubmatch(r.Stdout)
			if (m != nil) != tt.summarize {
				t.Fatalf("summary:\n%s\nwant a limit line for %s: %v", r.Stdout, host, tt.summarize)
			}
			if m == nil {
				return
			}
			refused, _ := strconv.Atoi(m[1])
			if !strings.Contains(r.Stdout, "requests  40 ("+m[1]+" failed)") {
				t.Errorf("summary:\n%s\nwant the %d refused as the failed requests", r.Stdout, refused)
			}
			if refused > 0 && (r.Code != 1 || !strings.Contains(r.Stderr, "concurrency limit reached")) {
				t.Errorf("exit %d, stderr %q; want 1 and the limit's refusal as the last failure", r.Code, r.Stderr)
			}
		})
	}
}

func TestFetchLimitUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--limit", "3"}, `again fetch: --limit needs --repeat: a single request is never limited`},
		{[]string{"--parallel", "3"}, `again fetch: --parallel needs --repeat: a single request is sent once`},
		{[]string{"--repeat", "2", "--limit", "0"}, `again fetch: --limit "0": want a whole number from 1 to 10000, or adaptive`},
		{[]string{"--repeat", "2", "--limit", "fast"}, `again fetch: --limit "fast": want a whole number from 1 to 10000, or adaptive`},
		{[]string{"--repeat", "2", "--parallel", "0"}, `again fetch: --parallel "0": want a whole number from 1 to 10000`},
		{[]string{"--repeat", "2", "--limit-wait", "1s"}, `again fetch: --limit-wait needs --limit: without a limit an attempt never waits for one`},
		{[]string{"--repeat", "2", "--limit", "2", "--limit-wait", "5"}, `again fetch: --limit-wait "5": want a duration with a unit, such as 5s or 5ms (a bare number is seconds to timeout and curl, milliseconds to the calculator page)`},
		{[]string{"--repeat", "2", "--limit", "2", "--limit-wait", "-1s"}, `again fetch: --limit-wait "-1s": want a duration of 0 or more, with no limit short of 292 years (Go syntax such as 500ms, 1.5s or 2m)`},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			wantUsageError(t, run(t, append(append([]string{"fetch"}, tt.args...), "http://a/")...), tt.want)
		})
	}
}

// TestFetchLimitWait: with --limit-wait the attempts beyond the limit wait
// for a place rather than being refused, and the summary counts them as
// queued, in text and JSON; a wait that runs out is a refusal.
func TestFetchLimitWait(t *testing.T) {
	t.Run("queued", func(t *testing.T) {
		var in, most atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := in.Add(1)
			defer in.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			<-time.After(5 * time.Millisecond) // a service time, so that workers overlap
			w.Write([]byte("ok"))
		}))
		t.Cleanup(srv.Close)
		host := strings.TrimPrefix(srv.URL, "http://")
		for _, format := range []string{"text", "json"} {
			r := run(t, "fetch", "--repeat", "40", "--retries", "0", "--parallel", "8", "--limit", "2", "--limit-wait", "10s", "--format", format, srv.URL)
			if r.Code != 0 || most.Load() > 2 {
				t.Fatalf("%s: exit %d, %d at once at the server; want 0 and at most 2\nstdout:\n%s\nstderr:\n%s", format, r.Code, most.Load(), r.Stdout, r.Stderr)
			}
			var refused, queued int64
			if format == "json" {
				s := decodeSummary(t, r.Stdout)
				if len(s.Limit) != 1 || s.Limit[0].Host != host || s.Limit[0].Limit != 2 || s.Failed != 0 {
					t.Fatalf("json: limit %+v, %d failed; want one host %s at 2 and none failed", s.Limit, s.Failed, host)
				}
				refused, queued = s.Limit[0].Refused, s.Limit[0].Queued
			} else {
				m := regexp.MustCompile(`\nlimit     ` + regexp.QuoteMeta(host) + `: (\d+) attempts refused locally, (\d+) queued, limit 2 at the end\n$`).FindStringSubmatch(r.Stdout)
				if m == nil || !strings.Contains(r.Stdout, "requests  40 (0 failed)") {
					t.Fatalf("text: summary:\n%s\nwant 40 requests, none failed, and a limit line for %s", r.Stdout, host)
				}
				refused, _ = strconv.ParseInt(m[1], 10, 64)
				queued, _ = strconv.ParseInt(m[2], 10, 64)
			}
			// 8 workers under a limit of 2: most of the 40 waited.
			if refused != 0 || queued < 1 || queued > 40 {
				t.Errorf("%s: %d refused, %d queued; want 0 refused and 1 to 40 queued", format, refused, queued)
			}
		}
	})
	t.Run("runs out", func(t *testing.T) {
		// The first request holds the only place until its attempt times
		// out; the second waits 50ms for it and is refused.
		var first atomic.Bool
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if first.CompareAndSwap(false, true) {
				<-r.Context().Done()
				return
			}
			w.Write([]byte("ok"))
		}))
		t.Cleanup(srv.Close)
		host := strings.TrimPrefix(srv.URL, "http://")
		r := run(t, "fetch", "--repeat", "2", "--retries", "0", "--parallel", "2", "--limit", "1", "--limit-wait", "50ms", "--attempt-timeout", "2s", srv.URL)
		if !strings.Contains(r.Stdout, "requests  2 (2 failed)") || !strings.Contains(r.Stdout, "limit     "+host+": 1 attempts refused locally, 0 queued, limit 1 at the end\n") {
			t.Errorf("summary:\n%s\nwant both failed: one timed out, one refused after its wait", r.Stdout)
		}
	})
}
