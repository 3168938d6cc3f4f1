package cmdutil

import (
	"bytes"
	"context"
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/again-go/again/cmd/again/internal/otelenv/otlptest"
)

// TestStartTelemetry checks that whatever the OTEL_ variables hold,
// StartTelemetry never fails: a value again does not understand is one
// line with the command's prefix, and End leaves the command's error as
// it was.
func TestStartTelemetry(t *testing.T) {
	c := otlptest.New(t)
	tests := []struct {
		env      string
		exported bool
		stderr   string
	}{
		{"", false, ""},
		{"OTEL_METRICS_EXPORTER=prometheus", false, "again run: telemetry: OTEL_METRICS_EXPORTER=prometheus ignored: again exports otlp or none\n"},
		{"OTEL_TRACES_EXPORTER=otlp OTEL_EXPORTER_OTLP_ENDPOINT=" + c.URL, true, ""},
		{"OTEL_PROPAGATORS=\x1b[2J OTEL_EXPORTER_OTLP_ENDPOINT=" + c.URL, true,
			"again run: telemetry: OTEL_PROPAGATORS=\\x1b[2j ignored: again propagates tracecontext, baggage, b3, b3multi, jaeger, xray, ottrace or none\n"},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			var stderr bytes.Buffer
			env := &Env{Stderr: &stderr, LookupEnv: otlptest.Env(tt.env)}
			ctx, tel := StartTelemetry(context.Background(), "run", env)
			if (tel != nil) != tt.exported || (TelemetryFrom(ctx) != nil) != tt.exported {
				t.Errorf("telemetry %v, want exported: %v", tel, tt.exported)
			}
			failed := Exit(3, errors.New("boom"))
			if err := tel.End(ctx, failed); err != failed {
				t.Errorf("End = %v, want the command's error", err)
			}
			if stderr.String() != tt.stderr {
				t.Errorf("stderr %q, want %q", stderr.String(), tt.stderr)
			}
		})
	}
}

// TestEndSignal checks that a signal during the flush makes the command's
// end a stop by that signal, and that a command a signal stopped already
// keeps its own error.
func TestEndSignal(t *testing.T) {
	c := otlptest.NewSilent(t)
	env := &Env{Stderr: &bytes.Buffer{}, LookupEnv: otlptest.Env("OTEL_EXPORTER_OTLP_ENDPOINT=" + c.URL)}
	ch := make(chan os.Signal, 2)
	ch <- syscall.SIGTERM
	ch <- syscall.SIGTERM // the second ends the flush at once
	ctx, tel := StartTelemetry(WithSignals(context.Background(), ch), "fetch", env)
	err := tel.End(ctx, nil)
	if code, msg := ExitCode(err); code != 143 || msg != "stopped: received SIGTERM while sending telemetry" {
		t.Errorf("End = %d, %q; want 143 and the signal named", code, msg)
	}
}
