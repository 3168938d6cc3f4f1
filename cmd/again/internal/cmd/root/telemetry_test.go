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
	"github.com/again-go/again/fleet/fleettest"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// receiver is an OTLP/HTTP receiver on loopback: the protocol's real end
// (no collector is installed here), decoding what it gets with the OTLP
// protobuf definitions.
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	spans   []*tracepb.Span
	service []string // service.name of each batch
	metrics []*metricpb.Metric
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil || req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "want a POST of application/x-protobuf", http.StatusBadRequest)
			return
		}
		var resp proto.Message
		r.mu.Lock()
		defer r.mu.Unlock()
		switch req.URL.Path {
		case "/v1/traces":
			var m coltracepb.ExportTraceServiceRequest
			if err := proto.Unmarshal(body, &m); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			for _, rs := range m.ResourceSpans {
				r.service = append(r.service, value(rs.Resource.Attributes, "service.name"))
				for _, ss := range rs.ScopeSpans {
					r.spans = append(r.spans, ss.Spans...)
				}
			}
			resp = &coltracepb.ExportTraceServiceResponse{}
		case "/v1/metrics":
			var m colmetricpb.ExportMetricsServiceRequest
			if err := proto.Unmarshal(body, &m); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			for _, rm := range m.ResourceMetrics {
				for _, sm := range rm.ScopeMetrics {
					r.metrics = append(r.metrics, sm.Metrics...)
				}
			}
			resp = &colmetricpb.ExportMetricsServiceResponse{}
		default:
			http.NotFound(w, req)
			return
		}
		out, _ := proto.Marshal(resp)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(r.Close)
	return r
}

func value(kvs []*commonpb.KeyValue, key string) string {
	for _, kv := range kvs {
		if kv.Key == key {
			switch v := kv.Value.Value.(type) {
			case *commonpb.AnyValue_StringValue:
				return v.StringValue
			case *commonpb.AnyValue_IntValue:
				return fmt.Sprint(v.IntValue)
			case *commonpb.AnyValue_DoubleValue:
				return fmt.Sprint(v.DoubleValue)
			}
		}
	}
	return ""
}

// span returns the spans named name.
func (r *receiver) named(name string) []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range r.spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// sum returns the value of a counter's point, or "count/sum" of a
// histogram's, whose attributes include every key=value of attrs.
func (r *receiver) point(name string, attrs ...string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	match := func(kvs []*commonpb.KeyValue) bool {
		for _, a := range attrs {
			k, v, _ := strings.Cut(a, "=")
			if value(kvs, k) != v {
				return false
			}
		}
		return true
	}
	for _, m := range r.metrics {
		if m.Name != name {
			continue
		}
		switch d := m.Data.(type) {
		case *metricpb.Metric_Sum:
			for _, p := range d.Sum.DataPoints {
				if match(p.Attributes) {
					return fmt.Sprint(p.GetAsInt())
				}
			}
		case *metricpb.Metric_Gauge:
			for _, p := range d.Gauge.DataPoints {
				if match(p.Attributes) {
					return fmt.Sprint(p.GetAsDouble())
				}
			}
		case *metricpb.Metric_Histogram:
			for _, p := range d.Histogram.DataPoints {
				if match(p.Attributes) {
					return fmt.Sprintf("%d/%g", p.Count, p.GetSum())
				}
			}
		}
	}
	return ""
}

