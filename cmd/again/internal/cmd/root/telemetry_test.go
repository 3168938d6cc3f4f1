package root

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
	"github.com/again-go/again/cmd/again/internal/otelenv/otlptest"
	"github.com/again-go/again/fleet/fleettest"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// TestCLIFetchTelemetry runs `again fetch` with an OTLP endpoint set, as
// a process, and checks what the receiver decoded: the command's span,
// one CLIENT span per attempt under it with the resend count, the trace
// context the server got, and the retry metrics, all sent before exit.
func TestCLIFetchTelemetry(t *testing.T) {
	rcv := otlptest.New(t)
	var n atomic.Int32
	var traceparent sync.Map
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		traceparent.Store(i, r.Header.Get("Traceparent"))
		if i == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer target.Close()
	cmd := cmdtest.AgainCommand(t, "fetch", "--initial", "1ms", "--max", "2ms", target.URL+"/items?key=secret")
	cmd.Env = append(cmd.Env, "OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.URL, "OTEL_SERVICE_NAME=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stdout.String() != "ok" {
		t.Fatalf("again fetch: %v, stdout %q; stderr:\n%s", err, stdout.String(), stderr.String())
	}
	roots, attempts := rcv.Named("again fetch"), rcv.Named("GET")
	if len(roots) != 1 || len(attempts) != 2 {
		t.Fatalf("received %d spans named again fetch and %d named GET, want 1 and 2; stderr:\n%s", len(roots), len(attempts), stderr.String())
	}
	root := roots[0]
	for i, a := range attempts {
		if !bytes.Equal(a.ParentSpanId, root.SpanId) || a.Kind != tracepb.Span_SPAN_KIND_CLIENT {
			t.Errorf("attempt %d: kind %v, not a child of the command's span", i+1, a.Kind)
		}
		if got := otlptest.Value(a.Attributes, "url.full"); got != target.URL+"/items?key=REDACTED" {
			t.Errorf("attempt %d: url.full %q, want the query value redacted", i+1, got)
		}
		tp, _ := traceparent.Load(int32(i + 1))
		if want := fmt.Sprintf("00-%x-%x-01", a.TraceId, a.SpanId); tp != want {
			t.Errorf("attempt %d: the server got traceparent %q, want %q", i+1, tp, want)
		}
	}
	if otlptest.Value(attempts[0].Attributes, "http.response.status_code") != "503" || len(attempts[0].Events) != 1 ||
		otlptest.Value(attempts[1].Attributes, "http.request.resend_count") != "1" {
		t.Errorf("attempts: a 503 with %d events, then resend_count %q; want a wait event, then 1",
			len(attempts[0].Events), otlptest.Value(attempts[1].Attributes, "http.request.resend_count"))
	}
	if got := rcv.Services()[0]; got != "again" {
		t.Errorf("service.name = %q, want again", got)
	}
	if got := rcv.Point("again.retry.calls", "again.retry.name=fetch", "again.retry.reason=success"); got != "1" {
		t.Errorf("again.retry.calls{fetch, success} = %q, want 1", got)
	}
	if got := rcv.Point("again.retry.attempts", "again.retry.name=fetch"); got != "1/2" {
		t.Errorf("again.retry.attempts{fetch} = %q, want one call of 2 attempts", got)
	}
}

// TestCLIRunTelemetry runs `again run` with OTLP exporters chosen by
// OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER and checks the command's
// span, with its give-up reason, one span per attempt, and the metrics.
func TestCLIRunTelemetry(t *testing.T) {
	rcv := otlptest.New(t)
	file := filepath.Join(t.TempDir(), "attempts")
	cmd := cmdtest.AgainCommand(t, "run", "--initial", "1ms", "--max", "2ms", "--retries", "2", "--",
		"sh", "-c", `echo attempt >> "$0"; exit 3`, file)
	cmd.Env = append(cmd.Env, "OTEL_TRACES_EXPORTER=otlp", "OTEL_METRICS_EXPORTER=otlp",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="+rcv.URL+"/v1/traces", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT="+rcv.URL+"/v1/metrics")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); cmd.ProcessState.ExitCode() != 3 {
		t.Fatalf("again run: %v, want exit 3; stderr:\n%s", err, stderr.String())
	}
	roots, attempts := rcv.Named("again run"), rcv.Named("sh")
	if len(roots) != 1 || len(attempts) != 3 {
		t.Fatalf("received %d spans named again run and %d named sh, want 1 and 3; stderr:\n%s", len(roots), len(attempts), stderr.String())
	}
	root := roots[0]
	if root.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || otlptest.Value(root.Attributes, "again.retry.reason") != "exhausted" ||
		otlptest.Value(root.Attributes, "process.exit.code") != "3" || len(root.Events) != 2 {
		t.Errorf("the command's span: status %v, reason %q, exit code %q, %d events; want an error, exhausted, 3 and 2 waits",
			root.Status, otlptest.Value(root.Attributes, "again.retry.reason"), otlptest.Value(root.Attributes, "process.exit.code"), len(root.Events))
	}
	for i, a := range attempts {
		if !bytes.Equal(a.ParentSpanId, root.SpanId) {
			t.Errorf("attempt %d is not a child of the command's span", i+1)
		}
	}
	if got := rcv.Point("again.retry.calls", "again.retry.name=run", "again.retry.reason=exhausted"); got != "1" {
		t.Errorf("again.retry.calls{run, exhausted} = %q, want 1", got)
	}
	if got := rcv.Point("again.retry.retries", "again.retry.name=run"); got != "1/2" {
		t.Errorf("again.retry.retries{run} = %q, want one call with 2 retries", got)
	}
}

