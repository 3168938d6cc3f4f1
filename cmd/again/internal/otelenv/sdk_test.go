package otelenv

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/otelenv/otlptest"
	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The exporters' idle keep-alive connections, closed by the
		// collector stand-in when its test ends.
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		// An export that a signal cut short (TestShutdownSignal) runs on
		// in the SDK's goroutine until the exporter's retries give up: in
		// the command, the process exits first, which is the point.
		goleak.IgnoreTopFunction("go.opentelemetry.io/otel/sdk/trace.(*batchSpanProcessor).processQueue"))
}

// start is Start over kvs (each value without spaces), with its warnings.
func start(t *testing.T, kvs string, o Options) (*SDK, *[]string) {
	t.Helper()
	var mu sync.Mutex
	var warnings []string
	o.Lookup = otlptest.Env(kvs)
	o.Warn = func(line string) { mu.Lock(); warnings = append(warnings, line); mu.Unlock() }
	return Start(context.Background(), o), &warnings
}

// record makes a span and a counter point on s's providers.
func record(s *SDK) {
	_, span := s.TracerProvider().Tracer("test").Start(context.Background(), "op")
	span.End()
	c, _ := s.MeterProvider().Meter("test").Int64Counter("ops", metric.WithUnit("{op}"))
	c.Add(context.Background(), 1)
}

// TestStartExports checks that a span and a metric reach the collector,
// with the headers of OTEL_EXPORTER_OTLP_HEADERS, in protobuf even when
// http/json was asked, and that the SDK's own reading of the environment
// does not win over Read's.
func TestStartExports(t *testing.T) {
	c := otlptest.New(t)
	s, warnings := start(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+c.URL+" OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20tok "+
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/json", Options{})
	if !s.Traces() || !s.Metrics() {
		t.Fatalf("traces %v, metrics %v exported; want both", s.Traces(), s.Metrics())
	}
	record(s)
	if sig := s.Shutdown(nil, nil); sig != nil {
		t.Errorf("Shutdown = %v, want nil", sig)
	}
	if spans, metrics := len(c.Named("op")), c.MetricNames(); spans != 1 || !slices.Contains(metrics, "ops") {
		t.Errorf("the collector got %d spans named op and metrics %q, want one and ops", spans, metrics)
	}
	for _, h := range c.Headers() {
		if h.Get("Authorization") != "Bearer tok" {
			t.Errorf("an export came with Authorization %q, want the decoded header", h.Get("Authorization"))
		}
	}
	if len(*warnings) != 1 || !strings.Contains((*warnings)[0], "http/json") {
		t.Errorf("warnings %q, want one about http/json", *warnings)
	}
}

// TestOneLine checks that however many exports fail, a run says one line,
// and that the collector's text in it has its control characters escaped.
func TestOneLine(t *testing.T) {
	c := otlptest.NewFailing(t, http.StatusInternalServerError, "\x1b]0;PWNED\a\x1b[2J")
	s, warnings := start(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+c.URL, Options{FlushTimeout: 2 * time.Second})
	for range 3 {
		record(s)
		s.FlushMetrics(nil, nil)
	}
	record(s)
	s.Shutdown(nil, nil)
	if len(*warnings) != 1 {
		t.Fatalf("warnings:\n%s\nwant one line", strings.Join(*warnings, "\n"))
	}
	line := (*warnings)[0]
	if strings.ContainsAny(line, "\x1b\a\n") || !strings.Contains(line, `\x1b]0;PWNED\x07\x1b[2J`) || !strings.HasPrefix(line, "not sent: ") ||
		!strings.Contains(line, "more failure") {
		t.Errorf("line %q: want the collector's text escaped, and the failures that followed counted", line)
	}
}

// TestShutdownSignal checks the flush against a collector that never
// answers: a signal bounds it to SignalFlushTimeout, a second one ends it
// at once, a signal that stopped the command bounds it from the start,
// and Shutdown returns the first signal. The bounds are far
// apart (a minute against a fraction of a second), so that a loaded
// machine cannot blur them.
func TestShutdownSignal(t *testing.T) {
	tests := []struct {
		name    string
		first   os.Signal   // given to Shutdown: it stopped the command
		signals []os.Signal // sent during the flush
		signal  time.Duration
		want    os.Signal
	}{
		{"one signal", nil, []os.Signal{syscall.SIGINT}, 100 * time.Millisecond, syscall.SIGINT},
		{"two signals", nil, []os.Signal{syscall.SIGTERM, syscall.SIGINT}, time.Minute, syscall.SIGTERM},
		{"a signal before", syscall.SIGTERM, nil, 100 * time.Millisecond, syscall.SIGTERM},
		{"a signal before, its copy waiting", syscall.SIGINT, []os.Signal{syscall.SIGTERM}, 100 * time.Millisecond, syscall.SIGINT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := otlptest.NewSilent(t)
			s, warnings := start(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+c.URL, Options{FlushTimeout: time.Minute, SignalFlushTimeout: tt.signal})
			record(s)
			stop := make(chan os.Signal, len(tt.signals)+1)
			for _, sig := range tt.signals {
				stop <- sig
			}
			begin := time.Now()
			sig := s.Shutdown(stop, tt.first)
			if d := time.Since(begin); d > 20*time.Second {
				t.Errorf("Shutdown took %v after the signals, want well under the minute of FlushTimeout", d)
			}
			if sig != tt.want {
				t.Errorf("Shutdown = %v, want the first signal, %v", sig, tt.want)
			}
			if len(*warnings) != 1 || !strings.HasPrefix((*warnings)[0], "not sent: the flush was cut short by a signal") {
				t.Errorf("warnings %q, want one line saying the flush was cut short", *warnings)
			}
		})
	}
}

