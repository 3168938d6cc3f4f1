package fetch

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
	"github.com/again-go/again/retryhttp"
)

// rawServer answers every request on loopback with whatever bytes answer
// writes, so that tests can play servers that net/http would not be.
func rawServer(t *testing.T, answer func(conn net.Conn, req *http.Request)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer conn.Close()
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				answer(conn, req)
			})
		}
	})
	return "http://" + ln.Addr().String()
}

// Text from a server reaches the terminal with its control characters
// written out: the reason phrase in the attempt line and the error line,
// header values in -v.
func TestFetchEscapesServerText(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	addr := rawServer(t, func(conn net.Conn, _ *http.Request) {
		io.WriteString(conn, "HTTP/1.1 503 \x1b]0;owned\x07\x1b[2J\r\nX-Evil: a\x9b31mred\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	})
	r := run(t, append(withArgs(fast, "-v", "--retries", "1"), addr+"/")...)
	if strings.ContainsAny(r.Stderr, "\x1b\x07") || strings.Contains(r.Stderr, "\x9b") {
		t.Errorf("stderr holds raw control characters: %q", r.Stderr)
	}
	for _, want := range []string{
		`again fetch: attempt 1/2 failed (503 \x1b]0;owned\x07\x1b[2J); retrying in 0s` + "\n",
		`again fetch: server answered 503 \x1b]0;owned\x07\x1b[2J after 2 attempts` + "\n",
		`< HTTP/1.1 503 \x1b]0;owned\x07\x1b[2J` + "\n",
		`< X-Evil: a\x9b31mred` + "\n",
	} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
}

// fakeTimeout stands for retryhttp's error of an attempt that exceeded
// its AttemptTimeout, whose type is unexported.
type fakeTimeout struct{ d time.Duration }

func (e fakeTimeout) Error() string        { return "retryhttp: attempt timed out after " + e.d.String() }
func (e fakeTimeout) Is(target error) bool { return target == retryhttp.ErrAttemptTimeout }

// TestTimeoutWords: fetch says of an attempt that --attempt-timeout stopped what
// run says, "timed out after 500ms", wherever retryhttp's error is in the
// error's tree, and the error still matches retryhttp.ErrAttemptTimeout.
func TestTimeoutWords(t *testing.T) {
	te := fakeTimeout{500 * time.Millisecond}
	other := errors.New("connection refused")
	for _, tt := range []struct {
		err     error
		timeout time.Duration
		want    string
	}{
		{te, 500 * time.Millisecond, "timed out after 500ms"},
		{fmt.Errorf("retry: retries exhausted after 2 attempts in 1.2s: %w", te), 500 * time.Millisecond,
			"retry: retries exhausted after 2 attempts in 1.2s: timed out after 500ms"},
		{errors.Join(other, fmt.Errorf("hedge: %w", te)), 500 * time.Millisecond, "connection refused\nhedge: timed out after 500ms"},
		{te, 0, "timed out"},
		{other, 500 * time.Millisecond, "connection refused"},
	} {
		got := timeoutWords(tt.err, tt.timeout)
		if got.Error() != tt.want {
			t.Errorf("timeoutWords(%q) = %q, want %q", tt.err, got, tt.want)
		}
		if errors.Is(got, retryhttp.ErrAttemptTimeout) != errors.Is(tt.err, retryhttp.ErrAttemptTimeout) || !errors.Is(got, tt.err) {
			t.Errorf("timeoutWords(%q) hides the error it rewords", tt.err)
		}
	}
	if run, fetch := cmdutil.TimedOutAfter(300*time.Millisecond), timeoutWords(fakeTimeout{300 * time.Millisecond}, 300*time.Millisecond).Error(); run != fetch {
		t.Errorf("run says %q of a timed-out attempt, fetch %q", run, fetch)
	}
}

// A 101 Switching Protocols that fetch never asked for is a failure, at
// once, rather than a connection held for as long as the server likes.
func TestFetchUnsolicitedSwitch(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	addr := rawServer(t, func(conn net.Conn, _ *http.Request) {
		io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: other\r\nConnection: Upgrade\r\n\r\nhello")
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		io.Copy(io.Discard, conn) // until fetch closes it
	})
	for _, args := range [][]string{{}, {"-H", "Upgrade: other", "-H", "Connection: Upgrade"}} {
		r := run(t, append(withArgs(fast, append(args, "--deadline", "20s")...), addr+"/")...)
		want := "again fetch: server answered 101 Switching Protocols: fetch speaks only HTTP and does not follow a switch to another protocol\n"
		if r.Code != 1 || r.Stdout != "" || r.Stderr != want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 1, nothing, %q", args, r.Code, r.Stdout, r.Stderr, want)
		}
	}
}

// A final status that HTTP does not have is an error, not a success.
func TestFetchStatusOutsideHTTP(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	for _, code := range []string{"000", "099", "600", "999"} {
		addr := rawServer(t, func(conn net.Conn, _ *http.Request) {
			io.WriteString(conn, "HTTP/1.1 "+code+" Odd\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbody")
		})
		out := filepath.Join(t.TempDir(), "out")
		r := run(t, append(withArgs(fast, "-o", out), addr+"/")...)
		want := "again fetch: server answered status " + code + ", which HTTP does not have (statuses are 100 to 599)\n"
		if _, err := os.Stat(out); r.Code != 1 || r.Stderr != want || !os.IsNotExist(err) {
			t.Errorf("status %s: exit %d, stderr %q, -o file %v; want 1, %q, no file", code, r.Code, r.Stderr, err, want)
		}
	}
}

// An X-RateLimit-Reset that is a Unix time at or just before now is no
// hint: the schedule's wait applies, so that a server whose clock is wrong
// does not get a retry storm.
func TestFetchRateLimitResetPast(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	reset := strconv.FormatInt(time.Now().Unix()-1, 10)
	srv := newFetchServer(t, map[string][]answer{"/": {{status: 429, header: map[string]string{"X-RateLimit-Reset": reset}}, {body: "ok"}}})
	r := run(t, append(withArgs(fast), srv.URL+"/")...)
	want := "again fetch: attempt 1/4 failed (429 Too Many Requests); retrying in 0s\n"
	if r.Code != 0 || r.Stdout != "ok" || r.Stderr != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0, ok, %q", r.Code, r.Stdout, r.Stderr, want)
	}
}

// Credentials follow a redirect only to the same scheme, host and port,
// as in curl since 7.83, unless --location-trusted.
func TestFetchRedirectCredentials(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	var mu sync.Mutex
	seen := map[string]http.Header{}
	record := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Host+r.URL.Path] = r.Header.Clone()
		mu.Unlock()
	}
	other := httptest.NewServer(http.HandlerFunc(record))
	defer other.Close()
	var origin *httptest.Server
	origin = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/land", http.StatusFound)
		case "/home":
			http.Redirect(w, r, origin.URL+"/land", http.StatusFound)
		default:
			record(w, r)
		}
	}))
	defer origin.Close()
	creds := []string{"-u", "alice:secret", "-H", "Cookie: c=secret"}
	tests := []struct {
		name      string
		args      []string
		path      string
		land      string
		wantCreds bool
	}{
		{"another port", creds, "/away", other.Listener.Addr().String() + "/land", false},
		{"another port, Authorization header", []string{"-H", "Authorization: Bearer secret"}, "/away", other.Listener.Addr().String() + "/land", false},
		{"the same origin", creds, "/home", origin.Listener.Addr().String() + "/land", true},
		{"--location-trusted", creds, "/away", other.Listener.Addr().String() + "/land", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := withArgs(fast, "-L")
			if tt.name == "--location-trusted" {
				args = withArgs(fast, "--location-trusted")
			}
			r := run(t, append(append(args, tt.args...), origin.URL+tt.path)...)
			mu.Lock()
			h, ok := seen[tt.land]
			delete(seen, tt.land)
			mu.Unlock()
			if r.Code != 0 || !ok {
				t.Fatalf("exit %d, stderr %q, redirect followed: %v; want 0 and followed", r.Code, r.Stderr, ok)
			}
			got := h.Get("Authorization") != "" || h.Get("Cookie") != ""
			if got != tt.wantCreds {
				t.Errorf("credentials after the redirect: %v (%v), want %v", got, h, tt.wantCreds)
			}
		})
	}
}

