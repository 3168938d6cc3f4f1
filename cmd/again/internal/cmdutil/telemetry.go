package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/again-go/again/otelagain"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// TelemetryHelp is the help text about OpenTelemetry of a command that
// exports it (run, fetch).
const TelemetryHelp = `With OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
OTEL_EXPORTER_OTLP_METRICS_ENDPOINT) set, or OTEL_TRACES_EXPORTER or
OTEL_METRICS_EXPORTER set to otlp, the command exports its spans and
metrics over OTLP/HTTP (the package otelagain's, named in its docs), and
sends them before it exits, waiting at most 5 s. The other OTEL_EXPORTER_OTLP_*
variables (headers, timeout, certificates) and OTEL_SERVICE_NAME apply;
OTEL_SDK_DISABLED=true, or an exporter set to none, exports nothing.`

// flushTimeout bounds the export at exit: a collector that does not answer
// must not hold the command's exit for the exporter's own retries.
const flushTimeout = 5 * time.Second

// Telemetry is what a command exports to OpenTelemetry: a span for the
// whole command, and the instruments of package otelagain. A nil
// *Telemetry exports nothing and costs nothing, which is the case unless
// the environment asks for an export.
type Telemetry struct {
	tel    *otelagain.Telemetry
	tracer trace.Tracer
	root   trace.Span
	name   string // the command's, for its messages
	stderr io.Writer
	mp     *sdkmetric.MeterProvider // nil unless metrics are exported
	flush  []func(context.Context) error
}

type telemetryKey struct{}

// TelemetryFrom returns the telemetry that StartTelemetry put in ctx, or nil.
func TelemetryFrom(ctx context.Context) *Telemetry {
	t, _ := ctx.Value(telemetryKey{}).(*Telemetry)
	return t
}

// StartTelemetry sets up the export the environment asks for, if any, and
// starts the command's span: the returned context carries both. Its error,
// for a variable with a value again does not accept, is a usage error.
func StartTelemetry(ctx context.Context, command string, env *Env) (context.Context, *Telemetry, error) {
	traces, metrics, err := exportsWanted(os.Getenv)
	if err != nil || !traces && !metrics {
		return ctx, nil, err
	}
	res, err := resource.New(ctx, resource.WithAttributes(semconv.ServiceName("again")),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return ctx, nil, Usagef("OpenTelemetry resource: %v", err)
	}
	t := &Telemetry{name: command, stderr: env.Stderr}
	// The exporters report what fails (a collector that does not answer)
	// through OpenTelemetry's error handler: one line each, as again's.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		fmt.Fprintf(env.Stderr, "again %s: telemetry: %v\n", command, err)
	}))
	var opts []otelagain.Option
	if traces {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return ctx, nil, Usagef("OpenTelemetry traces: %v", err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		t.flush = append(t.flush, tp.Shutdown)
		opts = append(opts, otelagain.WithTracerProvider(tp))
		t.tracer = tp.Tracer("github.com/again-go/again/cmd/again")
	} else {
		t.tracer = tracenoop.NewTracerProvider().Tracer("")
	}
	if metrics {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			return ctx, nil, Usagef("OpenTelemetry metrics: %v", err)
		}
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
		t.flush = append(t.flush, mp.Shutdown)
		t.mp = mp
		opts = append(opts, otelagain.WithMeterProvider(mp))
	} else {
		opts = append(opts, otelagain.WithMeterProvider(metricnoop.NewMeterProvider()))
	}
	// The attempts carry their trace to the server, as W3C's traceparent.
	opts = append(opts, otelagain.WithPropagators(propagation.TraceContext{}))
	t.tel = otelagain.New(opts...)
	ctx, t.root = t.tracer.Start(ctx, "again "+command)
	return context.WithValue(ctx, telemetryKey{}, t), t, nil
}

// exportsWanted reads the OTEL_* variables: whether traces and metrics are
// to be exported, or why a value is not accepted.
func exportsWanted(getenv func(string) string) (traces, metrics bool, err error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, false, nil
	}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"} {
		switch p := strings.TrimSpace(getenv(v)); p {
		case "", "http/protobuf", "http/json":
		default:
			return false, false, Usagef("%s=%q: again exports OTLP over HTTP: http/protobuf (the default) or http/json", v, p)
		}
	}
	endpoint := getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
	want := func(exporter, ownEndpoint string) (bool, error) {
		switch e := strings.TrimSpace(getenv(exporter)); e {
		case "":
			return endpoint || getenv(ownEndpoint) != "", nil
		case "otlp":
			return true, nil
		case "none":
			return false, nil
		default:
			return false, Usagef("%s=%q: again exports otlp or none", exporter, e)
		}
	}
	if traces, err = want("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); err != nil {
		return false, false, err
	}
	metrics, err = want("OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
	return traces, metrics, err
}

// End ends the command's span, with err's message as an error status if
// the command failed, and sends what is left to export.
func (t *Telemetry) End(err error) {
	if t == nil {
		return
	}
	var ee *ExitError
	switch {
	case errors.As(err, &ee) && ee.Code == ExitOK:
	case err != nil:
		t.root.SetStatus(codes.Error, err.Error())
		if ee != nil {
			t.root.SetAttributes(attribute.Int("process.exit.code", ee.Code))
		}
	}
	t.root.End()
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	for _, f := range t.flush {
		if err := f(ctx); err != nil {
			fmt.Fprintf(t.stderr, "again %s: telemetry not sent: %v\n", t.name, err)
		}
	}
}

// BeforeClose returns c, made to export the metrics first when metrics
// are exported: a --budget's gauge reads the budget, which cannot be read
// once closed, and the command closes it before it ends.
func (t *Telemetry) BeforeClose(c io.Closer) io.Closer {
	if t == nil || t.mp == nil || c == nil {
		return c
	}
	return closerFunc(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
		defer cancel()
		if err := t.mp.ForceFlush(ctx); err != nil {
			fmt.Fprintf(t.stderr, "again %s: telemetry not sent: %v\n", t.name, err)
		}
		return c.Close()
	})
}

// Otel returns the otelagain instruments of the command, for its
// transport, observer or budget. t must not be nil.
func (t *Telemetry) Otel() *otelagain.Telemetry { return t.tel }

// Tracer returns the tracer of the command's spans. t must not be nil.
func (t *Telemetry) Tracer() trace.Tracer { return t.tracer }

// Span returns the command's span, which End ends. t must not be nil.
func (t *Telemetry) Span() trace.Span { return t.root }

type closerFunc func() error

func (f closerFunc) Close() error { return f() }