// TestDefaultEndpoint checks that with only OTEL_TRACES_EXPORTER=otlp
// the spans reach a plain collector on localhost:4318, the spec's default
// (the SDK's own default is https there, which no local collector
// answers).
func TestDefaultEndpoint(t *testing.T) {
	c := otlptest.NewOn(t, "127.0.0.1:4318")
	s, warnings := start(t, "OTEL_TRACES_EXPORTER=otlp", Options{})
	record(s)
	s.Shutdown(nil, nil)
	if len(c.Named("op")) != 1 || len(*warnings) != 0 {
		t.Errorf("the collector on localhost:4318 got %d spans, warnings %q; want the span and none", len(c.Named("op")), *warnings)
	}
}

// TestDescribe checks the words of a flush that a bound cut short.
func TestDescribe(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("traces: %w", context.DeadlineExceeded), "the collector did not answer within 5s"},
		{context.Canceled, "the flush was cut short by a signal"},
		{errors.New("500 Internal Server Error"), "500 Internal Server Error"},
	}
	for _, tt := range tests {
		if got := describe(tt.err, 5*time.Second); got != tt.want {
			t.Errorf("describe(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// TestNothingExported checks that without a request for export, Start
// sets nothing up and Shutdown says nothing.
func TestNothingExported(t *testing.T) {
	s, warnings := start(t, "OTEL_METRICS_EXPORTER=none", Options{})
	if s.Traces() || s.Metrics() {
		t.Error("something exported")
	}
	record(s)
	if sig := s.Shutdown(nil, nil); sig != nil || len(*warnings) != 0 {
		t.Errorf("Shutdown = %v, warnings %q; want nil and none", sig, *warnings)
	}
}

// TestSDKLogValues checks that the SDK's log lines count as problems by
// their message only: the error and the values it adds are dropped.
func TestSDKLogValues(t *testing.T) {
	p := &problems{}
	log := logr.New(sdkLog{p})
	log.Error(errors.New("SECRET"), "export failed", "value", "SECRET")
	log.V(1).Info("a warning", "value", "SECRET")
	log.V(4).Info("an info, not kept")
	log.Error(errors.New("SECRET"), "escape header value", "value", "SECRET")
	if got, want := p.line(), "not sent: OpenTelemetry SDK: export failed (and 1 more failure)"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	if got := p.line(); got != "" {
		t.Errorf("a second line %q, want none: the problems were said", got)
	}
}
