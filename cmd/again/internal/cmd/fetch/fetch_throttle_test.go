package fetch

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// TestFetchRepeatThrottle: a server that refuses everything with 503 gets
// only the first few of --repeat's requests once --throttle sees it, and
// the summary says how many were rejected locally.
func TestFetchRepeatThrottle(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"bare", []string{"--throttle"}},
		{"K", []string{"--throttle=1.5"}},
		// A number after the bare flag is its value, not the URL.
		{"K spaced", []string{"--throttle", "1.5"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hits.Store(0)
			r := run(t, append(append([]string{"fetch", "--repeat", "100", "--retries", "0"}, tt.args...), srv.URL)...)
			// The last is rejected locally or is one of the probes that
			// a dead host still gets.
			if r.Code != 1 || !strings.Contains(r.Stderr, "100 of 100 requests failed (the last: ") {
				t.Fatalf("exit %d, stderr %q; want every request failed", r.Code, r.Stderr)
			}
			m := regexp.MustCompile(`\nthrottle  ` + regexp.QuoteMeta(host) + `: (\d+) of 100 attempts rejected locally, p 0\.\d\d now\n$`).FindStringSubmatch(r.Stdout)
			if m == nil {
				t.Fatalf("summary:\n%s\nwant a throttle line for %s", r.Stdout, host)
			}
			// About √(2×100) probes reach a host that accepts nothing.
			if sent := hits.Load(); sent > 35 || m[1] != strconv.FormatInt(100-sent, 10) {
				t.Errorf("server got %d requests, the summary says %s rejected; want few sent, the rest rejected", sent, m[1])
			}
		})
	}
}

func TestFetchThrottleUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--throttle"}, `again fetch: --throttle needs --repeat: a single request is never throttled`},
		{[]string{"--repeat", "2", "--throttle=0.5"}, `again fetch: --throttle "0.5": want a finite number >= 1`},
		{[]string{"--repeat", "2", "--throttle=x"}, `again fetch: --throttle "x": want a finite number >= 1`},
		{[]string{"--repeat", "2", "--throttle", "0.5"}, `again fetch: --throttle "0.5": want a finite number >= 1`},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			wantUsageError(t, run(t, append(append([]string{"fetch"}, tt.args...), "http://a/")...), tt.want)
		})
	}
}
