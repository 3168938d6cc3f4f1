package web_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/again-go/again/cmd/again/internal/web"
	"github.com/again-go/again/cmd/again/internal/web/internal/srcsum"
)

// TestWasmUpToDate fails when the Go code compiled into static/again.wasm
// changed after the last `go generate ./cmd/again/internal/web`: the page would then compute
// with old code and disagree with `again calc`.
func TestWasmUpToDate(t *testing.T) {
	want, err := srcsum.Sum(".", "./wasm")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("wasm.sum")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(got)) != want {
		t.Fatalf("static/again.wasm was built from other sources than the current ones (wasm.sum %s, sources %s); run `go generate ./cmd/again/internal/web` and commit the result", strings.TrimSpace(string(got)), want)
	}
}

func get(t *testing.T, h http.Handler, method, path string, hdr map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func TestHandlerFiles(t *testing.T) {
	h := web.Handler()
	for _, tc := range []struct {
		path, ctype string
	}{
		{"/", "text/html; charset=utf-8"},
		{"/index.html", "text/html; charset=utf-8"},
		{"/app.js", "text/javascript; charset=utf-8"},
		{"/app.css", "text/css; charset=utf-8"},
		{"/wasm_exec.js", "text/javascript; charset=utf-8"},
		{"/worker.js", "text/javascript; charset=utf-8"},
		{"/again.wasm", "application/wasm"},
		{"/favicon.svg", "image/svg+xml"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			res := get(t, h, "GET", tc.path, nil)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: status %d, want 200", tc.path, res.StatusCode)
			}
			if got := res.Header.Get("Content-Type"); got != tc.ctype {
				t.Errorf("GET %s: Content-Type %q, want %q", tc.path, got, tc.ctype)
			}
			if got := res.Header.Get("Content-Security-Policy"); got != web.CSP {
				t.Errorf("GET %s: Content-Security-Policy %q, want %q", tc.path, got, web.CSP)
			}
			if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("GET %s: X-Content-Type-Options %q, want nosniff", tc.path, got)
			}
			if res.Header.Get("Content-Encoding") != "" {
				t.Errorf("GET %s without Accept-Encoding: Content-Encoding %q, want none", tc.path, res.Header.Get("Content-Encoding"))
			}
		})
	}
}

func TestCSPAllowsOnlyOwnFiles(t *testing.T) {
	for _, want := range []string{"default-src 'none'", "script-src 'self' 'wasm-unsafe-eval'", "worker-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(web.CSP, want) {
			t.Errorf("CSP %q lacks %q", web.CSP, want)
		}
	}
	for _, bad := range []string{"unsafe-inline", "unsafe-eval'", "*", "http:", "https:", "data:", "blob:"} {
		if strings.Contains(strings.ReplaceAll(web.CSP, "'wasm-unsafe-eval'", ""), bad) {
			t.Errorf("CSP %q allows %q", web.CSP, bad)
		}
	}
	// The copy in index.html protects pages hosted with web.Export.
	html, err := os.ReadFile("static/index.html")
	if err != nil {
		t.Fatal(err)
	}
	meta := strings.Replace(web.CSP, "; frame-ancestors 'none'", "", 1)
	if !bytes.Contains(html, []byte(`content="`+meta+`"`)) {
		t.Errorf("index.html's CSP meta element differs from web.CSP without frame-ancestors: %q", meta)
	}
}

func TestHandlerGzip(t *testing.T) {
	h := web.Handler()
	raw, err := io.ReadAll(get(t, h, "GET", "/again.wasm", nil).Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		accept string
		gzip   bool
	}{
		{"gzip", true},
		{"br, gzip;q=0.8", true},
		{"*", true},
		{"gzip;q=0", false},
		{"br", false},
		{"", false},
	} {
		t.Run(tc.accept, func(t *testing.T) {
			res := get(t, h, "GET", "/again.wasm", map[string]string{"Accept-Encoding": tc.accept})
			if got := res.Header.Get("Content-Encoding") == "gzip"; got != tc.gzip {
				t.Fatalf("Accept-Encoding %q: gzip %v, want %v", tc.accept, got, tc.gzip)
			}
			if res.Header.Get("Vary") != "Accept-Encoding" {
				t.Errorf("Vary = %q, want Accept-Encoding", res.Header.Get("Vary"))
			}
			body := io.Reader(res.Body)
			if tc.gzip {
				zr, err := gzip.NewReader(res.Body)
				if err != nil {
					t.Fatal(err)
				}
				body = zr
			}
			got, err := io.ReadAll(body)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, raw) {
				t.Errorf("Accept-Encoding %q: body of %d bytes differs from the %d-byte file", tc.accept, len(got), len(raw))
			}
		})
	}
}

func TestHandlerRevalidation(t *testing.T) {
	h := web.Handler()
	for _, enc := range []string{"", "gzip"} {
		res := get(t, h, "GET", "/app.js", map[string]string{"Accept-Encoding": enc})
		etag := res.Header.Get("ETag")
		if etag == "" || res.Header.Get("Cache-Control") != "no-cache" {
			t.Fatalf("Accept-Encoding %q: ETag %q, Cache-Control %q; want an ETag and no-cache", enc, etag, res.Header.Get("Cache-Control"))
		}
		res = get(t, h, "GET", "/app.js", map[string]string{"Accept-Encoding": enc, "If-None-Match": etag})
		if res.StatusCode != http.StatusNotModified {
			t.Errorf("Accept-Encoding %q, If-None-Match %s: status %d, want 304", enc, etag, res.StatusCode)
		}
	}
	res := get(t, h, "GET", "/app.js", map[string]string{"If-None-Match": `"stale"`})
	if res.StatusCode != http.StatusOK {
		t.Errorf("stale If-None-Match: status %d, want 200", res.StatusCode)
	}
}

func TestHandlerRejects(t *testing.T) {
	h := web.Handler()
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/nope.js", http.StatusNotFound},
		{"GET", "/static/app.js", http.StatusNotFound},
		{"GET", "/../web.go", http.StatusNotFound},
		{"POST", "/", http.StatusMethodNotAllowed},
		{"PUT", "/app.js", http.StatusMethodNotAllowed},
	} {
		res := get(t, h, tc.method, tc.path, nil)
		if res.StatusCode != tc.status {
			t.Errorf("%s %s: status %d, want %d", tc.method, tc.path, res.StatusCode, tc.status)
		}
		if res.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("%s %s: no Content-Security-Policy", tc.method, tc.path)
		}
	}
	res := get(t, h, "HEAD", "/app.css", nil)
	if b, _ := io.ReadAll(res.Body); res.StatusCode != http.StatusOK || len(b) != 0 || res.Header.Get("Content-Length") == "" {
		t.Errorf("HEAD /app.css: status %d, %d body bytes, Content-Length %q; want 200, no body, a length", res.StatusCode, len(b), res.Header.Get("Content-Length"))
	}
}

func TestExport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "site")
	if err := web.Export(dir); err != nil {
		t.Fatal(err)
	}
	h := web.Handler()
	for _, name := range []string{"index.html", "app.js", "app.css", "again.wasm", "wasm_exec.js", "favicon.svg"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("Export wrote no %s: %v", name, err)
		}
		want, _ := io.ReadAll(get(t, h, "GET", "/"+name, nil).Body)
		if !bytes.Equal(got, want) {
			t.Errorf("exported %s differs from the served one", name)
		}
	}
	// A file in the way of the directory is an error, not a panic.
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o644)
	if err := web.Export(blocker); err == nil {
		t.Errorf("Export(%q) over a regular file = nil, want an error", blocker)
	}
}