func TestSameOrigin(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"https://h/a", "https://h/b", true},
		{"https://h/a", "https://H:443/b", true},
		{"http://h/a", "http://h:80/b", true},
		{"https://h/a", "http://h/b", false},
		{"https://h:8443/a", "http://h:8443/b", false},
		{"http://h:1/a", "http://h:2/b", false},
		{"http://h/a", "http://sub.h/b", false},
	}
	for _, tt := range tests {
		a, _ := url.Parse(tt.a)
		b, _ := url.Parse(tt.b)
		if got := sameOrigin(a, b); got != tt.want {
			t.Errorf("sameOrigin(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// PUT -d @F -o F: a retry sends F as it was, though the first attempt's
// cut response was written meanwhile, and F is never left holding it.
func TestFetchUploadSameFileAsOutput(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	srv := newFetchServer(t, map[string][]answer{"/": {{body: "cut response", cut: true}, {status: 503, body: "busy"}}})
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("the only copy"), 0o640); err != nil {
		t.Fatal(err)
	}
	r := run(t, append(withArgs(fast, "--retries", "1", "--fail", "-X", "PUT", "-d", "@"+file, "-o", file), srv.URL+"/")...)
	got, _ := os.ReadFile(file)
	entries, _ := os.ReadDir(dir)
	if r.Code != 1 || string(got) != "the only copy" || len(entries) != 1 {
		t.Errorf("exit %d, file %q, %d entries in its directory; want 1, the file as it was, alone; stderr:\n%s", r.Code, got, len(entries), r.Stderr)
	}
	reqs := srv.requests("/")
	if len(reqs) != 2 || reqs[0].body != "the only copy" || reqs[1].body != "the only copy" {
		t.Errorf("server received %+v, want the file twice", reqs)
	}
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("file mode %v, %v; want 0640 kept", st, err)
	}
}

// A -d @F changed in place after the first attempt read it is not sent
// again: the retry would send something else.
func TestFetchDataFileChangedInPlace(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, []byte("first"), 0o600); err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		// The whole body first: a file cut short while the client still
		// streams it would fail the attempt for another reason.
		io.Copy(io.Discard, r.Body)
		os.WriteFile(file, []byte("changed in place"), 0o600)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	r := run(t, append(withArgs(fast, "-X", "PUT", "-d", "@"+file), srv.URL+"/")...)
	if n := n.Load(); r.Code != 1 || n != 1 || !strings.Contains(r.Stderr, "--data @"+file+" changed since the first attempt read it; not sending it again") {
		t.Errorf("exit %d after %d requests, stderr %q; want 1 after 1, saying the file changed", r.Code, n, r.Stderr)
	}
}

