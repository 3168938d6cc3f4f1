package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
	proxymodel "github.com/again-go/again/cmd/again/internal/proxy"
)

var run = cmdtest.Runner(cmdtest.Commands(NewCmd))

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy"}, "again proxy: --to is required: the URL of the service to forward to"},
		{[]string{"proxy", "--to", "ftp://x"}, `again proxy: --to "ftp://x": want an http or https URL with a host, such as http://127.0.0.1:9000`},
		{[]string{"proxy", "--to", "http://x", "--fail", "2"}, `again proxy: proxy: --fail "2": want RATE[:STATUS], such as 0.2:503 (status 503 by default)`},
		{[]string{"proxy", "--to", "http://x", "--format", "xml"}, `again proxy: --format must be table or json, got "xml"`},
		{[]string{"proxy", "--to", "http://x", "--scenario", "/nonexistent.json"}, "again proxy: --scenario: open /nonexistent.json: no such file or directory"},
	} {
		cmdtest.WantUsageError(t, run(t, tc.args...), tc.want)
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
		opts.Format = "table"
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
	opts := &Options{Env: &cmdutil.Env{Stdout: &out, Stderr: &errb}, Listener: ln, To: up.URL, Format: "table", Live: &live,
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
