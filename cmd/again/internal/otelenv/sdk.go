package otelenv

import (
	"context"
	"errors"
	"net/http"
	"os"
	"time"

	"github.com/again-go/again/cmd/again/internal/printable"
	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// Defaults of the zero fields of Options.
const (
	// DefaultFlushTimeout bounds the export at exit: a collector that does
	// not answer must not hold the command's exit for the exporter's own
	// retries.
	DefaultFlushTimeout = 5 * time.Second
	// DefaultSignalFlushTimeout is how long the flush may still take once
	// a signal asked the command to stop: long enough for a collector that
	// answers, short enough that Ctrl-C feels obeyed.
	DefaultSignalFlushTimeout = time.Second
	// DefaultServiceName is service.name unless OTEL_SERVICE_NAME (or
	// OTEL_RESOURCE_ATTRIBUTES) names another.
	DefaultServiceName = "again"
)

// Options are what Start needs from the command. Lookup and Warn are
// required; the other zero fields mean their defaults.
type Options struct {
	// Lookup looks a variable up: os.LookupEnv, or a test's.
	Lookup func(string) (string, bool)
	// Warn says one line about telemetry, without its newline: what a
	// variable asked that is ignored, and at the end of the run (Shutdown)
	// what could not be sent. The text has its control characters escaped
	// already, and never holds a header's value. It is called on the
	// goroutine that calls Start or Shutdown.
	Warn func(line string)
	// ServiceName is service.name unless the environment names one; ""
	// means DefaultServiceName.
	ServiceName string
	// FlushTimeout bounds Shutdown's export; 0 means DefaultFlushTimeout.
	FlushTimeout time.Duration
	// SignalFlushTimeout bounds what is left of the export once a signal
	// arrives; 0 means DefaultSignalFlushTimeout.
	SignalFlushTimeout time.Duration
}

// SDK is the OpenTelemetry SDK that Start set up: the providers of the
// signals exported (no-op ones for the others) and the propagator. The
// zero SDK exports and propagates nothing. Its methods are safe for
// concurrent use, except Shutdown, called once.
type SDK struct {
	settings Settings
	opts     Options
	tp       *sdktrace.TracerProvider // nil unless traces are exported
	mp       *sdkmetric.MeterProvider // nil unless metrics are exported
	problems *problems
}

// Start reads the environment (Read), warns through o.Warn about what it
// ignores, and starts the exporters it asks for. It never fails: what
// cannot be set up is said and left out.
//
// When something is exported, Start routes OpenTelemetry's global error
// handler and logger (otel.SetErrorHandler, otel.SetLogger: process-wide,
// the only way the SDK reports) to the SDK's problems, which Shutdown says
// in one line: the command calls Start once.
func Start(ctx context.Context, o Options) *SDK {
	s := &SDK{opts: o, problems: &problems{}}
	warn := func(line string) { o.Warn(line) }
	s.settings = Read(o.Lookup, warn)
	if !s.settings.Traces.Export && !s.settings.Metrics.Export {
		return s
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		// An export's failure was counted by the SDK whose exporter it
		// is (counted); the rest is this one's.
		var counted *exportError
		if !errors.As(err, &counted) {
			s.problems.add(err.Error())
		}
	}))
	otel.SetLogger(logr.New(sdkLog{s.problems}))
	name := o.ServiceName
	if name == "" {
		name = DefaultServiceName
	}
	res, err := resource.New(ctx, resource.WithAttributes(semconv.ServiceName(name)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		// A partial resource (an attribute of OTEL_RESOURCE_ATTRIBUTES
		// that is malformed) is still the rest of it.
		warn("OTEL_RESOURCE_ATTRIBUTES: " + printable.String(err.Error()) + "; the rest applies")
		if res == nil {
			res = resource.Default()
		}
	}
	// WithProxy, with the proxy the SDK's own transport has, gives each
	// exporter a transport of its own: the SDK's is shared by every
	// exporter of the process, and would keep a connection to a collector
	// that went away for the next one on the same port (tests start
	// many).
	if sig := s.settings.Traces; sig.Export {
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(sig.Endpoint),
			otlptracehttp.WithHeaders(sig.Headers), otlptracehttp.WithEncoding(otlptracehttp.EncodingProtobuf),
			otlptracehttp.WithRetry(otlptracehttp.RetryConfig(s.retry())), otlptracehttp.WithProxy(http.ProxyFromEnvironment))
		if err != nil {
			warn("traces not exported: " + printable.String(err.Error()))
		} else {
			s.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(spanExporter{exp, s.problems}), sdktrace.WithResource(res))
		}
	}
	if sig := s.settings.Metrics; sig.Export {
		exp, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(sig.Endpoint),
			otlpmetrichttp.WithHeaders(sig.Headers), otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig(s.retry())),
			otlpmetrichttp.WithProxy(http.ProxyFromEnvironment))
		if err != nil {
			warn("metrics not exported: " + printable.String(err.Error()))
		} else {
			s.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metricExporter{exp, s.problems})),
				sdkmetric.WithResource(res))
		}
	}
	return s
}

// retry is the exporters' retrying: as the SDK's, but given up within
// the flush's bound, since a command exports nothing after it exits (the
// SDK's own would retry for a minute).
func (s *SDK) retry() otlptracehttp.RetryConfig {
	return otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 100 * time.Millisecond,
		MaxInterval: time.Second, MaxElapsedTime: s.flushTimeout()}
}

