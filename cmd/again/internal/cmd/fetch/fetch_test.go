package fetch

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
	"go.uber.org/goleak"
)

// answer is one scripted response of the fetch test server.
type answer struct {
	status int // 0 means 200
	header map[string]string
	body   string
	reset  bool // drop the connection before answering
	hang   bool // never answer (slow headers) until the client leaves
	cut    bool // promise a longer body than is sent, then close
	stall  bool // send the headers and the body, then nothing until the client leaves
}

// received is a request as the fetch test server saw it.
type received struct {
	method, body  string
	header        http.Header
	contentLength int64    // -1 when unknown
	encoding      []string // Transfer-Encoding: ["chunked"] for a body of unknown length
	url           string   // the request URI
}

// fetchServer answers each path's requests with its script, repeating the
// last answer, and records what it received.
type fetchServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen map[string][]received
}

func newFetchServer(t *testing.T, scripts map[string][]answer) *fetchServer {
	t.Helper()
	s := &fetchServer{seen: map[string][]received{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.seen[r.URL.Path] = append(s.seen[r.URL.Path], received{r.Method, string(body), r.Header.Clone(), r.ContentLength, r.TransferEncoding, r.RequestURI})
		script := scripts[r.URL.Path]
		a := answer{}
		if len(script) > 0 {
			a = script[min(len(s.seen[r.URL.Path]), len(script))-1]
		}
		s.mu.Unlock()
		if a.hang {
			<-r.Context().Done()
			return
		}
		if a.reset {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
			return
		}
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		if a.cut || a.stall {
			w.Header().Set("Content-Length", strconv.Itoa(len(a.body)+100))
		}
		w.WriteHeader(max(a.status, 200))
		io.WriteString(w, a.body)
		if a.stall {
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		if a.cut {
			w.(http.Flusher).Flush()
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *fetchServer) requests(path string) []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.seen[path]...)
}

// fast makes retries immediate, so that no test waits.
var fast = []string{"fetch", "--initial", "0", "--jitter", "none"}

func TestFetch(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the servers close
	srv := newFetchServer(t, map[string][]answer{
		"/ok":        {{body: "hello\n"}},
		"/flaky":     {{reset: true}, {status: 503, body: "busy"}, {body: "done\n"}},
		"/ra0":       {{status: 429, header: map[string]string{"Retry-After": "0"}}, {body: "done\n"}},
		"/ra0-again": {{status: 429, header: map[string]string{"Retry-After": "0"}}, {body: "done\n"}},
		"/ratelimit": {{status: 429, header: map[string]string{"RateLimit": `"default";r=0;t=0`}}, {body: "done\n"}},
		"/xreset":    {{status: 429, header: map[string]string{"X-RateLimit-Reset": "0"}}, {body: "done\n"}},
		"/reset":     {{status: 503, header: map[string]string{"RateLimit-Reset": "120", "RateLimit-Remaining": "0"}, body: "quota"}},
		"/down":      {{status: 503, body: "still busy"}},
		"/missing":   {{status: 404, body: "no such thing"}},
		"/moved":     {{status: 302, header: map[string]string{"Location": "/ok"}}},
		"/hop":       {{status: 503}, {status: 302, header: map[string]string{"Location": "/missing"}}},
		"/long":      {{status: 503, header: map[string]string{"Retry-After": "120"}, body: "come back later"}},
		"/later":     {{status: 429, header: map[string]string{"Retry-After": "30"}, body: "later"}},
		"/hang":      {{hang: true}},
		"/waking":    {{status: 503}, {status: 503}, {status: 503}, {status: 503}, {status: 503}, {body: "up\n"}},
		"/classes":   {{reset: true}, {status: 503}, {status: 502}, {body: "done\n"}},
	})
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string // "…" stands for any text within a line
	}{
		{"success", []string{"/ok"}, 0, "hello\n", ""},
		{"503 and a reset, then success", []string{"/flaky"}, 0, "done\n",
			"again fetch: attempt 1/4 failed (…); retrying in 0s\n" +
				"again fetch: attempt 2/4 failed (503 Service Unavailable); retrying in 0s\n"},
		{"Retry-After sets the wait", []string{"/ra0"}, 0, "done\n",
			"again fetch: attempt 1/4 failed (429 Too Many Requests); retrying in 0s as Retry-After: 0 asks\n"},
		{"a hint shorter than --initial waits --initial", []string{"--initial", "20ms", "/ra0-again"}, 0, "done\n",
			"again fetch: attempt 1/4 failed (429 Too Many Requests); retrying in 20ms (Retry-After: 0 asks for 0 ms, less than the first delay)\n"},
		{"RateLimit sets the wait", []string{"/ratelimit"}, 0, "done\n",
			"again fetch: attempt 1/4 failed (429 Too Many Requests); retrying in 0s as RateLimit: \"default\";r=0;t=0 asks\n"},
		{"X-RateLimit-Reset sets the wait", []string{"/xreset"}, 0, "done\n",
			"again fetch: attempt 1/4 failed (429 Too Many Requests); retrying in 0s as X-RateLimit-Reset: 0 asks\n"},
		{"RateLimit-Reset above --max-retry-after", []string{"/reset"}, 1, "quota",
			"again fetch: attempt 1/4 failed (503 Service Unavailable); giving up: RateLimit-Reset: 120 asks for 2 min, more than --max-retry-after 1m\n" +
				"again fetch: server answered 503 Service Unavailable after 1 attempt\n"},
		{"retries exhausted", []string{"--retries", "2", "/down"}, 1, "still busy",
			"again fetch: attempt 1/3 failed (503 Service Unavailable); retrying in 0s\n" +
				"again fetch: attempt 2/3 failed (503 Service Unavailable); retrying in 0s\n" +
				"again fetch: server answered 503 Service Unavailable after 3 attempts\n"},
		{"404 is final", []string{"/missing"}, 1, "no such thing",
			"again fetch: server answered 404 Not Found after 1 attempt\n"},
		{"redirect not followed", []string{"/moved"}, 0, "", ""},
		{"redirect followed with -L", []string{"-L", "/moved"}, 0, "hello\n", ""},
		{"attempts counted per hop with -L", []string{"-L", "/hop"}, 1, "no such thing",
			"again fetch: attempt 1/4 failed (503 Service Unavailable); retrying in 0s\n" +
				"again fetch: server answered 404 Not Found after 1 attempt\n"},
		{"Retry-After above --max-retry-after", []string{"/long"}, 1, "come back later",
			"again fetch: attempt 1/4 failed (503 Service Unavailable); giving up: Retry-After: 120 asks for 2 min, more than --max-retry-after 1m\n" +
				"again fetch: server answered 503 Service Unavailable after 1 attempt\n"},
		{"Retry-After above a given --max-retry-after", []string{"--max-retry-after", "10s", "/later"}, 1, "later",
			"again fetch: attempt 1/4 failed (429 Too Many Requests); giving up: Retry-After: 30 asks for 30 s, more than --max-retry-after 10s\n" +
				"again fetch: server answered 429 Too Many Requests after 1 attempt\n"},
		{"--deadline without --retries retries until the deadline", []string{"--deadline", "1m", "/waking"}, 0, "up\n",
			"again fetch: attempt 1 failed (503 Service Unavailable); retrying in 0s\n" +
				"again fetch: attempt 2 failed (503 Service Unavailable); retrying in 0s\n" +
				"again fetch: attempt 3 failed (503 Service Unavailable); retrying in 0s\n" +
				"again fetch: attempt 4 failed (503 Service Unavailable); retrying in 0s\n" +
				"again fetch: attempt 5 failed (503 Service Unavailable); retrying in 0s\n"},
		{"--retries and --deadline: whichever comes first", []string{"--retries", "1", "--deadline", "1m", "/down"}, 1, "still busy",
			"again fetch: attempt 1/2 failed (503 Service Unavailable); retrying in 0s\n" +
				"again fetch: server answered 503 Service Unavailable after 2 attempts\n"},
		{"Retry-After past the deadline", []string{"--deadline", "10s", "/later"}, 124, "later",
			"again fetch: attempt 1 failed (429 Too Many Requests); giving up: Retry-After: 30 asks for 30 s, past the --deadline\n" +
				"again fetch: stopped by the --deadline 10s after 1 attempt: 429 Too Many Requests\n"},
		{"--attempt-timeout ends each attempt", []string{"--attempt-timeout", "10ms", "--retries", "1", "/hang"}, 1, "",
			"again fetch: attempt 1/2 failed (timed out after 10ms); retrying in 0s\n" +
				"again fetch: retries exhausted after 2 attempts in …: timed out after 10ms\n"},
		{"--on-overload and --on-transient: a schedule each", []string{"--on-overload", "initial=5ms,jitter=none", "--on-transient", "initial=2ms,jitter=none", "/classes"}, 0, "done\n",
			"again fetch: attempt 1/4 failed (…); retrying in 2ms\n" +
				"again fetch: attempt 2/4 failed (503 Service Unavailable); retrying in 5ms\n" +
				"again fetch: attempt 3/4 failed (502 Bad Gateway); retrying in 4ms\n"},
		{"--on-overload with an unknown key", []string{"--on-overload", "speed=1", "/ok"}, 2, "",
			"again fetch: --on-overload \"speed=1\": want key=value pairs with keys initial, multiplier, max, retries, jitter, cost\n"},
		{"--on-overload with a cost of 0", []string{"--on-overload", "initial=1s,cost=0", "/ok"}, 2, "",
			"again fetch: --on-overload cost \"0\": want a number from 0.001 up (the budget counts thousandths of a token)\n"},
		{"--on-transient with a bad value", []string{"--on-transient", "multiplier=0.5", "/ok"}, 2, "",
			"again fetch: --on-transient multiplier \"0.5\": want a finite number >= 1\n"},
		{"--retry-on none", []string{"--retry-on", "none", "/down"}, 1, "still busy",
			"again fetch: server answered 503 Service Unavailable after 1 attempt\n"},
		{"--retry-on 404", []string{"--retry-on", "404", "--retries", "1", "/missing"}, 1, "no such thing",
			"again fetch: attempt 1/2 failed (404 Not Found); retrying in 0s\n" +
				"again fetch: server answered 404 Not Found after 2 attempts\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := withArgs(fast, tt.args[:len(tt.args)-1]...)
			args = append(args, srv.URL+tt.args[len(tt.args)-1])
			r := run(t, args...)
			pattern := strings.ReplaceAll(regexp.QuoteMeta(tt.wantStderr), "…", "[^\n]+")
			if r.Code != tt.wantCode || r.Stdout != tt.wantStdout || !regexp.MustCompile("^"+pattern+"$").MatchString(r.Stderr) {
				t.Errorf("again %s:\nexit %d, stdout %q, stderr:\n%s\nwant exit %d, stdout %q, stderr:\n%s",
					strings.Join(args, " "), r.Code, r.Stdout, r.Stderr, tt.wantCode, tt.wantStdout, tt.wantStderr)
			}
		})
	}
}

