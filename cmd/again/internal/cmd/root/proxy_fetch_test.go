package root

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The again program against itself: `again fetch` through `again proxy`,
// both run in-process as the program runs them. fetch retries the
// proxy's scripted failures and gets the upstream's body whole.
func TestFetchThroughProxy(t *testing.T) {
	body := strings.Repeat("0123456789", 1000)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) }))
	defer up.Close()
	dir := t.TempDir()
	scenario := filepath.Join(dir, "storm.json")
	os.WriteFile(scenario, []byte(`{"faults": [
		{"kind": "status", "status": 503, "retry_after": "1s", "times": 1, "match": {"path": "/status"}},
		{"kind": "reset", "stage": "mid-body", "times": 1, "match": {"path": "/reset"}}]}`), 0o644)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // the proxy listens there itself, as the program would
	ctx, cancel := context.WithCancel(t.Context())
	var pout, perr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"proxy", "--listen", addr, "--to", up.URL, "--scenario", scenario}, nil, &pout, &perr)
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the proxy never listened")
		}
	}
	fetch := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Run(t.Context(), append([]string{"fetch", "--initial", "10ms", "--retries", "3"}, args...), nil, &out, &errb)
		return code, out.String(), errb.String()
	}
	start := time.Now()
	code, out, errs := fetch("http://" + addr + "/status")
	if code != 0 || out != body || !strings.Contains(errs, "503") {
		t.Errorf("fetch /status: exit %d, %d bytes, stderr %q; want 0, the body, a retry after the 503", code, len(out), errs)
	}
	if took := time.Since(start); took < time.Second {
		t.Errorf("fetch /status took %v: the Retry-After of 1 s was not honoured", took)
	}
	file := filepath.Join(dir, "out")
	code, _, errs = fetch("-o", file, "http://"+addr+"/reset")
	got, _ := os.ReadFile(file)
	if code != 0 || string(got) != body || errs == "" {
		t.Errorf("fetch -o /reset: exit %d, %d bytes, stderr %q; want 0, the whole body, a retry", code, len(got), errs)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("proxy: exit %d, stderr %q", code, perr.String())
	}
	for _, row := range []string{"fault status", "fault reset"} {
		if !strings.Contains(pout.String(), row) {
			t.Errorf("the proxy's report:\n%s\nwant a row %q", pout.String(), row)
		}
	}
}
