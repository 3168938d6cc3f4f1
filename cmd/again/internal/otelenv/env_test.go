package otelenv

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/again-go/again/cmd/again/internal/otelenv/otlptest"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// read is Read over kvs, with the warnings it said.
func read(kvs string) (Settings, []string) {
	var warnings []string
	s := Read(otlptest.Env(kvs), func(line string) { warnings = append(warnings, line) })
	return s, warnings
}

// where says where each signal goes, "-" for nowhere.
func where(s Settings) string {
	out := func(sig Signal) string {
		if !sig.Export {
			return "-"
		}
		return sig.Endpoint
	}
	return out(s.Traces) + " " + out(s.Metrics)
}

// TestRead checks what each form of the variables exports, and that what
// is not understood is warned about once, in one line, and ignored:
// never an error, never a host the user did not give.
func TestRead(t *testing.T) {
	const local = "http://127.0.0.1:4318"
	tests := []struct {
		env, where string
		warnings   []string
	}{
		{"", "- -", nil},
		{"OTEL_EXPORTER_OTLP_ENDPOINT=" + local, local + "/v1/traces " + local + "/v1/metrics", nil},
		{"OTEL_EXPORTER_OTLP_ENDPOINT=" + local + "/base/", local + "/base/v1/traces " + local + "/base/v1/metrics", nil},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + local, local + "/ -", nil},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + local + "/t OTEL_EXPORTER_OTLP_ENDPOINT=http://other:1",
			local + "/t http://other:1/v1/metrics", nil},
		// The spec's default, in plain HTTP, with the exporter named only.
		{"OTEL_TRACES_EXPORTER=otlp", "http://localhost:4318/v1/traces -", nil},
		{"OTEL_TRACES_EXPORTER=OTLP OTEL_METRICS_EXPORTER=Otlp", "http://localhost:4318/v1/traces http://localhost:4318/v1/metrics", nil},
		{"OTEL_EXPORTER_OTLP_ENDPOINT=" + local + " OTEL_TRACES_EXPORTER=none", "- " + local + "/v1/metrics", nil},
		{"OTEL_EXPORTER_OTLP_ENDPOINT=" + local + " OTEL_SDK_DISABLED=TRUE", "- -", nil},
		{"OTEL_METRICS_EXPORTER=prometheus", "- -",
			[]string{`OTEL_METRICS_EXPORTER=prometheus ignored: again exports otlp or none`}},
		// An ignored value is as if not set: the endpoint still exports.
		{"OTEL_METRICS_EXPORTER=prometheus OTEL_EXPORTER_OTLP_ENDPOINT=" + local, local + "/v1/traces " + local + "/v1/metrics",
			[]string{`OTEL_METRICS_EXPORTER=prometheus ignored: again exports otlp or none`}},
		{"OTEL_TRACES_EXPORTER=zipkin,otlp", "http://localhost:4318/v1/traces -",
			[]string{`OTEL_TRACES_EXPORTER=zipkin ignored: again exports otlp or none`}},
		{"OTEL_TRACES_EXPORTER=console", "- -",
			[]string{`OTEL_TRACES_EXPORTER=console ignored: again prints no telemetry, its output is the command's; it exports otlp or none`}},
		{"OTEL_LOGS_EXPORTER=otlp OTEL_TRACES_EXPORTER=otlp", "http://localhost:4318/v1/traces -", nil},
		{"OTEL_LOGS_EXPORTER=fluentd", "- -", []string{`OTEL_LOGS_EXPORTER=fluentd ignored: again exports otlp or none`}},
		{"OTEL_EXPORTER_OTLP_ENDPOINT=" + local + " OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "- -",
			[]string{`OTEL_EXPORTER_OTLP_PROTOCOL=grpc: again exports OTLP over HTTP only (http/protobuf); traces and metrics not exported`}},
		{"OTEL_EXPORTER_OTLP_ENDPOINT=" + local + " OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=GRPC", local + "/v1/traces -",
			[]string{`OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=grpc: again exports OTLP over HTTP only (http/protobuf); metrics not exported`}},
		{"OTEL_TRACES_EXPORTER=otlp OTEL_EXPORTER_OTLP_PROTOCOL=http/json", "http://localhost:4318/v1/traces -",
			[]string{`OTEL_EXPORTER_OTLP_PROTOCOL=http/json: again sends OTLP/HTTP in protobuf (http/protobuf) instead`}},
		{"OTEL_TRACES_EXPORTER=otlp OTEL_EXPORTER_OTLP_PROTOCOL=thrift", "http://localhost:4318/v1/traces -",
			[]string{`OTEL_EXPORTER_OTLP_PROTOCOL=thrift ignored: again sends OTLP over HTTP (http/protobuf)`}},
		// Without a scheme: said, nothing sent, never https://localhost.
		{"OTEL_EXPORTER_OTLP_ENDPOINT=127.0.0.1:4318", "- -",
			[]string{`OTEL_EXPORTER_OTLP_ENDPOINT is not an http:// or https:// URL with a host (a host:port needs http:// before it); traces and metrics not exported`}},
		{"OTEL_EXPORTER_OTLP_ENDPOINT=localhost:4318", "- -",
			[]string{`OTEL_EXPORTER_OTLP_ENDPOINT is not an http:// or https:// URL with a host (a host:port needs http:// before it); traces and metrics not exported`}},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=collector:4318/v1/traces OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=ftp://x/", "- -",
			[]string{`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is not an http:// or https:// URL with a host (a host:port needs http:// before it); traces not exported`,
				`OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is not an http:// or https:// URL with a host; metrics not exported`}},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			s, warnings := read(tt.env)
			if got := where(s); got != tt.where {
				t.Errorf("exports to %q, want %q", got, tt.where)
			}
			if !slices.Equal(warnings, tt.warnings) {
				t.Errorf("warnings:\n%q\nwant:\n%q", warnings, tt.warnings)
			}
		})
	}
}