func TestFetchRequest(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the servers close
	srv := newFetchServer(t, map[string][]answer{"/": {{status: 503}, {status: 201, header: map[string]string{"X-Reply": "yes"}, body: "made"}}})
	dir := t.TempDir()
	data := filepath.Join(dir, "order.json")
	if err := os.WriteFile(data, []byte(`{"n":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       []string
		wantMethod string
		wantBody   string
		wantKey    string // "auto" for a generated key, "" for none
	}{
		{"GET", nil, "GET", "", ""},
		{"data string makes a POST with a key", []string{"-d", "a=1"}, "POST", "a=1", "auto"},
		{"data file", []string{"-d", "@" + data}, "POST", `{"n":1}`, "auto"},
		{"data-raw keeps the @", []string{"--data-raw", "@literal"}, "POST", "@literal", "auto"},
		{"PUT with data", []string{"-X", "PUT", "-d", "x"}, "PUT", "x", ""},
		{"PATCH with a given key", []string{"-X", "PATCH", "-d", "x", "--idempotency-key", "k-42"}, "PATCH", "x", "k-42"},
		{"key from a header", []string{"-d", "x", "-H", "Idempotency-Key: h-7"}, "POST", "x", "h-7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := "/" + strings.ReplaceAll(tt.name, " ", "-")
			srv := newFetchServer(t, map[string][]answer{path: {{status: 503}, {body: "ok"}}})
			r := run(t, append(withArgs(fast, tt.args...), "-H", "X-Trace: t1", srv.URL+path)...)
			if r.Code != 0 || r.Stdout != "ok" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 0 and ok", r.Code, r.Stdout, r.Stderr)
			}
			reqs := srv.requests(path)
			if len(reqs) != 2 {
				t.Fatalf("server saw %d attempts, want 2", len(reqs))
			}
			for i, req := range reqs {
				if req.method != tt.wantMethod || req.body != tt.wantBody || req.header.Get("X-Trace") != "t1" {
					t.Errorf("attempt %d: %s %q X-Trace %q; want %s %q t1", i+1, req.method, req.body, req.header.Get("X-Trace"), tt.wantMethod, tt.wantBody)
				}
			}
			k1, k2 := reqs[0].header.Get("Idempotency-Key"), reqs[1].header.Get("Idempotency-Key")
			if k1 != k2 || (tt.wantKey == "auto" && len(k1) != 36) || (tt.wantKey != "auto" && k1 != tt.wantKey) {
				t.Errorf("Idempotency-Key %q then %q, want %s on both", k1, k2, tt.wantKey)
			}
		})
	}
	t.Run("include and output", func(t *testing.T) {
		out := filepath.Join(dir, "out")
		r := run(t, append(withArgs(fast, "-i", "-o", out), srv.URL+"/")...)
		if r.Code != 0 || r.Stdout != "" {
			t.Fatalf("exit %d, stdout %q, stderr %q; want 0 and nothing on stdout", r.Code, r.Stdout, r.Stderr)
		}
		got, _ := os.ReadFile(out)
		if !strings.HasPrefix(string(got), "HTTP/1.1 201 Created\r\n") || !strings.Contains(string(got), "X-Reply: yes\r\n") ||
			!strings.HasSuffix(string(got), "\r\n\r\nmade") {
			t.Errorf("output file:\n%s\nwant the status line, the headers and the final body only", got)
		}
	})
}

func TestFetchStdin(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the servers close
	big := strings.Repeat("s", 1<<20+1)
	tests := []struct {
		name, stdin  string
		wantAttempts int
		wantCode     int
	}{
		{"small stdin is buffered and replayed", "from stdin", 2, 0},
		{"stdin over 1 MiB is sent once", big, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFetchServer(t, map[string][]answer{"/": {{status: 503}, {body: "ok"}}})
			var out, errOut strings.Builder
			code := againRun(t.Context(), append(withArgs(fast, "-X", "PUT", "-d", "@-"), srv.URL+"/"), strings.NewReader(tt.stdin), &out, &errOut)
			reqs := srv.requests("/")
			if code != tt.wantCode || len(reqs) != tt.wantAttempts {
				t.Fatalf("exit %d after %d attempts, want %d after %d; stderr:\n%s", code, len(reqs), tt.wantCode, tt.wantAttempts, errOut.String())
			}
			if tt.wantAttempts == 1 && !strings.Contains(errOut.String(), "standard input was more than 1 MiB") {
				t.Errorf("stderr does not say why the request was not retried:\n%s", errOut.String())
			}
			for i, r := range reqs {
				if r.body != tt.stdin {
					t.Errorf("attempt %d: body of %d bytes, want all %d of stdin", i+1, len(r.body), len(tt.stdin))
				}
			}
		})
	}
}

func TestFetchLargeDataFile(t *testing.T) {
	// A file is read anew by each attempt rather than buffered, so one
	// larger than the 1 MiB the transport would buffer is still retried.
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the servers close
	data := filepath.Join(t.TempDir(), "big")
	big := strings.Repeat("f", 1<<20+1)
	if err := os.WriteFile(data, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := newFetchServer(t, map[string][]answer{"/": {{status: 503}, {body: "ok"}}})
	r := run(t, append(withArgs(fast, "-X", "PUT", "-d", "@"+data), srv.URL+"/")...)
	reqs := srv.requests("/")
	if r.Code != 0 || len(reqs) != 2 {
		t.Fatalf("exit %d after %d attempts, want 0 after 2; stderr:\n%s", r.Code, len(reqs), r.Stderr)
	}
	for i, req := range reqs {
		if req.body != big {
			t.Errorf("attempt %d: body of %d bytes, want all %d of the file", i+1, len(req.body), len(big))
		}
	}
}

func TestFetchNoKeyNoRetry(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the servers close
	srv := newFetchServer(t, map[string][]answer{"/": {{status: 503, body: "busy"}, {body: "ok"}}})
	r := run(t, append(withArgs(fast, "-d", "x", "--idempotency-key", "off"), srv.URL+"/")...)
	want := "again fetch: attempt 1/4 failed (503 Service Unavailable); not retried: POST without Idempotency-Key may have reached the server\n" +
		"again fetch: server answered 503 Service Unavailable after 1 attempt\n"
	if r.Code != 1 || r.Stdout != "busy" || r.Stderr != want {
		t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 1, %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr, "busy", want)
	}
	if n := len(srv.requests("/")); n != 1 {
		t.Errorf("server saw %d attempts, want 1", n)
	}
}

func TestFetchNetworkFailure(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the servers close
	addr := closedAddr(t)
	r := run(t, append(withArgs(fast, "--retries", "1"), "http://user:secret@"+addr+"/x?token=secret")...)
	lines := strings.Split(strings.TrimSuffix(r.Stderr, "\n"), "\n")
	if r.Code != 1 || r.Stdout != "" || len(lines) != 2 {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant exit 1, nothing on stdout, a retry line and an error line", r.Code, r.Stdout, r.Stderr)
	}
	if !strings.HasPrefix(lines[0], "again fetch: attempt 1/2 failed (dial tcp "+addr) || !strings.HasSuffix(lines[0], "); retrying in 0s") {
		t.Errorf("retry line %q, want the dial error and the wait", lines[0])
	}
	if !strings.HasPrefix(lines[1], "again fetch: retries exhausted after 2 attempts") {
		t.Errorf("error line %q, want it to say retries ran out after 2 attempts", lines[1])
	}
	if strings.Contains(r.Stderr, "secret") {
		t.Errorf("stderr reveals a password or a query value:\n%s", r.Stderr)
	}
}

func TestFetchUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"fetch"}, `again fetch: missing URL; usage: again fetch [flags] URL (see 'again fetch --help')`},
		{[]string{"fetch", "http://a/", "http://b/"}, `again fetch: unexpected argument "http://b/"; fetch takes one URL (see 'again fetch --help')`},
		{[]string{"fetch", "example.com"}, `again fetch: URL "example.com": want an absolute http or https URL; write http://example.com or https://example.com`},
		// Read by url.Parse as the scheme "localhost": the whole input is shown, with the fix.
		{[]string{"fetch", "localhost:8080/x"}, `again fetch: URL "localhost:8080/x": want an absolute http or https URL; write http://localhost:8080/x or https://localhost:8080/x`},
		{[]string{"fetch", "user:secret@localhost:8080/x?token=secret"}, `again fetch: URL "user:…@localhost:8080/x?token=…": want an absolute http or https URL; write http://user:…@localhost:8080/x?token=… or https://user:…@localhost:8080/x?token=…`},
		{[]string{"fetch", "ftp://example.com/"}, `again fetch: URL "ftp://example.com/": want an absolute http or https URL`},
		{[]string{"fetch", "http://"}, `again fetch: URL "http://": want an absolute http or https URL`},
		{[]string{"fetch", "http://example.com:99999/"}, `again fetch: URL "http://example.com:99999/": want an http or https URL with a port from 1 to 65535`},
		{[]string{"fetch", "http://example.com:0/"}, `again fetch: URL "http://example.com:0/": want an http or https URL with a port from 1 to 65535`},
		{[]string{"fetch", "ftp://user:secret@example.com/"}, `again fetch: URL "ftp://user:…@example.com/": want an absolute http or https URL`},
		{[]string{"fetch", "http://a b/"}, `again fetch: URL "http://a b/": want an absolute http or https URL`},
		{[]string{"fetch", "http://user:secret@a b/?token=secret"}, `again fetch: URL "http://…@a b/?…": want an absolute http or https URL`},
		{[]string{"fetch", "http://user:se/cret@host:port/"}, `again fetch: URL "http://…@host:port/": want an absolute http or https URL`},
		{[]string{"fetch", "--deadline", "abc", "http://a/"}, `again fetch: --deadline "abc": want a duration of 0 or more, with no limit short of 292 years (Go syntax such as 500ms, 1.5s or 2m)`},
		{[]string{"fetch", "--retry-on", "5xx", "http://a/"}, `again fetch: --retry-on "5xx": want none or a comma-separated list of HTTP statuses from 100 to 599`},
		{[]string{"fetch", "--retry-on", "503,600", "http://a/"}, `again fetch: --retry-on "503,600": want none or a comma-separated list of HTTP statuses from 100 to 599`},
		{[]string{"fetch", "--attempt-timeout", "-1s", "http://a/"}, `again fetch: --attempt-timeout "-1s": want a duration of 0 or more, with no limit short of 292 years (Go syntax such as 500ms, 1.5s or 2m)`},
		{[]string{"fetch", "--max-retry-after", "soon", "http://a/"}, `again fetch: --max-retry-after "soon": want a duration of 0 or more, with no limit short of 292 years (Go syntax such as 500ms, 1.5s or 2m)`},
		{[]string{"fetch", "--retries", "-1", "http://a/"}, `again fetch: --retries "-1": want a whole number from 0 to 100000`},
		{[]string{"fetch", "-H", "NoColon", "http://a/"}, `again fetch: --header "NoColon": want 'Name: value' with a valid header name and no control characters`},
		{[]string{"fetch", "-H", "Bad Name: x", "http://a/"}, `again fetch: --header "Bad Name: x": want 'Name: value' with a valid header name and no control characters`},
		{[]string{"fetch", "-H", "X-A: a\x01b", "http://a/"}, `again fetch: --header "X-A: a\x01b": want 'Name: value' with a valid header name and no control characters`},
		{[]string{"fetch", "-X", "GET /", "http://a/"}, `again fetch: --method "GET /": want an HTTP method such as GET or POST`},
		{[]string{"fetch", "-d", "@/nonexistent/file", "http://a/"}, `again fetch: --data @FILE: cannot open "/nonexistent/file": no such file or directory`},
		{[]string{"fetch", "-d", "x", "--data-raw", "y", "http://a/"}, `again fetch: --data, --data-raw and --json are exclusive; give the body with one of them`},
		{[]string{"fetch", "-d", "x", "--json", "{}", "http://a/"}, `again fetch: --data, --data-raw and --json are exclusive; give the body with one of them`},
		{[]string{"fetch", "-u", "alice", "http://a/"}, `again fetch: --user: want user:password; fetch never prompts for a password`},
		{[]string{"fetch", "-u", ":secret", "http://a/"}, `again fetch: --user: want user:password with a user name before the ':'`},
		{[]string{"fetch", "-u", "alice:secret", "-H", "Authorization: Bearer t", "http://a/"}, `again fetch: --user conflicts with the Authorization header; give the credentials once`},
		{[]string{"fetch", "--cacert", "/nonexistent/ca.pem", "http://a/"}, `again fetch: --cacert: cannot read "/nonexistent/ca.pem": no such file or directory`},
		{[]string{"fetch", "--cacert", "/dev/null", "http://a/"}, `again fetch: --cacert "/dev/null": want a file of PEM certificates (it holds none)`},
		{[]string{"fetch", "--idempotency-key", "a\nb", "-d", "x", "http://a/"}, `again fetch: --idempotency-key "a\nb": want auto, off or a key without control characters`},
		{[]string{"fetch", "-H", "Idempotency-Key: a", "--idempotency-key", "b", "-d", "x", "http://a/"}, `again fetch: --idempotency-key "b" conflicts with the Idempotency-Key header; give the key once`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			wantUsageError(t, run(t, tt.args...), tt.want)
		})
	}
}

