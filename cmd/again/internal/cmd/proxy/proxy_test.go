package proxy

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
	proxymodel "github.com/again-go/again/cmd/again/internal/proxy"
	"github.com/again-go/again/fault"
)

var run = cmdtest.Runner(cmdtest.Commands(NewCmd))

func TestUsageErrors(t *testing.T) {
	status101 := filepath.Join(t.TempDir(), "101.json")
	os.WriteFile(status101, []byte(`{"faults": [{"kind": "status", "status": 101}]}`), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy"}, "again proxy: --to is required: the URL of the service to forward to"},
		{[]string{"proxy", "--to", "ftp://x"}, `again proxy: --to "ftp://x": want an http or https URL with a host, such as http://127.0.0.1:9000`},
		{[]string{"proxy", "--to", "http://x", "--fail", "2"}, `again proxy: --fail "2": want share[:status], such as 0.2:503, with a status from 200 to 599 (503 by default)`},
		{[]string{"proxy", "--to", "http://x", "--fail", "0.2:100"}, `again proxy: --fail "0.2:100": want share[:status], such as 0.2:503, with a status from 200 to 599 (503 by default)`},
		{[]string{"proxy", "--to", "http://x", "--fail", "0.2:101"}, `again proxy: --fail "0.2:101": want share[:status], such as 0.2:503, with a status from 200 to 599 (503 by default)`},
		{[]string{"proxy", "--to", "http://x", "--fail", "0.2:600"}, `again proxy: --fail "0.2:600": want share[:status], such as 0.2:503, with a status from 200 to 599 (503 by default)`},
		{[]string{"proxy", "--to", "http://x", "--scenario", status101}, "again proxy: --scenario " + status101 + `: faults[0].status "101": want a status from 200 to 599`},
		{[]string{"proxy", "--to", "http://x", "--listen", "127.0.0.1:99999"}, `again proxy: --listen "127.0.0.1:99999": want host:port or port, port from 0 to 65535, such as 127.0.0.1:8080`},
		{[]string{"proxy", "--to", "http://x", "--listen", "host:"}, `again proxy: --listen "host:": want host:port or port, port from 0 to 65535, such as 127.0.0.1:8080`},
		// TEST-NET-1 (RFC 5737): an address no machine of the test's has.
		{[]string{"proxy", "--to", "http://x", "--listen", "192.0.2.1:8080"}, `again proxy: --listen "192.0.2.1:8080": want host:port or port, port from 0 to 65535, such as 127.0.0.1:8080, a host of this machine; cannot listen there (bind: cannot assign requested address)`},
		// Retry-After carries whole seconds, as the help says.
		{[]string{"proxy", "--to", "http://x", "--retry-after", "1500ms"}, `again proxy: --retry-after "1500ms": want a duration in whole seconds, such as 2s, or date:duration for an HTTP date`},
		// A duration needs a unit, as in every command.
		{[]string{"proxy", "--to", "http://x", "--latency", "50"}, `again proxy: --latency "50": want a duration with a unit, such as 50s or 50ms (a bare number is seconds to timeout and curl, milliseconds to the calculator page)`},
		{[]string{"proxy", "--to", "http://x", "--retry-after", "date:2"}, `again proxy: --retry-after "2": want a duration with a unit, such as 2s or 2ms (a bare number is seconds to timeout and curl, milliseconds to the calculator page)`},
		{[]string{"proxy", "--to", "http://x", "--outage", "20s@10"}, `again proxy: --outage "10": want a duration with a unit, such as 10s or 10ms (a bare number is seconds to timeout and curl, milliseconds to the calculator page)`},
		// A rate is n/unit, as in every command; a bare number needs a unit.
		{[]string{"proxy", "--to", "http://x", "--rate", "100"}, `again proxy: --rate "100": want a rate with a unit: 100/s, 100/m or another n/unit such as 10/100ms`},
		{[]string{"proxy", "--to", "http://x", "--rate", "100/sec"}, `again proxy: --rate "100/sec": want n/unit, such as 40/s, 10/100ms or 600/m, n whole: a 429 beyond n requests per unit`},
		{[]string{"proxy", "--to", "http://x", "--rate", "0.5/s"}, `again proxy: --rate "0.5/s": want n/unit, such as 40/s, 10/100ms or 600/m, n whole: a 429 beyond n requests per unit`},
		{[]string{"proxy", "--to", "http://x", "--format", "xml"}, `again proxy: --format "xml": want one of text or json`},
		{[]string{"proxy", "--to", "http://x", "--shed", "-1"}, `again proxy: --shed "-1": want a whole number (0 for no shedding) or adaptive`},
		{[]string{"proxy", "--to", "http://x", "--shed", "gradient2"}, `again proxy: --shed "gradient2": want a whole number (0 for no shedding) or adaptive`},
		{[]string{"proxy", "--to", "http://x", "--scenario", "/nonexistent.json"}, "again proxy: --scenario: open /nonexistent.json: no such file or directory"},
	} {
		cmdtest.WantUsageError(t, run(t, tc.args...), tc.want)
	}
}