// TestReadHeaders checks OTEL_EXPORTER_OTLP_HEADERS: percent-decoded
// values, the signal's own winning, and a malformed entry dropped with a
// line that names its key, never its value.
func TestReadHeaders(t *testing.T) {
	tests := []struct {
		env, traces, metrics, warning string
	}{
		{"OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20tok,x-tenant=a", "authorization=Bearer tok x-tenant=a", "authorization=Bearer tok x-tenant=a", ""},
		{"OTEL_EXPORTER_OTLP_HEADERS=x-tenant=a OTEL_EXPORTER_OTLP_METRICS_HEADERS=X-Tenant=b", "x-tenant=a", "x-tenant=b", ""},
		{"OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20SECRET%zz,x-tenant=a", "x-tenant=a", "x-tenant=a",
			"OTEL_EXPORTER_OTLP_HEADERS: the value of authorization is malformed (percent-encoding); not sent"},
		{"OTEL_EXPORTER_OTLP_HEADERS=SECRET,x=1", "x=1", "x=1", "OTEL_EXPORTER_OTLP_HEADERS: entry 1 is not key=value; not sent"},
		{"OTEL_EXPORTER_OTLP_HEADERS=Bearer:SECRET=1", "", "", "OTEL_EXPORTER_OTLP_HEADERS: entry 1 is not key=value; not sent"},
		{"OTEL_EXPORTER_OTLP_HEADERS=a=SECRET%0D%0Ax:1", "", "", "OTEL_EXPORTER_OTLP_HEADERS: the value of a is malformed (percent-encoding); not sent"},
	}
	show := func(h map[string]string) string {
		var kv []string
		for k, v := range h {
			kv = append(kv, k+"="+v)
		}
		slices.Sort(kv)
		return strings.Join(kv, " ")
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			s, warnings := read("OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1 " + tt.env)
			if got := show(s.Traces.Headers); got != tt.traces {
				t.Errorf("traces headers %q, want %q", got, tt.traces)
			}
			if got := show(s.Metrics.Headers); got != tt.metrics {
				t.Errorf("metrics headers %q, want %q", got, tt.metrics)
			}
			want := []string(nil)
			if tt.warning != "" {
				want = []string{tt.warning}
			}
			if !slices.Equal(warnings, want) {
				t.Errorf("warnings %q, want %q", warnings, want)
			}
			for _, w := range warnings {
				if strings.Contains(w, "SECRET") {
					t.Errorf("a warning shows the header's value: %q", w)
				}
			}
		})
	}
}

// TestPropagators checks what OTEL_PROPAGATORS puts on a request: both
// W3C headers by default, none for none, baggage alone for baggage, and
// the headers of the other propagators the spec names.
func TestPropagators(t *testing.T) {
	tests := []struct {
		env     string
		headers string // traceparent, baggage: which are sent
		warning string
	}{
		{"", "traceparent baggage", ""},
		{"OTEL_PROPAGATORS=none", "", ""},
		{"OTEL_PROPAGATORS=baggage", "baggage", ""},
		{"OTEL_PROPAGATORS=TraceContext", "traceparent", ""},
		{"OTEL_PROPAGATORS=b3,baggage", "baggage b3", ""},
		{"OTEL_PROPAGATORS=b3multi", "x-b3-traceid", ""},
		{"OTEL_PROPAGATORS=jaeger", "uber-trace-id", ""},
		{"OTEL_PROPAGATORS=xray", "x-amzn-trace-id", ""},
		{"OTEL_PROPAGATORS=ottrace", "ot-tracer-traceid", ""},
		{"OTEL_PROPAGATORS=zipkin,b3", "b3", "OTEL_PROPAGATORS=zipkin ignored: again propagates tracecontext, baggage, b3, b3multi, jaeger, xray, ottrace or none"},
		{"OTEL_PROPAGATORS=sky", "traceparent baggage", "OTEL_PROPAGATORS=sky ignored: again propagates tracecontext, baggage, b3, b3multi, jaeger, xray, ottrace or none"},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			s, warnings := read(tt.env)
			ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
				TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled}))
			m, _ := baggage.NewMember("tenant", "a")
			b, _ := baggage.New(m)
			ctx = baggage.ContextWithBaggage(ctx, b)
			h := http.Header{}
			s.Propagator().Inject(ctx, propagation.HeaderCarrier(h))
			var sent []string
			for _, k := range []string{"Traceparent", "Baggage", "B3", "X-B3-Traceid", "Uber-Trace-Id", "X-Amzn-Trace-Id", "Ot-Tracer-Traceid"} {
				if h.Get(k) != "" {
					sent = append(sent, strings.ToLower(k))
				}
			}
			if got := strings.Join(sent, " "); got != tt.headers {
				t.Errorf("headers sent: %q, want %q", got, tt.headers)
			}
			if got := strings.Join(warnings, "\n"); got != tt.warning {
				t.Errorf("warnings %q, want %q", got, tt.warning)
			}
		})
	}
}

