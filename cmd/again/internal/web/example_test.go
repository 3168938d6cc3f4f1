package web_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/again-go/again/cmd/again/internal/web"
)

// Serve the page; a browser opening the server's URL gets the calculator.
func ExampleHandler() {
	srv := httptest.NewServer(web.Handler())
	defer srv.Close()

	res, err := http.Get(srv.URL + "/")
	if err != nil {
		fmt.Println(err)
		return
	}
	res.Body.Close()
	fmt.Println(res.Status)
	fmt.Println(res.Header.Get("Content-Type"))
	fmt.Println(res.Header.Get("Content-Security-Policy") == web.CSP)
	// Output:
	// 200 OK
	// text/html; charset=utf-8
	// true
}

// Write the page out for a static file host.
func ExampleExport() {
	dir, err := os.MkdirTemp("", "site")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	if err := web.Export(dir); err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range []string{"index.html", "app.js", "again.wasm", "wasm_exec.js"} {
		_, err := os.Stat(filepath.Join(dir, name))
		fmt.Println(name, err == nil)
	}
	// Output:
	// index.html true
	// app.js true
	// again.wasm true
	// wasm_exec.js true
}
