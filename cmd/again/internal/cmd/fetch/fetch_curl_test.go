package fetch

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
	"go.uber.org/goleak"
)

// A fetch that ends without a usable response (a redirect loop with -L, a
// failed status with --fail) creates no -o file and leaves an existing one
// as it was.
func TestFetchNoUsableResponseNoFile(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the servers close
	srv := newFetchServer(t, map[string][]answer{
		"/loop":    {{status: 302, header: map[string]string{"Location": "/loop"}}},
		"/missing": {{status: 404, body: "no such thing"}},
	})
	tests := []struct {
		name     string
		args     []string
		existing string
		stderr   string
	}{
		{"redirect loop", []string{"-L", "/loop"}, "", "again fetch: stopped after 10 redirects\n"},
		{"redirect loop keeps a file", []string{"-L", "/loop"}, "old", "again fetch: stopped after 10 redirects\n"},
		{"--fail on 404", []string{"--fail", "/missing"}, "", "again fetch: server answered 404 Not Found after 1 attempt\n"},
		{"-f on 404 keeps a file", []string{"-f", "/missing"}, "old", "again fetch: server answered 404 Not Found after 1 attempt\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "new")
			if tt.existing != "" {
				if err := os.WriteFile(out, []byte(tt.existing), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			args := append(withArgs(fast, append([]string{"-o", out}, tt.args[:len(tt.args)-1]...)...), srv.URL+tt.args[len(tt.args)-1])
			r := run(t, args...)
			got, err := os.ReadFile(out)
			if tt.existing == "" && !os.IsNotExist(err) {
				t.Errorf("-o file exists (%q, %v), want none", got, err)
			}
			if r.Code != 1 || r.Stdout != "" || string(got) != tt.existing || r.Stderr != tt.stderr {
				t.Errorf("exit %d, stdout %q, file %q, stderr %q; want 1, nothing, %q, %q", r.Code, r.Stdout, got, r.Stderr, tt.existing, tt.stderr)
			}
		})
	}
	t.Run("--fail on stdout", func(t *testing.T) {
		r := run(t, append(withArgs(fast, "-f", "-i"), srv.URL+"/missing")...)
		if r.Code != 1 || r.Stdout != "" {
			t.Errorf("exit %d, stdout %q; want 1 and no body or headers", r.Code, r.Stdout)
		}
	})
}

// Bodies are sent with their length when it is known: an empty -d as
// Content-Length: 0, a small stdin after reading it; parts are joined.
func TestFetchBodies(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the servers close
	file := filepath.Join(t.TempDir(), "part")
	if err := os.WriteFile(file, []byte("from-file"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		stdin    string
		body     string
		length   int64
		headers  map[string]string
		method   string
		attempts int
	}{
		{"empty -d", []string{"-d", ""}, "", "", 0, nil, "POST", 2},
		{"empty --data-raw", []string{"--data-raw", ""}, "", "", 0, nil, "POST", 2},
		{"empty stdin", []string{"-d", "@-"}, "", "", 0, nil, "POST", 2},
		{"small stdin", []string{"-X", "PUT", "-d", "@-"}, "from stdin", "from stdin", 10, nil, "PUT", 2},
		{"-d joined with &", []string{"-d", "a=1", "-d", "b=2"}, "", "a=1&b=2", 7,
			map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, "POST", 2},
		{"-d with its own Content-Type", []string{"-d", "<a/>", "-H", "Content-Type: text/xml"}, "", "<a/>", 4,
			map[string]string{"Content-Type": "text/xml"}, "POST", 2},
		{"--data-raw is a form too", []string{"--data-raw", "x=1"}, "", "x=1", 3,
			map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, "POST", 2},
		{"-d file and string", []string{"-d", "@" + file, "-d", "z"}, "", "from-file&z", 11, nil, "POST", 2},
		{"-d stdin and string", []string{"-d", "@-", "-d", "z"}, "in", "in&z", 4, nil, "POST", 2},
		{"--data-raw joined", []string{"--data-raw", "@x", "--data-raw", "y"}, "", "@x&y", 4, nil, "POST", 2},
		{"--json", []string{"--json", `{"a":`, "--json", `1}`}, "", `{"a":1}`, 7,
			map[string]string{"Content-Type": "application/json", "Accept": "application/json"}, "POST", 2},
		{"--json with its own Accept", []string{"--json", `[]`, "-H", "Accept: text/plain"}, "", `[]`, 2,
			map[string]string{"Content-Type": "application/json", "Accept": "text/plain"}, "POST", 2},
		{"-u", []string{"-u", "alice:open sesame"}, "", "", 0,
			map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:open sesame"))}, "GET", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFetchServer(t, map[string][]answer{"/": {{status: 503}, {body: "ok"}}})
			var out, errOut strings.Builder
			code := againRun(t.Context(), append(withArgs(fast, tt.args...), srv.URL+"/"), strings.NewReader(tt.stdin), &out, &errOut)
			reqs := srv.requests("/")
			if code != 0 || len(reqs) != tt.attempts {
				t.Fatalf("exit %d after %d attempts, want 0 after %d; stderr:\n%s", code, len(reqs), tt.attempts, errOut.String())
			}
			for i, r := range reqs {
				if r.method != tt.method || r.body != tt.body || r.contentLength != tt.length || len(r.encoding) != 0 {
					t.Errorf("attempt %d: %s %q, Content-Length %d, Transfer-Encoding %v; want %s %q, %d, none",
						i+1, r.method, r.body, r.contentLength, r.encoding, tt.method, tt.body, tt.length)
				}
				for name, want := range tt.headers {
					if got := r.header.Get(name); got != want {
						t.Errorf("attempt %d: %s %q, want %q", i+1, name, got, want)
					}
				}
			}
		})
	}
}

// -v shows each attempt's request and response headers on stderr, with
// credentials, cookies, keys, tokens and query values masked.
func TestFetchVerbose(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the servers close
	srv := newFetchServer(t, map[string][]answer{"/v": {{status: 503}, {body: "ok", header: map[string]string{"Set-Cookie": "session=secret4", "X-Reply": "yes"}}}})
	r := run(t, append(withArgs(fast, "-v", "-u", "alice:secret1", "-H", "Cookie: c=secret2"), srv.URL+"/v?token=secret3&flag")...)
	if r.Code != 0 || r.Stdout != "ok" {
		t.Fatalf("exit %d, stdout %q; want 0, ok; stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{
		"> GET /v?token=…&… HTTP/1.1\n",
		"> Authorization: (masked)\n",
		"> Cookie: (masked)\n",
		"< HTTP/1.1 503 Service Unavailable\n",
		"again fetch: attempt 1/4 failed (503 Service Unavailable); retrying in 0s\n",
		"< HTTP/1.1 200 OK\n",
		"< Set-Cookie: (masked)\n",
		"< X-Reply: yes\n",
	} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
	if strings.Contains(r.Stderr, "secret") {
		t.Errorf("stderr reveals a secret:\n%s", r.Stderr)
	}
	if n := strings.Count(r.Stderr, "> GET "); n != 2 {
		t.Errorf("%d requests shown, want one per attempt (2):\n%s", n, r.Stderr)
	}
}

// -v masks the value of every header whose name says it holds a secret,
// and redacts the URLs of the headers that hold one.
func TestShownHeaderValue(t *testing.T) {
	tests := []struct{ name, value, want string }{
		{"Authorization", "Bearer secret", "(masked)"},
		{"Proxy-Authorization", "Basic secret", "(masked)"},
		{"Cookie", "c=secret", "(masked)"},
		{"set-cookie", "s=secret", "(masked)"},
		{"X-Api-Key", "secret", "(masked)"},
		{"Private-Token", "secret", "(masked)"},
		{"X-Auth-Token", "secret", "(masked)"},
		{"X-Session-Id", "secret", "(masked)"},
		{"X-Client-Secret", "secret", "(masked)"},
		{"X-Password", "secret", "(masked)"},
		{"X-Amz-Signature", "secret", "(masked)"},
		{"X-Amz-Credential", "secret", "(masked)"},
		{"X-CSRF-TOKEN", "secret", "(masked)"},
		{"Idempotency-Key", "secret", "(masked)"},
		{"Location", "http://alice:secret@h:8080/landed?tok=secret&x#frag", "http://alice:…@h:8080/landed?tok=…&…"},
		{"Location", "/landed?tok=secret", "/landed?tok=…"},
		{"Location", "/plain", "/plain"},
		{"Content-Location", "/c?sig=secret", "/c?sig=…"},
		{"Referer", "https://r.example/page?from=secret", "https://r.example/page?from=…"},
		{"Link", `<https://h/items?page=2&token=secret>; rel="next", </p?s=secret>; rel="prev"`,
			`<https://h/items?page=…&token=…>; rel="next", </p?s=…>; rel="prev"`},
		{"Link", `<https://h/a>; rel="alternate"; anchor="https://h/b?t=secret"`, `<https://h/a>; rel="alternate"; anchor="https://h/b?t=…"`},
		{"Link", "<https://h/a?t=secret", "<https://h/a?t=…"},
		{"Refresh", "5; url=/next?t=secret", "5; url=/next?t=…"},
		{"Refresh", "0;URL='https://h/n?t=secret'", "0;URL='https://h/n?t=…'"},
		{"Refresh", "3, /n?t=secret", "3, /n?t=…"},
		{"Refresh", "1; url=\"/n?t=secret", "1; url=\"/n?t=…"},
		{"Refresh", "10", "10"},
		{"Origin", "https://h.example", "https://h.example"},
		{"Content-Type", "text/plain; charset=utf-8", "text/plain; charset=utf-8"},
		{"Keep-Alive", "timeout=5", "timeout=5"},
		{"X-Reply", "a\x1bb", "a\\x1bb"},
	}
	for _, tt := range tests {
		if got := shownValue(tt.name, tt.value); got != tt.want {
			t.Errorf("shownValue(%q, %q) = %q, want %q", tt.name, tt.value, got, tt.want)
		}
	}
}

// -v prints the URLs of Location, Referer and Link without their query
// values, and masks API keys and tokens in any header named for one.
func TestFetchVerboseMasksSecrets(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the servers close
	srv := newFetchServer(t, map[string][]answer{
		"/start": {{status: 302, header: map[string]string{
			"Location":         "/landed?tok=SECLOC",
			"Content-Location": "/start?sig=SECCL",
			"Link":             `</next?page=2&token=SECLINK>; rel="next"`,
			"X-Session-Id":     "SECSESSION",
		}}},
		"/landed": {{body: "ok"}},
	})
	r := run(t, append(withArgs(fast, "-v", "-L",
		"-H", "Referer: http://r.example/page?from=SECREF",
		"-H", "X-Api-Key: SECAPI",
		"-H", "Private-Token: SECPRIV",
		"-H", "X-Auth-Token: SECAUTH"), srv.URL+"/start?k=SECQUERY")...)
	if r.Code != 0 || r.Stdout != "ok" {
		t.Fatalf("exit %d, stdout %q; want 0, ok; stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{
		"> GET /start?k=… HTTP/1.1\n",
		"> Referer: http://r.example/page?from=…\n",
		"> X-Api-Key: (masked)\n",
		"> Private-Token: (masked)\n",
		"> X-Auth-Token: (masked)\n",
		"< Location: /landed?tok=…\n",
		"< Content-Location: /start?sig=…\n",
		"< Link: </next?page=…&token=…>; rel=\"next\"\n",
		"< X-Session-Id: (masked)\n",
		"> GET /landed?tok=… HTTP/1.1\n",
	} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
	if strings.Contains(r.Stderr, "SEC") {
		t.Errorf("stderr reveals a secret:\n%s", r.Stderr)
	}
}

// --cacert trusts the authorities of a PEM file instead of the system's.
func TestFetchCACert(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the servers close
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("secure")) }))
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := run(t, "fetch", "--cacert", ca, srv.URL+"/"); r.Code != 0 || r.Stdout != "secure" {
		t.Errorf("with --cacert: exit %d, stdout %q, stderr %q; want 0, secure", r.Code, r.Stdout, r.Stderr)
	}
	if r := run(t, "fetch", "--retries", "0", srv.URL+"/"); r.Code != 1 || !strings.Contains(r.Stderr, "certificate") {
		t.Errorf("without --cacert: exit %d, stderr %q; want 1 and a certificate error", r.Code, r.Stderr)
	}
}