// -o through a symbolic link replaces the link's target and keeps the
// link; a device is written in place.
func TestFetchOutputLinkAndDevice(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	srv := newFetchServer(t, map[string][]answer{"/": {{body: "new"}}})
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("old"), 0o600)
	link := filepath.Join(dir, "link")
	if err := os.Symlink("target", link); err != nil {
		t.Fatal(err)
	}
	r := run(t, append(withArgs(fast, "-o", link), srv.URL+"/")...)
	got, _ := os.ReadFile(target)
	st, err := os.Lstat(link)
	if r.Code != 0 || string(got) != "new" || err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("exit %d, target %q, link %v %v; want 0, new, still a link; stderr %q", r.Code, got, st, err, r.Stderr)
	}
	if r := run(t, append(withArgs(fast, "-o", os.DevNull), srv.URL+"/")...); r.Code != 0 || r.Stderr != "" {
		t.Errorf("-o %s: exit %d, stderr %q; want 0", os.DevNull, r.Code, r.Stderr)
	}
}

// net/http's own log line about a server that sent more than its
// response reaches stderr as one of again's lines, not as a stray
// timestamped one.
func TestFetchNetHTTPLogRouted(t *testing.T) {
	var n sync.Mutex
	first := true
	addr := rawServer(t, func(conn net.Conn, _ *http.Request) {
		n.Lock()
		f := first
		first = false
		n.Unlock()
		if f {
			io.WriteString(conn, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\njunk after the response")
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			io.Copy(io.Discard, conn)
			return
		}
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
	})
	cmd, stdin, out := cmdtest.AgainProcess(t, "fetch", "--initial", "300ms", "--jitter", "none", addr+"/")
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("again fetch: %v; output:\n%s", err, out.String())
	}
	want := `again: Unsolicited response received on idle HTTP channel starting with "junk after the response"; err=<nil>` + "\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
}