// TestCLIFetchTelemetry runs `again fetch` with an OTLP endpoint set, as
// a process, and checks what the receiver decoded: the command's span,
// one CLIENT span per attempt under it with the resend count, the trace
// context the server got, and the retry metrics, all sent before exit.
func TestCLIFetchTelemetry(t *testing.T) {
	rcv := newReceiver(t)
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
	roots, attempts := rcv.named("again fetch"), rcv.named("GET")
	if len(roots) != 1 || len(attempts) != 2 {
		t.Fatalf("received %d spans named again fetch and %d named GET, want 1 and 2; stderr:\n%s", len(roots), len(attempts), stderr.String())
	}
	root := roots[0]
	for i, a := range attempts {
		if !bytes.Equal(a.ParentSpanId, root.SpanId) || a.Kind != tracepb.Span_SPAN_KIND_CLIENT {
			t.Errorf("attempt %d: kind %v, not a child of the command's span", i+1, a.Kind)
		}
		if got := value(a.Attributes, "url.full"); got != target.URL+"/items?key=REDACTED" {
			t.Errorf("attempt %d: url.full %q, want the query value redacted", i+1, got)
		}
		tp, _ := traceparent.Load(int32(i + 1))
		if want := fmt.Sprintf("00-%x-%x-01", a.TraceId, a.SpanId); tp != want {
			t.Errorf("attempt %d: the server got traceparent %q, want %q", i+1, tp, want)
		}
	}
	if value(attempts[0].Attributes, "http.response.status_code") != "503" || len(attempts[0].Events) != 1 ||
		value(attempts[1].Attributes, "http.request.resend_count") != "1" {
		t.Errorf("attempts: a 503 with %d events, then resend_count %q; want a wait event, then 1",
			len(attempts[0].Events), value(attempts[1].Attributes, "http.request.resend_count"))
	}
	if got := rcv.service[0]; got != "again" {
		t.Errorf("service.name = %q, want again", got)
	}
	if got := rcv.point("again.retry.calls", "again.retry.name=fetch", "again.retry.reason=success"); got != "1" {
		t.Errorf("again.retry.calls{fetch, success} = %q, want 1", got)
	}
	if got := rcv.point("again.retry.attempts", "again.retry.name=fetch"); got != "1/2" {
		t.Errorf("again.retry.attempts{fetch} = %q, want one call of 2 attempts", got)
	}
}

// TestCLIRunTelemetry runs `again run` with OTLP exporters chosen by
// OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER and checks the command's
// span, with its give-up reason, one span per attempt, and the metrics.
func TestCLIRunTelemetry(t *testing.T) {
	rcv := newReceiver(t)
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
	roots, attempts := rcv.named("again run"), rcv.named("sh")
	if len(roots) != 1 || len(attempts) != 3 {
		t.Fatalf("received %d spans named again run and %d named sh, want 1 and 3; stderr:\n%s", len(roots), len(attempts), stderr.String())
	}
	root := roots[0]
	if root.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || value(root.Attributes, "again.retry.reason") != "exhausted" ||
		value(root.Attributes, "process.exit.code") != "3" || len(root.Events) != 2 {
		t.Errorf("the command's span: status %v, reason %q, exit code %q, %d events; want an error, exhausted, 3 and 2 waits",
			root.Status, value(root.Attributes, "again.retry.reason"), value(root.Attributes, "process.exit.code"), len(root.Events))
	}
	for i, a := range attempts {
		if !bytes.Equal(a.ParentSpanId, root.SpanId) {
			t.Errorf("attempt %d is not a child of the command's span", i+1)
		}
	}
	if got := rcv.point("again.retry.calls", "again.retry.name=run", "again.retry.reason=exhausted"); got != "1" {
		t.Errorf("again.retry.calls{run, exhausted} = %q, want 1", got)
	}
	if got := rcv.point("again.retry.retries", "again.retry.name=run"); got != "1/2" {
		t.Errorf("again.retry.retries{run} = %q, want one call with 2 retries", got)
	}
}

// TestCLIRunTelemetryFleetBudget checks that the tokens left in a fleet
// budget (Redis) are exported at exit, read from the shared bucket.
func TestCLIRunTelemetryFleetBudget(t *testing.T) {
	s := fleettest.Start(t)
	rcv := newReceiver(t)
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
	if got := rcv.point("again.budget.tokens", "again.budget.name=run"); got != "7" {
		t.Errorf("again.budget.tokens{run} = %q, want 7; stderr:\n%s", got, stderr.String())
	}
	if spans := rcv.named("again run"); len(spans) != 0 {
		t.Errorf("OTEL_TRACES_EXPORTER=none, yet %d spans were sent", len(spans))
	}
}

// TestCLITelemetryUsage checks that a bad OTEL_* value stops fetch as a
// usage error: one line, status 2, nothing sent.
func TestCLITelemetryUsage(t *testing.T) {
	cmd := cmdtest.AgainCommand(t, "fetch", "http://127.0.0.1:1/")
	cmd.Env = append(cmd.Env, "OTEL_METRICS_EXPORTER=prometheus")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	_ = cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 2 || strings.Count(stderr.String(), "\n") != 1 ||
		!strings.Contains(stderr.String(), `OTEL_METRICS_EXPORTER="prometheus": again exports otlp or none`) {
		t.Errorf("exit %d, stderr %q; want 2 and one line naming the variable", code, stderr.String())
	}
}
