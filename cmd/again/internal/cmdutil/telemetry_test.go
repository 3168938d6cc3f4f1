package cmdutil

import (
	"strings"
	"testing"
)

// TestExportsWanted checks which OTEL_* settings export what, and that a
// value again does not accept is a usage error naming it.
func TestExportsWanted(t *testing.T) {
	tests := []struct {
		env             string
		traces, metrics bool
		err             string
	}{
		{"", false, false, ""},
		{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318", true, true, ""},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:4318/v1/traces", true, false, ""},
		{"OTEL_METRICS_EXPORTER=otlp", false, true, ""},
		{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 OTEL_TRACES_EXPORTER=none", false, true, ""},
		{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 OTEL_SDK_DISABLED=true", false, false, ""},
		{"OTEL_TRACES_EXPORTER=zipkin", false, false, `OTEL_TRACES_EXPORTER="zipkin": again exports otlp or none`},
		{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 OTEL_EXPORTER_OTLP_PROTOCOL=grpc", false, false,
			`OTEL_EXPORTER_OTLP_PROTOCOL="grpc": again exports OTLP over HTTP: http/protobuf (the default) or http/json`},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			vars := map[string]string{}
			for _, kv := range strings.Fields(tt.env) {
				k, v, _ := strings.Cut(kv, "=")
				vars[k] = v
			}
			traces, metrics, err := exportsWanted(func(k string) string { return vars[k] })
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if traces != tt.traces || metrics != tt.metrics || gotErr != tt.err {
				t.Errorf("traces %v, metrics %v, error %q; want %v, %v, %q", traces, metrics, gotErr, tt.traces, tt.metrics, tt.err)
			}
		})
	}
}

// FuzzExportsWanted checks the OTEL_* reading on any values: an error
// exactly when a value is not one again accepts, and otherwise traces
// exported exactly when asked for by name or by an endpoint.
func FuzzExportsWanted(f *testing.F) {
	f.Add("", "", "", "")
	f.Add("otlp", "none", "http/protobuf", "http://127.0.0.1:4318")
	f.Add(" otlp ", "zipkin", "grpc", "")
	f.Fuzz(func(t *testing.T, tracesExp, metricsExp, protocol, endpoint string) {
		vars := map[string]string{"OTEL_TRACES_EXPORTER": tracesExp, "OTEL_METRICS_EXPORTER": metricsExp,
			"OTEL_EXPORTER_OTLP_PROTOCOL": protocol, "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}
		traces, _, err := exportsWanted(func(k string) string { return vars[k] })
		accepted := func(v string, ok ...string) bool {
			for _, o := range ok {
				if strings.TrimSpace(v) == o {
					return true
				}
			}
			return false
		}
		valid := accepted(tracesExp, "", "otlp", "none") && accepted(metricsExp, "", "otlp", "none") &&
			accepted(protocol, "", "http/protobuf", "http/json")
		if (err == nil) != valid {
			t.Fatalf("exportsWanted(%q, %q, %q) error = %v, want an error: %v", tracesExp, metricsExp, protocol, err, !valid)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "again exports") {
				t.Fatalf("error %q does not say what is accepted", err)
			}
			return
		}
		want := strings.TrimSpace(tracesExp) == "otlp" || strings.TrimSpace(tracesExp) == "" && endpoint != ""
		if traces != want {
			t.Fatalf("traces = %v for OTEL_TRACES_EXPORTER=%q and endpoint %q, want %v", traces, tracesExp, endpoint, want)
		}
	})
}
