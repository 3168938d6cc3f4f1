package web

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"go.uber.org/goleak"
)

// TestWebServes runs `again web` on a free loopback port, fetches the page
// from the printed URL and stops it as Ctrl-C would, by cancelling the
// context.
func TestWebServes(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- againRun(ctx, []string{"web", "--listen", "127.0.0.1:0"}, strings.NewReader(""), pw, &stderr)
		pw.Close()
	}()
	first, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the first line of again web: %v (stderr %q)", err, stderr.String())
	}
	go io.Copy(io.Discard, pr) // the rest of stdout
	const prefix = "Serving the backoff calculator at "
	if !strings.HasPrefix(first, prefix+"http://127.0.0.1:") {
		t.Fatalf("first line %q, want %q and a loopback URL", first, prefix)
	}
	url := strings.TrimSpace(strings.TrimPrefix(first, prefix))
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("Exponential backoff calculator")) {
		t.Errorf("GET %s: status %d, body %.80q; want 200 and the page", url, res.StatusCode, body)
	}
	if res.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("GET %s: no Content-Security-Policy header", url)
	}
	cancel()
	if code := <-done; code != cmdutil.ExitOK {
		t.Errorf("again web after cancellation: exit %d, stderr %q; want 0", code, stderr.String())
	}
	if stderr.Len() != 0 {
		t.Errorf("again web on loopback wrote to stderr: %q", stderr.String())
	}
}

func TestWebExport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "site")
	r := run(t, "web", "--export", dir)
	if r.Code != cmdutil.ExitOK || r.Stdout != "Wrote the calculator page to "+dir+"\n" || r.Stderr != "" {
		t.Fatalf("again web --export: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	for _, name := range []string{"index.html", "app.js", "app.css", "again.wasm", "wasm_exec.js"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("--export wrote no %s: %v", name, err)
		}
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	want := "again web: cannot write the page into " + file + ": mkdir " + file + ": not a directory\n"
	if r := run(t, "web", "--export", file); r.Code != cmdutil.ExitFailure || r.Stderr != want {
		t.Errorf("again web --export onto a file: exit %d, stderr %q; want exit 1 and %q", r.Code, r.Stderr, want)
	}
}

func TestWebUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"web", "--listen", "localhost"}, `again web: --listen "localhost": want host:port or port, port from 0 to 65535, such as 127.0.0.1:8080`},
		{[]string{"web", "--listen", "127.0.0.1:99999"}, `again web: --listen "127.0.0.1:99999": want host:port or port, port from 0 to 65535, such as 127.0.0.1:8080`},
		{[]string{"web", "--listen", "127.0.0.1:-1"}, `again web: --listen "127.0.0.1:-1": want host:port or port, port from 0 to 65535, such as 127.0.0.1:8080`},
		{[]string{"web", "--export", "x", "--open"}, `again web: --export writes files and serves nothing; it cannot be combined with --listen or --open`},
		{[]string{"web", "--export", "x", "--listen", ":0"}, `again web: --export writes files and serves nothing; it cannot be combined with --listen or --open`},
		// The old spelling still works, with its warning first.
		{[]string{"web", "--export", "x", "--addr", ":0"}, "again web: --addr is now --listen; it still works, but write --listen\nagain web: --export writes files and serves nothing; it cannot be combined with --listen or --open"},
		{[]string{"web", "--export", ""}, `again web: --export "": want a directory`},
		{[]string{"web", "now"}, `again web: unexpected argument "now"; web takes only flags (see 'again web --help')`},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			wantUsageError(t, run(t, tt.args...), tt.want)
		})
	}
}

func TestWebListenError(t *testing.T) {
	// 192.0.2.1 (TEST-NET-1) is never an address of this machine.
	r := run(t, "web", "--listen", "192.0.2.1:0")
	if r.Code != cmdutil.ExitFailure || !strings.HasPrefix(r.Stderr, "again web: cannot listen on 192.0.2.1:0: ") || r.Stdout != "" {
		t.Errorf("again web on a foreign address: exit %d, stdout %q, stderr %q; want exit 1 and the listen error", r.Code, r.Stdout, r.Stderr)
	}
}

func TestWebHelp(t *testing.T) {
	r := run(t, "web", "--help")
	for _, want := range []string{"Examples:", "again web --open", "--export", "127.0.0.1:8080"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("again web --help lacks %q:\n%s", want, r.Stdout)
		}
	}
}