// SIGINT or SIGTERM during a fetch (waiting for headers, or reading the
// body) exits 130 or 143 with one line.
func TestFetchSignal(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the servers close
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/body" {
			w.Header().Set("Content-Length", "100")
			_, _ = w.Write([]byte("x"))
			w.(http.Flusher).Flush()
		}
		arrived <- struct{}{}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	for _, path := range []string{"/headers", "/body"} {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(path+" "+cmdutil.SignalName(sig), func(t *testing.T) {
				wantStoppedBy(t, cmdutil.WithSignals(t.Context(), make(chan os.Signal)), []string{"fetch", srv.URL + path}, arrived, sig)
			})
		}
	}
}

// wantStoppedBy runs again with args on a context derived from ctx,
// delivers sig as cmdutil.NotifyContext does once arrived says the server has the
// request, and checks that fetch exits 128+N with its one line.
func wantStoppedBy(t *testing.T, ctx context.Context, args []string, arrived <-chan struct{}, sig syscall.Signal) {
	t.Helper()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan cmdtest.Result)
	go func() {
		var out, errOut strings.Builder
		code := againRun(ctx, args, strings.NewReader(""), &out, &errOut)
		done <- cmdtest.Result{Code: code, Stdout: out.String(), Stderr: errOut.String()}
	}()
	<-arrived
	cancel(&cmdutil.SignalError{Signal: sig})
	r := <-done
	want := "again fetch: stopped: received " + cmdutil.SignalName(sig) + "\n"
	if r.Code != 128+int(sig) || r.Stderr != want {
		t.Errorf("exit %d, stderr %q; want %d, %q", r.Code, r.Stderr, 128+int(sig), want)
	}
}

