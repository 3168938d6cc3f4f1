package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
)

//go:embed static
var static embed.FS

// CSP is the Content-Security-Policy the page is served with: only the
// page's own files may load (script-src 'self' admits its ES modules,
// app.js and what it imports), WebAssembly may compile ('wasm-unsafe-eval'),
// the page's own worker.js may run as a Web Worker (worker-src 'self': it
// runs the Go code off the main thread, so that typing never blocks), and
// nothing may connect anywhere else, so what a user types cannot leave
// the browser. index.html repeats it (minus frame-ancestors, which a meta
// element cannot set) for copies hosted elsewhere.
const CSP = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; style-src 'self'; " +
	"img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// contentType returns the Content-Type of an embedded file by its name.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".wasm":
		return "application/wasm"
	}
	return "application/octet-stream"
}

// file is one embedded file with its gzip-compressed form, made on first use.
type file struct {
	name, ctype, etag string
	raw               []byte
	once              sync.Once
	gz                []byte
}

func (f *file) gzipped() []byte {
	f.once.Do(func() {
		var b bytes.Buffer
		// The default level: within 1 % of the best for again.wasm, in a third of the time.
		w, _ := gzip.NewWriterLevel(&b, gzip.DefaultCompression) // the level is valid
		w.Write(f.raw)
		w.Close()
		if b.Len() < len(f.raw) {
			f.gz = b.Bytes()
		}
	})
	return f.gz
}

type handler struct {
	files map[string]*file // by URL path
}

// Handler returns an http.Handler that serves the page at "/" and its files
// next to it, with the CSP header and related security headers,
// gzip-compressed when the client accepts it, and with ETags so that
// browsers revalidate instead of downloading again. It answers GET and HEAD
// only. Each Handler compresses each file at most once, on first request.
// It is safe for concurrent use.
func Handler() http.Handler {
	h := &handler{files: map[string]*file{}}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(raw)
		name := strings.TrimPrefix(p, "static/")
		h.files["/"+name] = &file{name: name, ctype: contentType(name), etag: `"` + hex.EncodeToString(sum[:12]) + `"`, raw: raw}
		return nil
	})
	if err != nil {
		panic("web: embedded files unreadable: " + err.Error()) // cannot happen: go:embed checked them at build time
	}
	h.files["/"] = h.files["/index.html"]
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", CSP)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	f := h.files[r.URL.Path]
	if f == nil {
		http.NotFound(w, r)
		return
	}
	body, etag := f.raw, f.etag
	hd.Set("Vary", "Accept-Encoding")
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		if gz := f.gzipped(); gz != nil {
			body, etag = gz, strings.TrimSuffix(f.etag, `"`)+`-gz"`
			hd.Set("Content-Encoding", "gzip")
		}
	}
	hd.Set("Content-Type", f.ctype)
	hd.Set("Cache-Control", "no-cache")
	hd.Set("ETag", etag)
	if match := r.Header.Get("If-None-Match"); match != "" && etagMatches(match, etag) {
		hd.Del("Content-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Length", fmt.Sprint(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	w.Write(body)
}

// acceptsGzip reports whether an Accept-Encoding header allows gzip, that
// is, names gzip (or *) without q=0.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name != "gzip" && name != "*" {
			continue
		}
		q := strings.ReplaceAll(strings.ToLower(params), " ", "")
		return !(q == "q=0" || q == "q=0.0" || q == "q=0.00" || q == "q=0.000")
	}
	return false
}

func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

// Export writes the page's files into dir, creating it if needed, so that
// any static file server can host the page. The server must send .js
// files as JavaScript (text/javascript), as browsers run ES modules of no
// other type, and should send .wasm files as application/wasm for the
// fastest start (the page works either way). Browsers run no modules from
// file:// addresses: serve the directory, even from localhost.
// Existing files of the same names are replaced; other files in dir are
// left alone. Each file is written to a new temporary file in dir, then
// renamed over its name, so a symbolic link of that name is replaced, not
// written through, and no file outside dir is ever touched; a reader of
// the site sees each file old or new, never a part. Errors are the file
// system's (*fs.PathError), prefixed "web: ".
// Export reads only embedded data, so it is safe to call concurrently with
// itself (for different directories) and with a Handler serving.
func Export(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("web: %w", err)
	}
	return fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		if err := writeReplacing(filepath.Join(dir, path.Base(p)), raw); err != nil {
			return fmt.Errorf("web: %w", err)
		}
		return nil
	})
}

// writeReplacing writes raw to a new file beside name (os.CreateTemp opens
// with O_EXCL: never through a link) and renames it over name.
func writeReplacing(name string, raw []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(raw)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