// A redirect whose Location does not parse is reported without the
// password and query values it holds.
func TestFetchBadLocationRedacted(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	addr := rawServer(t, func(conn net.Conn, _ *http.Request) {
		io.WriteString(conn, "HTTP/1.1 302 Found\r\nLocation: http://alice:secret@exa mple.com/?token=secret\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	})
	r := run(t, append(withArgs(fast, "-L"), addr+"/")...)
	if r.Code != 1 || strings.Contains(r.Stderr, "secret") || !strings.Contains(r.Stderr, `"http://…@exa mple.com/?…"`) {
		t.Errorf("exit %d, stderr %q; want 1 and the Location redacted", r.Code, r.Stderr)
	}
}

func TestRedactQuotedURLs(t *testing.T) {
	tests := []struct{ in, want string }{
		{`failed to parse Location header "http://a:s@h/?t=s": parse "http://a:s@h/?t=s": bad`, `failed to parse Location header "http://a:…@h/?t=…": parse "http://a:…@h/?t=…": bad`},
		{`no quotes here`, `no quotes here`},
		{`a "plain" word and an "unterminated`, `a "plain" word and an "unterminated`},
	}
	for _, tt := range tests {
		if got := redactQuotedURLs(tt.in); got != tt.want {
			t.Errorf("redactQuotedURLs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// With -L, fetch sends no Referer that the user did not set (net/http's
// Client would send the previous URL, its query included, to every hop),
// and one set with -H goes to another origin without its query.
func TestFetchRedirectReferer(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	var mu sync.Mutex
	seen := map[string][]string{} // Referer values by host and path
	record := func(r *http.Request) {
		mu.Lock()
		seen[r.Host+r.URL.Path] = r.Header.Values("Referer")
		mu.Unlock()
	}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { record(r) }))
	defer other.Close()
	var origin *httptest.Server
	origin = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record(r)
		switch r.URL.Path {
		case "/dl":
			// Same origin first, then another port: another origin.
			http.Redirect(w, r, origin.URL+"/hop?step=SECRETHOP", http.StatusFound)
		case "/hop":
			http.Redirect(w, r, other.URL+"/cdn", http.StatusFound)
		}
	}))
	defer origin.Close()
	o, x := origin.Listener.Addr().String(), other.Listener.Addr().String()
	const given = "http://ref.example/page?from=SECRETREF#frag"
	tests := []struct {
		name string
		args []string
		want map[string][]string
	}{
		{"none set", []string{"-L"}, map[string][]string{o + "/dl": nil, o + "/hop": nil, x + "/cdn": nil}},
		{"none set, --location-trusted", []string{"--location-trusted"}, map[string][]string{o + "/dl": nil, o + "/hop": nil, x + "/cdn": nil}},
		{"set with -H", []string{"-L", "-H", "Referer: " + given},
			map[string][]string{o + "/dl": {given}, o + "/hop": {given}, x + "/cdn": {"http://ref.example/page"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			clear(seen)
			mu.Unlock()
			r := run(t, append(withArgs(fast, append(tt.args, "-H", "Authorization: Bearer X")...), origin.URL+"/dl?api_key=SECRET")...)
			if r.Code != 0 {
				t.Fatalf("exit %d, stderr %q; want 0", r.Code, r.Stderr)
			}
			mu.Lock()
			defer mu.Unlock()
			for hop, want := range tt.want {
				got, ok := seen[hop]
				if !ok || !slices.Equal(got, want) {
					t.Errorf("%s: Referer %q (reached: %v), want %q", hop, got, ok, want)
				}
			}
		})
	}
}

func TestRefererElsewhere(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://ref.example/page?from=secret#frag", "http://ref.example/page"},
		{"https://alice:secret@ref.example/p?", "https://ref.example/p"},
		{"/relative?token=secret", "/relative"},
		{"http://a b/?token=secret", ""},
	}
	for _, tt := range tests {
		if got := refererElsewhere(tt.in); got != tt.want {
			t.Errorf("refererElsewhere(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