// --connect-timeout bounds connecting, TLS handshake included: a server
// that accepts the connection and never answers the handshake fails the
// attempt, which is retried, instead of hanging.
func TestFetchConnectTimeout(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, silent
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		for _, c := range conns {
			c.Close()
		}
	})
	r := run(t, append(withArgs(fast, "--connect-timeout", "50ms", "--retries", "1"), "https://"+ln.Addr().String()+"/")...)
	if r.Code != 1 || !strings.Contains(r.Stderr, "again fetch: attempt 1/2 failed (TLS handshake timeout); retrying in 0s\n") {
		t.Errorf("exit %d, stderr %q; want 1 after two attempts that timed out in the handshake", r.Code, r.Stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(conns) != 2 {
		t.Errorf("server saw %d connections, want 2 (one per attempt)", len(conns))
	}
}

// --attempt-timeout bounds the whole attempt, body included: a server that sends
// its headers and then stalls in the body fails the attempt at the limit,
// and the attempt is retried.
func TestFetchTimeoutCoversBody(t *testing.T) {
	for _, hedged := range [][]string{nil, {"--hedge-after", "1s"}} {
		t.Run(fmt.Sprint("hedged=", hedged != nil), func(t *testing.T) { timeoutCoversBody(t, hedged) })
	}
}

// timeoutCoversBody is TestFetchTimeoutCoversBody with the extra flags:
// a hedged winner whose body stalls is retried like any attempt.
func timeoutCoversBody(t *testing.T, extra []string) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the servers close
	srv := newFetchServer(t, map[string][]answer{"/slow": {{body: "x", stall: true}}})
	// --deadline only keeps a failing test short.
	out := filepath.Join(t.TempDir(), "out")
	r := run(t, append(withArgs(fast, append(extra, "-o", out, "--attempt-timeout", "200ms", "--retries", "1", "--deadline", "20s")...), srv.URL+"/slow")...)
	pattern := regexp.MustCompile(`^again fetch: attempt 1/2 failed \(timed out after 200ms\); retrying in 0s
again fetch: retries exhausted after 2 attempts in ([^\n]+): timed out after 200ms
$`)
	m := pattern.FindStringSubmatch(r.Stderr)
	if r.Code != 1 || m == nil {
		t.Fatalf("exit %d, stderr:\n%s\nwant 1 and both attempts timed out in the body", r.Code, r.Stderr)
	}
	// The time reported covers the whole run, the first attempt included.
	if took, err := time.ParseDuration(m[1]); err != nil || took < 400*time.Millisecond {
		t.Errorf("reported %s (%v) for two attempts of 200ms each, want the whole run", m[1], err)
	}
}

