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
			m := regexp.MustCompile(`\nlimit     ` + regexp.QuoteMeta(host) + `: (\d+) attempts refused locally, limit (\d+) at the end\n$`).FindStringSubmatch(r.Stdout)
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
		{[]string{"--repeat", "2", "--limit", "0"}, `again fetch: --limit must be a whole number from 1 to 10000 or adaptive, got "0"`},
		{[]string{"--repeat", "2", "--limit", "fast"}, `again fetch: --limit must be a whole number from 1 to 10000 or adaptive, got "fast"`},
		{[]string{"--repeat", "2", "--parallel", "0"}, `again fetch: --parallel must be a whole number from 1 to 10000, got "0"`},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			wantUsageError(t, run(t, append(append([]string{"fetch"}, tt.args...), "http://a/")...), tt.want)
		})
	}
}
