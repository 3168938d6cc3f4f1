package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/again-go/again/cmd/again/internal/otelenv"
	"github.com/again-go/again/cmd/again/internal/printable"
	"github.com/again-go/again/otelagain"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// TelemetryHelp is the help text about OpenTelemetry of a command that
// exports it (run, fetch).
const TelemetryHelp = `With OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
OTEL_EXPORTER_OTLP_METRICS_ENDPOINT) set, or OTEL_TRACES_EXPORTER or
OTEL_METRICS_EXPORTER set to otlp, the command exports its spans and
metrics over OTLP/HTTP (the package otelagain's, named in its docs), and
sends them before it exits, waiting at most 5 s (1 s more after Ctrl-C,
none after a second). A value again does not understand is said in one
line on stderr and ignored: it never changes the exit status or stdout.
docs/telemetry.md lists every OTEL_ variable read and what it does.`

// Telemetry is what a command exports to OpenTelemetry: a span for the
// whole command, and the instruments of package otelagain. A nil
// *Telemetry exports nothing and costs nothing, which is the case unless
// the environment asks for an export.
type Telemetry struct {
	sdk    *otelenv.SDK
	tel    *otelagain.Telemetry
	tracer trace.Tracer
	root   trace.Span
}

type telemetryKey struct{}

// TelemetryFrom returns the telemetry that StartTelemetry put in ctx, or nil.
func TelemetryFrom(ctx context.Context) *Telemetry {
	t, _ := ctx.Value(telemetryKey{}).(*Telemetry)
	return t
}

// StartTelemetry sets up the export the environment asks for, if any (see
// package otelenv), and starts the command's span: the returned context
// carries both. It never fails: what the environment asks that again
// cannot do is said on env.Stderr, one line each, "again COMMAND:
// telemetry: ...", and ignored.
func StartTelemetry(ctx context.Context, command string, env *Env) (context.Context, *Telemetry) {
	lookup := env.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	sdk := otelenv.Start(ctx, otelenv.Options{Lookup: lookup, Warn: telemetryLine(env.Stderr, command)})
	if !sdk.Traces() && !sdk.Metrics() {
		return ctx, nil
	}
	t := &Telemetry{sdk: sdk, tracer: sdk.TracerProvider().Tracer("github.com/again-go/again/cmd/again")}
	t.tel = otelagain.New(otelagain.WithTracerProvider(sdk.TracerProvider()),
		otelagain.WithMeterProvider(sdk.MeterProvider()), otelagain.WithPropagators(sdk.Propagator()))
	ctx, t.root = t.tracer.Start(ctx, "again "+command)
	return context.WithValue(ctx, telemetryKey{}, t), t
}

// telemetryLine is the warning sink of otelenv: one line on w, with the
// command's prefix, and nothing a terminal would act on.
func telemetryLine(w io.Writer, command string) func(string) {
	return func(line string) {
		fmt.Fprintf(w, "again %s: telemetry: %s\n", command, printable.String(line))
	}
}

// End ends the command's span, with err's message as an error status if
// the command failed, and sends what is left to export, bounded as
// otelenv.SDK.Shutdown says, reading the signals of ctx (Signals): it
// returns err, or, if a signal cut the flush short and err does not say
// so already, the error of a command that signal stopped (status 128+N).
func (t *Telemetry) End(ctx context.Context, err error) error {
	if t == nil {
		return err
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
	already := SignalCause(ctx)
	sig := t.sdk.Shutdown(Signals(ctx), already)
	if sig != nil && already == nil {
		return Stopped(sig, " while sending telemetry")
	}
	return err
}

// BeforeClose returns c, made to export the metrics first when metrics
// are exported: a --budget's gauge reads the budget, which cannot be read
// once closed, and the command closes it before it ends. The export is
// bounded as End's.
func (t *Telemetry) BeforeClose(ctx context.Context, c io.Closer) io.Closer {
	if t == nil || !t.sdk.Metrics() || c == nil {
		return c
	}
	return closerFunc(func() error {
		t.sdk.FlushMetrics(Signals(ctx), SignalCause(ctx))
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