func (s *SDK) flushTimeout() time.Duration {
	if s.opts.FlushTimeout <= 0 {
		return DefaultFlushTimeout
	}
	return s.opts.FlushTimeout
}

// Settings returns what Start read from the environment.
func (s *SDK) Settings() Settings { return s.settings }

// Traces reports whether spans are exported.
func (s *SDK) Traces() bool { return s.tp != nil }

// Metrics reports whether metrics are exported.
func (s *SDK) Metrics() bool { return s.mp != nil }

// TracerProvider returns the provider of the exported spans, or a no-op
// one.
func (s *SDK) TracerProvider() trace.TracerProvider {
	if s.tp == nil {
		return tracenoop.NewTracerProvider()
	}
	return s.tp
}

// MeterProvider returns the provider of the exported metrics, or a no-op
// one.
func (s *SDK) MeterProvider() metric.MeterProvider {
	if s.mp == nil {
		return metricnoop.NewMeterProvider()
	}
	return s.mp
}

// Propagator returns the propagator OTEL_PROPAGATORS names.
func (s *SDK) Propagator() propagation.TextMapPropagator { return s.settings.Propagator() }

// FlushMetrics exports the metrics recorded so far, bounded as Shutdown
// is (see there for signals, first and the signal returned); a failure is
// kept for Shutdown's line. A command calls it before it closes what a
// gauge reads (a fleet budget).
func (s *SDK) FlushMetrics(signals <-chan os.Signal, first os.Signal) os.Signal {
	if s.mp == nil {
		return first
	}
	return s.bounded(signals, first, s.mp.ForceFlush)
}

// Shutdown exports what is left and stops the exporters. It waits at most
// FlushTimeout; once a signal arrives on signals, at most
// SignalFlushTimeout more; a second signal ends it at once. first, if not
// nil, is a signal that arrived before (the one that stopped the
// command): the flush is then bounded as after it from the start, and the
// signals already waiting on signals are taken for it, so that only one
// sent during the flush ends it at once. Shutdown returns the first
// signal (first, if not nil), or nil: the command then exits as that
// signal says. Whatever failed since Start (however many exports) is said
// in one line through Warn. signals may be nil.
func (s *SDK) Shutdown(signals <-chan os.Signal, first os.Signal) os.Signal {
	sig := first
	if s.tp != nil || s.mp != nil {
		sig = s.bounded(signals, first, func(ctx context.Context) error {
			// Each signal's failure is a problem of its own: one
			// error joined of both would read as two lines.
			if s.tp != nil {
				if err := s.tp.Shutdown(ctx); err != nil {
					s.problems.add(describe(err, s.flushTimeout()))
				}
			}
			if s.mp != nil {
				return s.mp.Shutdown(ctx)
			}
			return nil
		})
	}
	if s.problems != nil {
		if line := s.problems.line(); line != "" {
			s.opts.Warn(line)
		}
	}
	return sig
}

// describe is the text of a flush's failure: a bound that ran out says
// which, rather than the context's own words.
func describe(err error, timeout time.Duration) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "the collector did not answer within " + timeout.String()
	case errors.Is(err, context.Canceled):
		return "the flush was cut short by a signal"
	}
	return err.Error()
}

// bounded runs f with the bounds of Shutdown, and keeps its error as a
// problem.
func (s *SDK) bounded(signals <-chan os.Signal, first os.Signal, f func(context.Context) error) os.Signal {
	ctx, cancel := context.WithTimeout(context.Background(), s.flushTimeout())
	defer cancel()
	signalTimeout := s.opts.SignalFlushTimeout
	if signalTimeout <= 0 {
		signalTimeout = DefaultSignalFlushTimeout
	}
	var shorter <-chan time.Time
	cut := func() {
		t := time.NewTimer(signalTimeout)
		shorter = t.C
		context.AfterFunc(ctx, func() { t.Stop() })
	}
	if first != nil {
		cut()
	drain:
		for {
			select {
			case <-signals:
			default:
				break drain
			}
		}
	}
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	for {
		select {
		case err := <-done:
			if err != nil {
				s.problems.add(describe(err, s.flushTimeout()))
			}
			return first
		case sig := <-signals:
			if first != nil {
				// A second signal: the user means it. The exporters
				// return at once on a canceled context; their error
				// says nothing new.
				cancel()
				<-done
				return first
			}
			first = sig
			cut()
		case <-shorter:
			cancel()
			shorter = nil
		}
	}
}

// spanExporter and metricExporter count their exporter's failures as
// problems of the SDK they belong to, and mark them so (exportError) for
// the global error handler, which the SDK calls with them too: an export
// that a cut-short flush left running (it retries on the SDK's goroutine)
// reports to its own SDK, never to one started later in the process.
type spanExporter struct {
	sdktrace.SpanExporter
	p *problems
}

func (e spanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	return e.p.export(e.SpanExporter.ExportSpans(ctx, spans))
}

type metricExporter struct {
	sdkmetric.Exporter
	p *problems
}

func (e metricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	return e.p.export(e.Exporter.Export(ctx, rm))
}

// exportError is an exporter's failure, counted already.
type exportError struct{ err error }

func (e *exportError) Error() string { return e.err.Error() }
func (e *exportError) Unwrap() error { return e.err }