func TestFetchHelp(t *testing.T) {
	r := run(t, "fetch", "--help")
	r.Stdout += cmdtest.Guide(t) // the help, or the guide it points to
	for _, want := range []string{"Examples:", "again fetch -d @order.json", "--retry-on list", "--idempotency-key auto|off|key", "--max-retry-after duration", "--initial duration", "Exit status: 0"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("again fetch --help lacks %q:\n%s", want, r.Stdout)
		}
	}
}

func TestFetchOutputFile(t *testing.T) {
	// -o behaves like curl's --fail-with-body: the final response's body is
	// written whatever its status; the file is replaced only once that
	// body has arrived whole, and a transfer cut short leaves it as it
	// was. An output path that cannot be created is a usage error found
	// before anything is sent.
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the servers close
	srv := newFetchServer(t, map[string][]answer{
		"/ok":   {{status: 503, body: "busy"}, {body: "new"}},
		"/down": {{status: 503, body: "still busy"}},
		"/cut":  {{body: "partial", cut: true}},
	})
	refused := "http://" + closedAddr(t) + "/"
	tests := []struct {
		name     string
		url      string
		existing string // the file's content before, "" for no file
		wantCode int
		want     string // the file's content after, "" for no file
	}{
		{"success replaces the file", srv.URL + "/ok", "old", 0, "new"},
		{"success creates the file", srv.URL + "/ok", "", 0, "new"},
		{"a final 503 is written", srv.URL + "/down", "old", 1, "still busy"},
		{"network failure keeps the file", refused, "old", 1, "old"},
		{"network failure creates no file", refused, "", 1, ""},
		{"a cut body keeps the file", srv.URL + "/cut", "old", 1, "old"},
		{"a cut body creates no file", srv.URL + "/cut", "", 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			if tt.existing != "" {
				if err := os.WriteFile(out, []byte(tt.existing), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			r := run(t, append(withArgs(fast, "--retries", "1", "-o", out), tt.url)...)
			got, err := os.ReadFile(out)
			if tt.want == "" && !os.IsNotExist(err) {
				t.Errorf("output file exists (%q, %v), want none", got, err)
			}
			if r.Code != tt.wantCode || r.Stdout != "" || string(got) != tt.want {
				t.Errorf("exit %d, stdout %q, file %q; want exit %d, no stdout, file %q; stderr:\n%s",
					r.Code, r.Stdout, got, tt.wantCode, tt.want, r.Stderr)
			}
		})
	}
	t.Run("unwritable path", func(t *testing.T) {
		srv := newFetchServer(t, nil)
		out := filepath.Join(t.TempDir(), "no-such-dir", "out")
		r := run(t, "fetch", "-d", "order", "-o", out, srv.URL+"/")
		wantUsageError(t, r, `again fetch: --output: cannot create "`+out+`": no such file or directory`)
		if n := len(srv.requests("/")); n != 0 {
			t.Errorf("server saw %d requests, want none", n)
		}
	})
}

// closedAddr returns a loopback address where nothing listens any more.
func closedAddr(*testing.T) string {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	return srv.Listener.Addr().String()
}

// failingWriter fails every write, like stdout piped to a command that exited.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, syscall.EPIPE }

func TestFetchWriteError(t *testing.T) {
	// A failure to write the output is reported as such, not as a failure
	// to read the response.
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the servers close
	srv := newFetchServer(t, map[string][]answer{"/": {{body: "hello"}}})
	for _, include := range []bool{false, true} {
		t.Run(fmt.Sprintf("include %v", include), func(t *testing.T) {
			args := []string{"fetch", srv.URL + "/"}
			if include {
				args = []string{"fetch", "-i", srv.URL + "/"}
			}
			var errOut strings.Builder
			code := againRun(t.Context(), args, strings.NewReader(""), failingWriter{}, &errOut)
			want := "again fetch: cannot write the response: broken pipe\n"
			if code != 1 || errOut.String() != want {
				t.Errorf("exit %d, stderr %q; want 1, %q", code, errOut.String(), want)
			}
		})
	}
}

// An Idempotency-Key given with -H must have a value: an empty one made a
// POST retryable and hedgeable with an empty key on the wire, and no key
// was generated in its place.
func TestFetchEmptyIdempotencyKeyHeader(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the servers close
	srv := newFetchServer(t, map[string][]answer{"/": {{status: 503}, {body: "ok"}}})
	const want = `again fetch: --header "Idempotency-Key:" has no value; give the key after the colon (or with --idempotency-key KEY), or leave the header out for a random key (--idempotency-key auto, the default) or none (--idempotency-key off)`
	for _, h := range []string{"Idempotency-Key:", "Idempotency-Key: ", "idempotency-key:\t ", "X-A: 1"} {
		t.Run(h, func(t *testing.T) {
			r := run(t, append(withArgs(fast, "-d", "x", "-H", "X-A: 1", "-H", h), srv.URL+"/")...)
			if h == "X-A: 1" {
				// A control: the usual POST, with a generated key.
				if r.Code != 0 {
					t.Errorf("exit %d, stderr %q; want 0", r.Code, r.Stderr)
				}
				return
			}
			wantUsageError(t, r, want)
		})
	}
	for _, req := range srv.requests("/") {
		if key := req.header.Get("Idempotency-Key"); key == "" {
			t.Errorf("a request was sent with Idempotency-Key %q", key)
		}
	}
}
