package fetch

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
)

// TestFetchDeadlineEnds checks fetch's end at the --deadline, the same
// in every way it can come: exit 124, one line naming the deadline, the
// attempts and the last outcome, and no later than the deadline by more
// than cmdutil.DeadlineOverrun (with room for a loaded machine): a
// request that gets no answer, a body that never ends, a server that
// answers 503 until the end.
func TestFetchDeadlineEnds(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hang":
			select {
			case <-r.Context().Done():
			case <-release:
			}
		case "/body":
			w.Header().Set("Content-Length", "100000")
			w.Write([]byte("abc"))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-release:
			}
		default:
			http.Error(w, "down", http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	const deadline = 600 * time.Millisecond
	for _, tc := range []struct {
		path, want string
		// or is another end the line may name: the loop starts an
		// attempt while it can still be answered in time, and on a
		// loaded machine the 503 to the last one can come after the
		// deadline cut it.
		or string
	}{
		{"/hang", "again fetch: stopped by the --deadline 600ms after 1 attempt: no answer yet to the last one\n", ""},
		{"/body", "again fetch: stopped by the --deadline 600ms after 1 attempt: the response body was still arriving\n", ""},
		{"/down", ": 503 Service Unavailable\n", " attempts: no answer yet to the last one\n"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			r := run(t, "fetch", "--deadline", deadline.String(), "-o", t.TempDir()+"/out", srv.URL+tc.path)
			took := time.Since(start)
			lines := strings.Split(strings.TrimSuffix(r.Stderr, "\n"), "\n")
			final := lines[len(lines)-1] + "\n"
			if r.Code != cmdutil.ExitDeadline || !(strings.HasSuffix(final, tc.want) || tc.or != "" && strings.HasSuffix(final, tc.or)) || !strings.HasPrefix(final, "again fetch: stopped by the --deadline 600ms after ") {
				t.Errorf("exit %d, last line %q; want %d, a line ending %q", r.Code, final, cmdutil.ExitDeadline, tc.want)
			}
			if took > deadline+cmdutil.DeadlineOverrun+slack {
				t.Errorf("fetch --deadline %v took %v, more than %v over it", deadline, took, cmdutil.DeadlineOverrun)
			}
		})
	}
}

// slack is what a loaded machine (the race detector, parallel tests)
// adds to the time of a command, beyond the margin it promises.
const slack = 400 * time.Millisecond

// TestFetchThroughOutage checks the promise of --deadline without
// --retries: a server that is down (503) for 1.2 s of a 2 s deadline is
// reached, every time, however the jitter falls: the retry loop shortens
// the last wait rather than give up a wait early. Three fetches at once.
func TestFetchThroughOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("real time: seconds")
	}
	var mu sync.Mutex
	up := map[string]time.Time{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		at, ok := up[r.URL.Path]
		if !ok {
			at = time.Now().Add(1200 * time.Millisecond)
			up[r.URL.Path] = at
		}
		mu.Unlock()
		if time.Now().Before(at) {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("up"))
	}))
	t.Cleanup(srv.Close)
	for i := range 3 {
		t.Run(string(rune('a'+i)), func(t *testing.T) {
			t.Parallel()
			r := run(t, "fetch", "--deadline", "2s", srv.URL+"/"+t.Name())
			if r.Code != 0 || r.Stdout != "up" {
				t.Errorf("fetch --deadline 2s through a 1.2 s outage: exit %d, stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
			}
		})
	}
}