// The help's figures are the fault package's.
func TestHelpFigures(t *testing.T) {
	cmd := NewCmd(&cmdutil.Env{})
	long := cmd.Long + cmd.Flags().FlagUsages()
	for _, want := range []string{
		fmt.Sprintf("from %d to %d", fault.MinStatus, fault.MaxStatus),
		fmt.Sprintf("after 1 to %d bytes", fault.MaxDrawnBytes),
	} {
		if !strings.Contains(long, want) {
			t.Errorf("again proxy --help does not say %q", want)
		}
	}
}

// An address this machine has but cannot listen on now is a failure, not
// a usage error (exit 1), and still names --listen.
func TestListenInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	r := run(t, "proxy", "--to", "http://x", "--listen", addr)
	want := "again proxy: --listen " + addr + ": cannot listen on " + addr + ": bind: address already in use\n"
	if r.Code != cmdutil.ExitFailure || r.Stdout != "" || r.Stderr != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", r.Code, r.Stdout, r.Stderr, want)
	}
}

// serve runs proxyRun on a loopback listener until the test's cancel, and
// returns the proxy's URL and a function that stops it and returns its
// report.
func serve(t *testing.T, opts *Options) (string, func() string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	opts.Env = &cmdutil.Env{Stdout: &out, Stderr: &errb}
	opts.Listener = ln
	if opts.Format == "" {
		opts.Format = "text"
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- proxyRun(ctx, opts) }()
	stopped := false
	stop := func() string {
		if !stopped {
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Errorf("proxyRun: %v", err)
			}
		}
		return out.String()
	}
	t.Cleanup(func() { stop() })
	return "http://" + ln.Addr().String(), stop
}

func TestReport(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer up.Close()
	dir := t.TempDir()
	scenario := filepath.Join(dir, "s.json")
	os.WriteFile(scenario, []byte(`{"faults": [{"kind": "status", "status": 503, "times": 2}]}`), 0o644)
	url, stop := serve(t, &Options{To: up.URL, Scenario: scenario, Format: "json"})
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	var codes []int
	for range 3 {
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
	}
	if codes[0] != 503 || codes[1] != 503 || codes[2] != 200 {
		t.Errorf("a scenario of 2 failures: statuses %v", codes)
	}
	c.CloseIdleConnections()
	var s struct {
		Requests int64            `json:"requests"`
		Faults   map[string]int64 `json:"faults"`
	}
	if err := json.Unmarshal([]byte(stop()), &s); err != nil || s.Requests != 3 || s.Faults["status"] != 2 {
		t.Errorf("report %+v, %v; want 3 requests and 2 status faults", s, err)
	}
}