// TestCLIRunTelemetryFleetBudget checks that the tokens left in a fleet
// budget (Redis) are exported at exit, read from the shared bucket.
func TestCLIRunTelemetryFleetBudget(t *testing.T) {
	s := fleettest.Start(t)
	rcv := otlptest.New(t)
	cmd := cmdtest.AgainCommand(t, "run", "--initial", "1ms", "--max", "2ms", "--retries", "2",
		"--budget", "redis://"+s.Addr()+"/0?key=otel&timeout=2s", "--", "sh", "-c", "exit 1")
	cmd.Env = append(cmd.Env, "OTEL_METRICS_EXPORTER=otlp", "OTEL_TRACES_EXPORTER=none",
		"OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.URL)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("again run: %v, want exit 1; stderr:\n%s", err, stderr.String())
	}
	// 10 tokens, and 3 failed attempts that could be retried: 7 left.
	if got := rcv.Point("again.budget.tokens", "again.budget.name=run"); got != "7" {
		t.Errorf("again.budget.tokens{run} = %q, want 7; stderr:\n%s", got, stderr.String())
	}
	if spans := rcv.Named("again run"); len(spans) != 0 {
		t.Errorf("OTEL_TRACES_EXPORTER=none, yet %d spans were sent", len(spans))
	}
}

// TestCLITelemetryNotUsage runs the program with an exporter again lacks,
// which stopped it with a usage error once: one line says it is ignored,
// and fetch does what it would without it (here: fail to connect, 1).
func TestCLITelemetryNotUsage(t *testing.T) {
	cmd := cmdtest.AgainCommand(t, "fetch", "--retries", "0", "http://127.0.0.1:1/")
	cmd.Env = append(cmd.Env, "OTEL_METRICS_EXPORTER=prometheus")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	_ = cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.HasPrefix(stderr.String(),
		"again fetch: telemetry: OTEL_METRICS_EXPORTER=prometheus ignored: again exports otlp or none\n") {
		t.Errorf("exit %d, stderr %q; want 1 and first the line that says the value is ignored", code, stderr.String())
	}
}