// A body cut off mid-way is retried when the output can start over (a
// regular -o file); on stdout, what arrived stays and retrying stops.
// With --hedge-after the same: a hedged request keeps the retry rules (the
// winner's body was once written after the attempt, and not retried).
func TestFetchCutBodyRetried(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the servers close
	for _, hedged := range [][]string{nil, {"--hedge-after", "1s"}} {
		t.Run(fmt.Sprint("hedged=", hedged != nil), func(t *testing.T) {
			srv := newFetchServer(t, map[string][]answer{"/": {{body: "partial", cut: true}, {body: "whole"}}})
			out := filepath.Join(t.TempDir(), "out")
			r := run(t, append(withArgs(fast, append(hedged, "-o", out)...), srv.URL+"/")...)
			got, _ := os.ReadFile(out)
			want := "again fetch: attempt 1/4 failed (reading the response body: unexpected EOF); retrying in 0s\n"
			if r.Code != 0 || string(got) != "whole" || r.Stderr != want {
				t.Errorf("-o: exit %d, file %q, stderr %q; want 0, %q, %q", r.Code, got, r.Stderr, "whole", want)
			}
			srv = newFetchServer(t, map[string][]answer{"/": {{body: "partial", cut: true}, {body: "whole"}}})
			r = run(t, append(withArgs(fast, hedged...), srv.URL+"/")...)
			want = "again fetch: reading the response body: unexpected EOF (not retried: the output cannot start over)\n"
			if r.Code != 1 || r.Stdout != "partial" || r.Stderr != want {
				t.Errorf("stdout: exit %d, stdout %q, stderr %q; want 1, %q, %q", r.Code, r.Stdout, r.Stderr, "partial", want)
			}
		})
	}
}

