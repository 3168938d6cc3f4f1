package root

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
	"github.com/again-go/again/cmd/again/internal/otelenv/otlptest"
)

// runOtel runs a command line in-process with the OTEL_ variables of kvs
// and the signals of signals (nil for none), as the program would.
func runOtel(t *testing.T, kvs string, signals <-chan os.Signal, args ...string) cmdtest.Result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	ctx := t.Context()
	if signals != nil {
		ctx = cmdutil.WithSignals(ctx, signals)
	}
	code := RunEnv(ctx, args, cmdutil.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, LookupEnv: otlptest.Env(kvs)})
	return cmdtest.Result{Code: code, Stdout: stdout.String(), Stderr: stderr.String()}
}

// okServer answers "ok" and counts the traceparent headers it got.
func okServer(t *testing.T, traceparents *atomic.Int32) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Traceparent") != "" && traceparents != nil {
			traceparents.Add(1)
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestTelemetryNeverStops runs fetch and run with the OTEL_ values a
// container may hold that again does not understand: each is one line on
// stderr, and the command's stdout and exit status are what they would be
// without it.
func TestTelemetryNeverStops(t *testing.T) {
	c := otlptest.New(t)
	target := okServer(t, nil)
	tests := []struct {
		env  string
		line string // the telemetry line, after "again CMD: telemetry: "
	}{
		{"OTEL_METRICS_EXPORTER=prometheus", "OTEL_METRICS_EXPORTER=prometheus ignored: again exports otlp or none"},
		{"OTEL_TRACES_EXPORTER=zipkin", "OTEL_TRACES_EXPORTER=zipkin ignored: again exports otlp or none"},
		{"OTEL_TRACES_EXPORTER=console", "OTEL_TRACES_EXPORTER=console ignored: again prints no telemetry, its output is the command's; it exports otlp or none"},
		{"OTEL_EXPORTER_OTLP_PROTOCOL=grpc OTEL_TRACES_EXPORTER=otlp",
			"OTEL_EXPORTER_OTLP_PROTOCOL=grpc: again exports OTLP over HTTP only (http/protobuf); traces and metrics not exported"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT=" + strings.TrimPrefix(c.URL, "http://"),
			"OTEL_EXPORTER_OTLP_ENDPOINT is not an http:// or https:// URL with a host (a host:port needs http:// before it); traces and metrics not exported"},
		{"OTEL_TRACES_EXPORTER=OTLP OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + c.URL + "/v1/traces", ""},
	}
	for _, tt := range tests {
		for _, cmd := range [][]string{{"fetch", target.URL}, {"run", "--", "sh", "-c", "printf ok"}} {
			t.Run(cmd[0]+" "+tt.env, func(t *testing.T) {
				r := runOtel(t, tt.env, nil, cmd...)
				want := ""
				if tt.line != "" {
					want = "again " + cmd[0] + ": telemetry: " + tt.line + "\n"
				}
				if r.Code != 0 || r.Stdout != "ok" || r.Stderr != want {
					t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant 0, ok and:\n%s", r.Code, r.Stdout, r.Stderr, want)
				}
			})
		}
	}
	if got := len(c.Named("again fetch")) + len(c.Named("again run")); got != 2 {
		t.Errorf("OTEL_TRACES_EXPORTER=OTLP: the collector got %d spans of the commands, want 2 (one each)", got)
	}
}

// TestTelemetryPropagators checks OTEL_PROPAGATORS on fetch's requests:
// traceparent by default, none with none or baggage alone.
func TestTelemetryPropagators(t *testing.T) {
	c := otlptest.New(t)
	for _, tt := range []struct {
		props string
		want  int32
	}{{"", 1}, {"OTEL_PROPAGATORS=none", 0}, {"OTEL_PROPAGATORS=baggage", 0}, {"OTEL_PROPAGATORS=tracecontext", 1}} {
		t.Run(tt.props, func(t *testing.T) {
			var n atomic.Int32
			target := okServer(t, &n)
			r := runOtel(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+c.URL+" "+tt.props, nil, "fetch", target.URL)
			if r.Code != 0 || n.Load() != tt.want {
				t.Errorf("exit %d, %d requests with traceparent, want 0 and %d; stderr:\n%s", r.Code, n.Load(), tt.want, r.Stderr)
			}
		})
	}
}

// TestTelemetryFlushSignals checks the flush against a collector that
// never answers: a signal during it bounds it to a second and the status
// is the signal's; a second ends it at once. The signals are on the
// command's channel before the flush begins, which reads them first.
func TestTelemetryFlushSignals(t *testing.T) {
	c := otlptest.NewSilent(t)
	target := okServer(t, nil)
	for _, tt := range []struct {
		name    string
		signals []os.Signal
		code    int
	}{
		{"SIGINT", []os.Signal{syscall.SIGINT}, 130},
		{"SIGTERM then SIGINT", []os.Signal{syscall.SIGTERM, syscall.SIGINT}, 143},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ch := make(chan os.Signal, len(tt.signals))
			for _, s := range tt.signals {
				ch <- s
			}
			begin := time.Now()
			r := runOtel(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+c.URL, ch, "fetch", target.URL)
			if d := time.Since(begin); d > 4*time.Second {
				t.Errorf("fetch took %v, want the flush cut well before its 5 s", d)
			}
			if r.Code != tt.code || r.Stdout != "ok" || !strings.Contains(r.Stderr, "stopped: received "+cmdutil.SignalName(tt.signals[0])) {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant %d after ok, and the signal named", r.Code, r.Stdout, r.Stderr, tt.code)
			}
		})
	}
}