// TestShed: with --shed 1, a request that finds the upstream busy and the
// queue unable to serve it in time is answered by the proxy at once, 503
// with a Retry-After, and counted in the report; the upstream never sees
// it.
func TestShed(t *testing.T) {
	busy, release := make(chan struct{}), make(chan struct{})
	var upstream sync.WaitGroup
	var seen []string
	var mu sync.Mutex
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path)
		mu.Unlock()
		if r.URL.Path == "/slow" {
			close(busy)
			<-release
		}
		io.WriteString(w, "ok")
	}))
	defer up.Close()
	url, stop := serve(t, &Options{To: up.URL, Shed: "1", Format: "json"})
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	upstream.Add(1)
	go func() {
		defer upstream.Done()
		if resp, err := c.Get(url + "/slow"); err == nil {
			resp.Body.Close()
		}
	}()
	<-busy
	// An unknown class is never queued: shed at once while the permit is
	// held.
	resp := unknownClass(t, c, url+"/shed")
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a request shed by the proxy: %d, Retry-After %q; want 503 with one", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	close(release)
	upstream.Wait()
	c.CloseIdleConnections()
	wantShedReport(t, stop(), 2)
	if !slices.Equal(seen, []string{"/slow"}) {
		t.Errorf("the upstream saw %q, want only /slow", seen)
	}
}

// TestShedAdaptive: --shed adaptive admits as many requests as the
// adaptive limit's initial 100 at once; one more of a class the proxy does
// not know, which is never queued, is shed; all are counted.
func TestShedAdaptive(t *testing.T) {
	const initial = 100 // cmdutil.ShedAdaptiveLimit
	arrived, release := make(chan struct{}, initial), make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			arrived <- struct{}{}
			<-release
		}
		io.WriteString(w, "ok")
	}))
	defer up.Close()
	url, stop := serve(t, &Options{To: up.URL, Shed: "adaptive", Format: "json"})
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	var wg sync.WaitGroup
	for range initial {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if resp, err := c.Get(url + "/slow"); err == nil {
				resp.Body.Close()
			}
		}()
	}
	for range initial {
		<-arrived
	}
	if resp := unknownClass(t, c, url+"/shed"); resp.StatusCode != 503 {
		t.Errorf("a request beyond the adaptive limit's initial %d: %d, want 503", initial, resp.StatusCode)
	}
	close(release)
	wg.Wait()
	if resp, err := c.Get(url + "/after"); err != nil || resp.StatusCode != 200 {
		t.Errorf("a request once the upstream is free: %v, %v; want 200", resp, err)
	} else {
		resp.Body.Close()
	}
	c.CloseIdleConnections()
	wantShedReport(t, stop(), initial+2)
}

// unknownClass sends c a GET of url in a class the proxy does not know,
// which is never queued, and returns its response, body closed.
func unknownClass(t *testing.T, c *http.Client, url string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Again-Criticality", "BULK")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// wantShedReport checks that the JSON report counts requests and one
// request shed for a full queue.
func wantShedReport(t *testing.T, report string, requests int64) {
	t.Helper()
	var s struct {
		Requests int64            `json:"requests"`
		Shed     map[string]int64 `json:"shed"`
	}
	if err := json.Unmarshal([]byte(report), &s); err != nil || s.Requests != requests || s.Shed["queue_full"] != 1 {
		t.Errorf("report %+v, %v; want %d requests, 1 shed for queue_full", s, err, requests)
	}
}

// curl through the proxy: a plain request, a failure with its
// Retry-After, and curl's own retry honouring it.
func TestCurl(t *testing.T) {
	if testing.Short() {
		t.Skip("runs curl")
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal("curl is needed (apt-get install -y curl; scripts/test installs it)")
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "upstream "+r.URL.Path) }))
	defer up.Close()
	url, stop := serve(t, &Options{To: up.URL, Flags: proxymodel.Flags{Fail: []string{"1:503"}, RetryAfter: "1s", Match: []string{"path=/fail"}}})
	run := func(args ...string) (string, error) {
		cmd := exec.Command(curl, append([]string{"-sS", "--noproxy", "*"}, args...)...)
		out, err := cmd.Output()
		return string(out), err
	}
	if out, err := run(url + "/hello"); out != "upstream /hello" || err != nil {
		t.Errorf("curl /hello: %q, %v", out, err)
	}
	out, err := run("-o", "/dev/null", "-w", "%{http_code} %header{retry-after}", url+"/fail")
	if out != "503 1" || err != nil {
		t.Errorf("curl /fail: %q, %v; want 503 and Retry-After 1", out, err)
	}
	var ee *exec.ExitError
	if _, err := run("-f", url+"/fail"); !errors.As(err, &ee) || ee.ExitCode() != 22 {
		t.Errorf("curl -f /fail: %v, want exit 22", err)
	}
	if report := stop(); !strings.Contains(report, "fault status") {
		t.Errorf("report:\n%s\nwant a row of status faults", report)
	}
}