// --export refuses a directory that holds anything, saying what, unless
// --force; and it never writes through a symbolic link in it.
func TestWebExportRefusesAndNeverFollowsLinks(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "index.html")
	os.WriteFile(mine, []byte("my own page"), 0o644)
	outside := filepath.Join(t.TempDir(), "outside.js")
	os.WriteFile(outside, []byte("not the page's"), 0o644)
	if err := os.Symlink(outside, filepath.Join(dir, "app.js")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "z1"), nil, 0o644)
	r := run(t, "web", "--export", dir)
	wantUsageError(t, r, "again web: --export "+dir+`: the directory is not empty (it holds "app.js", "index.html", "notes.txt" and 1 more); name a new or empty directory, or add --force to replace the page's files in it`)
	if b, _ := os.ReadFile(mine); string(b) != "my own page" {
		t.Errorf("refused --export changed index.html to %q", b)
	}
	r = run(t, "web", "--export", dir, "--force")
	if r.Code != cmdutil.ExitOK {
		t.Fatalf("--force: exit %d, stderr %q", r.Code, r.Stderr)
	}
	if b, _ := os.ReadFile(outside); string(b) != "not the page's" {
		t.Errorf("--export wrote through the link app.js to a file outside the directory: %q", b)
	}
	if st, err := os.Lstat(filepath.Join(dir, "app.js")); err != nil || !st.Mode().IsRegular() {
		t.Errorf("app.js is %v, %v; want the page's file in place of the link", st, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Errorf("--force removed a file that is not the page's: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("--export left %s behind", e.Name())
		}
	}
	wantUsageError(t, run(t, "web", "--force"), "again web: --force goes with --export DIR; serving writes nothing")
}

func TestLineWriter(t *testing.T) {
	var b strings.Builder
	lg := log.New(cmdutil.LineWriter{W: &b, Prefix: "again web: "}, "", 0)
	lg.Printf("http: TLS handshake error from 127.0.0.1:1: \x1b[2J")
	lg.Print("two\nlines")
	want := "again web: TLS handshake error from 127.0.0.1:1: \\x1b[2J\nagain web: two\nagain web: lines\n"
	if b.String() != want {
		t.Errorf("lines %q, want %q", b.String(), want)
	}
}

// TestWebSignalStatus: a signal ends the server with 128+N and one line,
// as it ends every other command, not with 0 as if it had finished.
func TestWebSignalStatus(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(&cmdutil.SignalError{Signal: syscall.SIGINT})
	var stdout, stderr bytes.Buffer
	code := againRun(ctx, []string{"web", "--listen", "127.0.0.1:0"}, strings.NewReader(""), &stdout, &stderr)
	if code != 130 || stderr.String() != "again web: stopped: received SIGINT\n" {
		t.Errorf("again web stopped by SIGINT: exit %d, stderr %q; want 130 and %q", code, stderr.String(), "again web: stopped: received SIGINT\n")
	}
}

// TestWebAddrAlias: the old --addr still serves where it says, warning
// once, however often it is given.
func TestWebAddrAlias(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(&cmdutil.SignalError{Signal: syscall.SIGTERM})
	var stdout, stderr bytes.Buffer
	code := againRun(ctx, []string{"web", "--addr", "127.0.0.1:1", "--addr", "127.0.0.1:0"}, strings.NewReader(""), &stdout, &stderr)
	want := "again web: --addr is now --listen; it still works, but write --listen\nagain web: stopped: received SIGTERM\n"
	if code != 143 || stderr.String() != want || !strings.Contains(stdout.String(), "http://127.0.0.1:") {
		t.Errorf("again web --addr twice: exit %d, stdout %q, stderr %q; want 143, the URL and %q", code, stdout.String(), stderr.String(), want)
	}
}

// -q prints no URL lines, as -q silences progress in every command.
func TestWebQuiet(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(&cmdutil.SignalError{Signal: syscall.SIGINT})
	var stdout, stderr bytes.Buffer
	code := againRun(ctx, []string{"web", "-q", "--listen", "127.0.0.1:0"}, strings.NewReader(""), &stdout, &stderr)
	if code != 130 || stdout.Len() != 0 {
		t.Errorf("again web -q: exit %d, stdout %q; want 130 and nothing", code, stdout.String())
	}
}