// TestTelemetryFlushCtrlC runs the program, `again run -- true`, against a
// collector that never answers, and sends SIGINT once the flush has
// begun (the collector got a request): it exits 130 within about a
// second, not after the flush's 5 s.
func TestTelemetryFlushCtrlC(t *testing.T) {
	c := otlptest.NewSilent(t)
	cmd := cmdtest.AgainCommand(t, "run", "--", "true")
	cmd.Env = append(cmd.Env, "OTEL_EXPORTER_OTLP_ENDPOINT="+c.URL)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); c.Requests() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no export began within 30 s")
		}
	}
	begin := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	if d := time.Since(begin); d > 4*time.Second {
		t.Errorf("again exited %v after SIGINT, want about 1 s", d)
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d, want 130; stderr:\n%s", code, stderr.String())
	}
}

// TestTelemetryOneLine checks that however many exports fail, the run
// says one line, with the collector's text escaped, and its own status.
func TestTelemetryOneLine(t *testing.T) {
	c := otlptest.NewFailing(t, http.StatusInternalServerError, "\x1b]0;PWNED\a\x1b[2J")
	r := runOtel(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+c.URL, nil, "run", "--initial", "1ms", "--retries", "2", "--", "sh", "-c", "exit 3")
	lines := 0
	for _, l := range strings.Split(r.Stderr, "\n") {
		if strings.Contains(l, "telemetry") {
			lines++
		}
	}
	if r.Code != 3 || lines != 1 || strings.ContainsAny(r.Stderr, "\x1b\a") || !strings.Contains(r.Stderr, `\x1b]0;PWNED\x07\x1b[2J`) {
		t.Errorf("exit %d, %d lines about telemetry, stderr:\n%q\nwant 3, one line with the collector's text escaped", r.Code, lines, r.Stderr)
	}
}

// TestTelemetryHeaderSecret runs the program with a malformed header
// value: the SDK, which reads the variable itself, prints nothing of it,
// the one line names the key, and the command runs as without it.
func TestTelemetryHeaderSecret(t *testing.T) {
	c := otlptest.New(t)
	cmd := cmdtest.AgainCommand(t, "run", "--", "sh", "-c", "printf ok")
	cmd.Env = append(cmd.Env, "OTEL_EXPORTER_OTLP_ENDPOINT="+c.URL, "OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20SECRET%zz")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run()
	want := "again run: telemetry: OTEL_EXPORTER_OTLP_HEADERS: the value of authorization is malformed (percent-encoding); not sent\n"
	if code := cmd.ProcessState.ExitCode(); code != 0 || stdout.String() != "ok" || stderr.String() != want {
		t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant 0, ok and:\n%s", code, stdout.String(), stderr.String(), want)
	}
	if len(c.Named("again run")) != 1 {
		t.Errorf("the command's span did not arrive")
	}
}

// TestTelemetryFetchHedges checks that --hedge-after exports the hedges
// of fetch: one sent and won, for a first copy that hangs (the first
// request to arrive: the hedge leaves 100 ms after it, far more than a
// loopback connection takes).
func TestTelemetryFetchHedges(t *testing.T) {
	c := otlptest.New(t)
	var n atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			<-r.Context().Done()
			return
		}
		io.WriteString(w, "ok")
	}))
	defer target.Close()
	r := runOtel(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+c.URL, nil, "fetch", "--hedge-after", "100ms", target.URL)
	if r.Code != 0 || r.Stdout != "ok" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	sent, won := c.Point("again.hedge.sent", "again.hedge.name=fetch"), c.Point("again.hedge.won", "again.hedge.name=fetch")
	if sent != "1" || won != "1" {
		t.Errorf("again.hedge.sent = %q, again.hedge.won = %q; want 1 each (metrics: %q)", sent, won, c.MetricNames())
	}
}

// TestTelemetryFetchRepeat checks that --repeat exports what a single
// fetch does, for each of its requests (3 calls, one of them retried),
// and that its summary and -v's lines still tell the hedge that won: the
// first copy of the first request hangs, and its hedge leaves 100 ms
// later.
func TestTelemetryFetchRepeat(t *testing.T) {
	c := otlptest.New(t)
	var n atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) {
		case 1:
			<-r.Context().Done()
			return
		case 3:
			w.WriteHeader(http.StatusServiceUnavailable) // the second request's first attempt
			return
		}
		io.WriteString(w, "ok")
	}))
	defer target.Close()
	r := runOtel(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+c.URL, nil, "fetch", "-v", "--repeat", "3", "--initial", "1ms", "--hedge-after", "100ms", target.URL)
	if r.Code != 0 || !strings.Contains(r.Stdout, "requests  3 (0 failed)") || !strings.Contains(r.Stdout, "1 won") ||
		!strings.Contains(r.Stderr, "again fetch: attempt 1 answered by hedge 1") {
		t.Fatalf("exit %d, stdout %q; want 3 requests and 1 hedge won, said on stderr; stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	calls, retries := c.Point("again.retry.calls", "again.retry.name=fetch"), c.Point("again.retry.retries", "again.retry.name=fetch")
	if calls != "3" || retries == "" {
		t.Errorf("again.retry.calls = %q, again.retry.retries = %q; want 3 calls, and their retries (metrics: %q)", calls, retries, c.MetricNames())
	}
}