// lockedBuffer is a bytes.Buffer safe for the proxy's goroutine to write
// while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// On a terminal, a live line on stderr, rewritten in place each second.
func TestLiveLine(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer up.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var out, errb lockedBuffer
	live := true
	opts := &Options{Env: &cmdutil.Env{Stdout: &out, Stderr: &errb}, Listener: ln, To: up.URL, Format: "text", Live: &live,
		Flags: proxymodel.Flags{Fail: []string{"1:503"}}}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- proxyRun(ctx, opts) }()
	c := &http.Client{Transport: &http.Transport{}}
	resp, err := c.Get("http://" + ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	c.CloseIdleConnections()
	const want = "\r\033[Kagain proxy: 1 requests, 1 status, 0 upstream errors"
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(errb.String(), want); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("stderr %q, want the live line %q", errb.String(), want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(errb.String(), "\r\033[K") || !strings.Contains(out.String(), "fault status") {
		t.Errorf("stderr %q, stdout %q: want the live line cleared and the table", errb.String(), out.String())
	}
}

// curlPath returns curl's path, or fails the test (skipped under -short).
func curlPath(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs curl")
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal("curl is needed (apt-get install -y curl; scripts/test installs it)")
	}
	return curl
}

// curlGot is what curl got of one request: the status line and the
// headers as they came (-D), the body's bytes, and curl's exit status.
type curlGot struct {
	head []string // the header lines, without the status line, in order
	body []byte
	exit int
}

// curlGet fetches url with curl and the extra arguments, such as -H.
func curlGet(t *testing.T, url string, args ...string) curlGot {
	t.Helper()
	dir := t.TempDir()
	hf, bf := filepath.Join(dir, "head"), filepath.Join(dir, "body")
	cmd := exec.Command(curlPath(t), append([]string{"-sS", "--noproxy", "*", "-D", hf, "-o", bf}, append(args, url)...)...)
	got := curlGot{}
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
		got.exit = ee.ExitCode()
	}
	head, _ := os.ReadFile(hf)
	got.body, _ = os.ReadFile(bf)
	lines := strings.Split(strings.TrimSpace(string(head)), "\r\n")
	got.head = lines[1:]
	return got
}

// rawUpstream is an HTTP/1.1 server written by hand, so that its answers
// are exactly the bytes the test says: no Date, no Content-Type, unless
// given. /gzip answers a body gzipped only to a request that accepts gzip
// (a compressing server), with a Content-Length; /chunked answers 100 KB
// without one. It records each request's Accept-Encoding.
type rawUpstream struct {
	ln       net.Listener
	mu       sync.Mutex
	accepted []string // Accept-Encoding of each request, "" for none
	wg       sync.WaitGroup
}

const chunkedLen = 100 << 10

var plainBody = strings.Repeat("the same bytes, whatever the proxy ", 200)

