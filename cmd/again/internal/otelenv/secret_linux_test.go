package otelenv

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/again-go/again/cmd/again/internal/otelenv/otlptest"

	"golang.org/x/sys/unix"
)

// stderrOf runs f with the process's file descriptor 2 read into the
// returned text: what the SDK's default logger (stdr, on os.Stderr since
// init) would print.
func stderrOf(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved, err := unix.Dup(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Dup2(int(w.Fd()), 2); err != nil {
		t.Fatal(err)
	}
	read := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		read <- string(b)
	}()
	func() {
		defer func() {
			unix.Dup2(saved, 2)
			unix.Close(saved)
			w.Close()
		}()
		f()
	}()
	out := <-read
	r.Close()
	return out
}

// TestHeaderSecret checks a malformed header value in the real
// environment: the SDK, which reads OTEL_EXPORTER_OTLP_HEADERS itself,
// prints nothing (its logger is Start's, which keeps no values), the one
// line names the key only, and the header is not sent.
func TestHeaderSecret(t *testing.T) {
	c := otlptest.New(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", c.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20SECRET%zz")
	var warnings []string
	printed := stderrOf(t, func() {
		s := Start(t.Context(), Options{Lookup: os.LookupEnv, Warn: func(l string) { warnings = append(warnings, l) }})
		record(s)
		s.Shutdown(nil, nil)
	})
	if strings.Contains(printed, "SECRET") {
		t.Errorf("the SDK printed the header's value:\n%s", printed)
	}
	want := "OTEL_EXPORTER_OTLP_HEADERS: the value of authorization is malformed (percent-encoding); not sent"
	if strings.Join(warnings, "\n") != want {
		t.Errorf("warnings %q, want %q", warnings, want)
	}
	if c.Requests() == 0 {
		t.Error("nothing was exported")
	}
	for _, h := range c.Headers() {
		if h.Get("Authorization") != "" {
			t.Errorf("the malformed header was sent: %q", h.Get("Authorization"))
		}
	}
}
