//go:build linux || freebsd || openbsd || netbsd

package web

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
)

// TestWebOpen runs `again web --open` with a stand-in xdg-open first on
// PATH that writes the URL it was given into a FIFO: the browser must be
// asked to open the very URL the command prints.
func TestWebOpen(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "opened")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" > '" + fifo + "'\n"
	if err := os.WriteFile(filepath.Join(dir, "xdg-open"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- againRun(ctx, []string{"web", "--listen", "127.0.0.1:0", "--open"}, strings.NewReader(""), pw, &stderr)
		pw.Close()
	}()
	first, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the first line of again web --open: %v", err)
	}
	go io.Copy(io.Discard, pr)
	url := strings.TrimSpace(strings.TrimPrefix(first, "Serving the backoff calculator at "))

	opened := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo) // blocks until the stand-in opens it for writing
		if err != nil {
			opened <- "error: " + err.Error()
			return
		}
		defer f.Close()
		line, _ := bufio.NewReader(f).ReadString('\n')
		opened <- strings.TrimSpace(line)
	}()
	select {
	case got := <-opened:
		if got != url {
			t.Errorf("xdg-open was asked to open %q, want the printed URL %q", got, url)
		}
	case <-time.After(30 * time.Second): // a bound on a hang, not a wait for something to happen
		t.Fatal("again web --open did not run xdg-open")
	}
	cancel()
	if code := <-done; code != cmdutil.ExitOK || stderr.String() != "" {
		t.Errorf("again web --open after cancellation: exit %d, stderr %q; want 0 and nothing", code, stderr.String())
	}
}