func newRawUpstream(t *testing.T) *rawUpstream {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &rawUpstream{ln: ln}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	io.WriteString(zw, plainBody)
	zw.Close()
	u.wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			u.wg.Go(func() {
				defer conn.Close()
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					return
				}
				ae := req.Header.Get("Accept-Encoding")
				u.mu.Lock()
				u.accepted = append(u.accepted, ae)
				u.mu.Unlock()
				w := bufio.NewWriter(conn)
				defer w.Flush()
				switch req.URL.Path {
				case "/gzip":
					if strings.Contains(ae, "gzip") {
						fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nVary: Accept-Encoding\r\nX-Upstream: raw\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", gz.Len())
						w.Write(gz.Bytes())
						return
					}
					fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nVary: Accept-Encoding\r\nX-Upstream: raw\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(plainBody), plainBody)
				case "/chunked":
					io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
					chunk := strings.Repeat("c", 8<<10)
					for range chunkedLen / len(chunk) {
						fmt.Fprintf(w, "%x\r\n%s\r\n", len(chunk), chunk)
					}
					io.WriteString(w, "0\r\n\r\n")
				default:
					io.WriteString(w, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
				}
			})
		}
	})
	t.Cleanup(func() { ln.Close(); u.wg.Wait() })
	return u
}

func (u *rawUpstream) URL() string { return "http://" + u.ln.Addr().String() }

func (u *rawUpstream) requests() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.accepted...)
}