// FuzzRead checks, for any values, that Read warns at most once per
// variable, in one line each, never with a header's value, and never
// sends to a host that no variable gave (localhost only by default).
func FuzzRead(f *testing.F) {
	f.Add("otlp", "prometheus", "grpc", "127.0.0.1:4318", "authorization=Bearer%20SECRET%zz", "b3")
	f.Add("OTLP,none", "", "http/json", "http://[::1]:4318/x", "a=SECRET,SECRET", "none")
	f.Fuzz(func(t *testing.T, tracesExp, metricsExp, protocol, endpoint, headers, props string) {
		vars := map[string]string{"OTEL_TRACES_EXPORTER": tracesExp, "OTEL_METRICS_EXPORTER": metricsExp,
			"OTEL_EXPORTER_OTLP_PROTOCOL": protocol, "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
			"OTEL_EXPORTER_OTLP_HEADERS": headers, "OTEL_PROPAGATORS": props}
		var warnings []string
		s := Read(func(k string) (string, bool) { v, ok := vars[k]; return v, ok }, func(l string) { warnings = append(warnings, l) })
		seen := map[string]bool{}
		for _, w := range warnings {
			name, _, _ := strings.Cut(strings.TrimPrefix(w, ""), "=")
			name, _, _ = strings.Cut(name, " ")
			name, _, _ = strings.Cut(name, ":")
			if seen[name] {
				t.Fatalf("%s warned about twice: %q", name, warnings)
			}
			seen[name] = true
			if strings.ContainsAny(w, "\n\r\x1b") {
				t.Fatalf("warning not one clean line: %q", w)
			}
			if strings.Contains(headers, "SECRET") && strings.Contains(w, "SECRET") && !strings.Contains(tracesExp+metricsExp+protocol+props, "SECRET") {
				t.Fatalf("warning shows a header's value: %q", w)
			}
		}
		for _, sig := range []Signal{s.Traces, s.Metrics} {
			if !sig.Export {
				continue
			}
			if strings.TrimSpace(endpoint) == "" {
				if !strings.HasPrefix(sig.Endpoint, DefaultEndpoint+"/") {
					t.Fatalf("no endpoint given, exports to %q", sig.Endpoint)
				}
			} else if given, err := url.Parse(strings.TrimSpace(endpoint)); err != nil {
				t.Fatalf("endpoint %q, which does not parse (%v), exports to %q", endpoint, err, sig.Endpoint)
			} else if got, err := url.Parse(sig.Endpoint); err != nil || got.Scheme != given.Scheme || got.Host != given.Host {
				// The path may be written anew (a byte that is not UTF-8
				// percent-encoded), the host never.
				t.Fatalf("endpoint %q given, exports to %q", endpoint, sig.Endpoint)
			}
		}
	})
}

// TestDocListsVariables checks that docs/telemetry.md names every
// variable that Read and Start read: the page and the code cannot drift.
func TestDocListsVariables(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "telemetry.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range Variables {
		if !strings.Contains(string(doc), "`"+v+"`") {
			t.Errorf("docs/telemetry.md does not name %s", v)
		}
	}
	// And every variable Read looks up is in Variables.
	read := map[string]bool{}
	lookup := otlptest.Env("OTEL_TRACES_EXPORTER=otlp OTEL_METRICS_EXPORTER=otlp")
	Read(func(k string) (string, bool) { read[k] = true; return lookup(k) }, func(string) {})
	if len(read) < 10 {
		t.Fatalf("Read looked up only %d variables", len(read))
	}
	for k := range read {
		if !slices.Contains(Variables, k) {
			t.Errorf("Read looks up %s, which Variables does not list", k)
		}
	}
}