// FuzzShownValue checks what -v prints of a header, for any name and
// value: no panic, nothing unprintable, and no query value of a URL-valued
// header (Location, Content-Location, Referer, Refresh, Link), whatever
// precedes it.
func FuzzShownValue(f *testing.F) {
	f.Add("Location", "/landed")
	f.Add("Refresh", "5; url='/n")
	f.Add("Link", `<https://h/a>; rel="next"`)
	f.Add("X-Reply", "a\x1bb")
	f.Fuzz(func(t *testing.T, name, value string) {
		for _, r := range shownValue(name, value) {
			if r < ' ' || r == 0x7f {
				t.Fatalf("shownValue(%q, %q) holds the control character %U", name, value, r)
			}
		}
		const secret = "SECRET0query0VALUE"
		for _, h := range []struct{ name, value string }{
			{"Location", value + "?k=" + secret},
			{"Content-Location", value + "?k=" + secret},
			{"Referer", value + "?k=" + secret},
			{"Refresh", "0; url=" + value + "?k=" + secret},
			{"Link", "<" + value + "?k=" + secret + ">"},
		} {
			if h.name == "Link" && strings.ContainsAny(value, "<>") {
				continue // the URL ends at value's '>': the rest is not a URL
			}
			if got := shownValue(h.name, h.value); strings.Contains(got, secret) {
				t.Errorf("shownValue(%q, %q) = %q shows the query value", h.name, h.value, got)
			}
		}
	})
}

// -v prints the request line with the protocol of the connection that
// took it: HTTP/2 on a connection that negotiated h2, as the response's
// line says (it once printed HTTP/1.1 whatever the connection).
func TestFetchVerboseProtocol(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the servers close
	for _, h2 := range []bool{false, true} {
		t.Run(fmt.Sprint("http2=", h2), func(t *testing.T) {
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) }))
			srv.EnableHTTP2 = h2
			srv.StartTLS()
			t.Cleanup(srv.Close)
			ca := filepath.Join(t.TempDir(), "ca.pem")
			if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
				t.Fatal(err)
			}
			r := run(t, "fetch", "-v", "--cacert", ca, srv.URL+"/p")
			request, response := "> GET /p HTTP/1.1\n", "< HTTP/1.1 200 OK\n"
			if h2 {
				request, response = "> GET /p HTTP/2\n", "< HTTP/2.0 200 OK\n"
			}
			if r.Code != 0 || !strings.Contains(r.Stderr, request) || !strings.Contains(r.Stderr, response) {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant %q and %q", r.Code, r.Stdout, r.Stderr, request, response)
			}
		})
	}
}