// What is not faulted passes through as it came: the same headers (but
// Connection, which is the hop's) and the same bytes, whether the client
// asks for gzip or not. The proxy once asked a compressing upstream for
// gzip on a client's behalf and decompressed the answer: a chunked body
// without its Content-Length and Content-Encoding.
func TestCurlByteExact(t *testing.T) {
	u := newRawUpstream(t)
	url, _ := serve(t, &Options{To: u.URL()})
	endToEnd := func(head []string) []string {
		var out []string
		for _, l := range head {
			if !strings.HasPrefix(strings.ToLower(l), "connection:") {
				out = append(out, strings.ToLower(l))
			}
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		name string
		args []string
		ae   string // the Accept-Encoding the upstream should see
	}{{"no Accept-Encoding", nil, ""}, {"gzip asked", []string{"-H", "Accept-Encoding: gzip"}, "gzip"}} {
		t.Run(tc.name, func(t *testing.T) {
			direct := curlGet(t, u.URL()+"/gzip", tc.args...)
			proxied := curlGet(t, url+"/gzip", tc.args...)
			if direct.exit != 0 || proxied.exit != 0 {
				t.Fatalf("curl exit statuses %d direct, %d through the proxy; want 0", direct.exit, proxied.exit)
			}
			if !bytes.Equal(direct.body, proxied.body) {
				t.Errorf("through the proxy, %d bytes; directly, %d other bytes", len(proxied.body), len(direct.body))
			}
			if d, p := endToEnd(direct.head), endToEnd(proxied.head); !slices.Equal(d, p) {
				t.Errorf("headers through the proxy\n%s\nwant those of the upstream\n%s", strings.Join(p, "\n"), strings.Join(d, "\n"))
			}
			if got := u.requests(); got[len(got)-1] != tc.ae {
				t.Errorf("the upstream saw Accept-Encoding %q through the proxy, want %q, the client's", got[len(got)-1], tc.ae)
			}
		})
	}
}

// --cut and --reset mid-body act on the upstream's own body: half of a
// gzipped answer's Content-Length, and part of a chunked one (a draw with
// the seed from 1 to 4096 bytes), never nothing.
func TestCurlCutAndMidBodyReset(t *testing.T) {
	u := newRawUpstream(t)
	t.Run("cut, a compressing upstream", func(t *testing.T) {
		url, _ := serve(t, &Options{To: u.URL(), Flags: proxymodel.Flags{Cut: []string{"1"}}})
		for _, args := range [][]string{nil, {"-H", "Accept-Encoding: gzip"}} {
			direct := curlGet(t, u.URL()+"/gzip", args...)
			got := curlGet(t, url+"/gzip", args...)
			n := len(direct.body)
			// curl: 18, partial file (a body shorter than its length).
			if got.exit != 18 || len(got.body) != n/2 || !bytes.Equal(got.body, direct.body[:n/2]) || !slices.Contains(got.head, fmt.Sprintf("Content-Length: %d", n)) {
				t.Errorf("--cut 1 %v: curl exit %d, %d bytes, headers %q; want 18, the first %d of %d, Content-Length %d", args, got.exit, len(got.body), got.head, n/2, n, n)
			}
		}
	})
	t.Run("reset mid-body, chunked", func(t *testing.T) {
		for _, seed := range []uint64{1, 2} {
			sizes := map[int]bool{}
			for range 2 {
				url, stop := serve(t, &Options{To: u.URL(), Seed: seed, SeedSet: true, Flags: proxymodel.Flags{Reset: []string{"mid-body:1"}}})
				got := curlGet(t, url+"/chunked")
				stop()
				if got.exit == 0 || len(got.body) < 1 || len(got.body) > 4096 {
					t.Errorf("--reset mid-body:1 --seed %d on %d bytes chunked: curl exit %d, %d bytes; want an error after 1 to 4096 bytes", seed, chunkedLen, got.exit, len(got.body))
				}
				sizes[len(got.body)] = true
			}
			if len(sizes) != 1 {
				t.Errorf("--seed %d twice: %v bytes, want the same", seed, sizes)
			}
		}
	})
}

// CONNECT asks for a tunnel to a host of the client's choosing: refused
// as Upgrade is, never forwarded to the upstream as "CONNECT /".
func TestCurlConnectRefused(t *testing.T) {
	u := newRawUpstream(t)
	url, stop := serve(t, &Options{To: u.URL()})
	cmd := exec.Command(curlPath(t), "-sS", "-o", "/dev/null", "-w", "%{http_connect}", "--proxytunnel", "-x", url, u.URL()+"/gzip")
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || string(out) != "501" {
		t.Errorf("curl through a CONNECT tunnel: %q, %v; want 501 and an error", out, err)
	}
	if n := len(u.requests()); n != 0 {
		t.Errorf("the upstream got %d requests, want none", n)
	}
	if report := stop(); !strings.Contains(report, "tunnels refused      1") {
		t.Errorf("report:\n%s\nwant 1 tunnel refused", report)
	}
}

// A signal, the usual end of a proxy, still prints the report, then ends
// with 128+N as every command does, not with 0 as if it had finished.
func TestSignalStatus(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	opts := &Options{Env: &cmdutil.Env{Stdout: &out, Stderr: &errb}, Listener: ln, To: "http://127.0.0.1:9", Format: "json"}
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(&cmdutil.SignalError{Signal: syscall.SIGINT})
	err = proxyRun(ctx, opts)
	var ee *cmdutil.ExitError
	if !errors.As(err, &ee) || ee.Code != 130 || err.Error() != "stopped: received SIGINT" {
		t.Errorf("proxyRun stopped by SIGINT: %v, want exit 130 and \"stopped: received SIGINT\"", err)
	}
	if !json.Valid(out.Bytes()) {
		t.Errorf("stdout %q, want the JSON report before the status", out.String())
	}
}

// -q leaves stderr to errors, as in every command: no start line, no live
// line even on a terminal; the report is still printed.
func TestQuiet(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	live := true
	opts := &Options{Env: &cmdutil.Env{Stdout: &out, Stderr: &errb}, Listener: ln, To: "http://127.0.0.1:9", Format: "json", Quiet: true, Live: &live}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := proxyRun(ctx, opts); err != nil {
		t.Fatal(err)
	}
	if errb.Len() != 0 || !json.Valid(out.Bytes()) {
		t.Errorf("proxy -q: stderr %q, stdout %q; want nothing on stderr and the JSON report", errb.String(), out.String())
	}
}
