package run

import (
	"context"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/otelagain"
	"github.com/again-go/again/retry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.17.0"
	"go.opentelemetry.io/otel/trace"
)

// runTelemetry returns the retry option and the budget of `again run`'s
// loop, instrumented if ctx carries telemetry (the zero Option and b
// itself otherwise), and what runs each attempt of the command name: in
// a span of its own, if ctx carries telemetry.
func runTelemetry(ctx context.Context, name string, b retry.Budget) (retry.Option, retry.Budget, func(context.Context, func() error) error) {
	t := cmdutil.TelemetryFrom(ctx)
	if t == nil {
		return retry.Option{}, b, func(_ context.Context, f func() error) error { return f() }
	}
	ob := &runObserver{m: t.Otel().Observer("run"), root: t.Span()}
	attempt := func(ctx context.Context, f func() error) error {
		ob.n++
		_, span := t.Tracer().Start(ctx, name, trace.WithAttributes(
			semconv.ProcessExecutableName(name), attribute.Int("again.attempt", ob.n)))
		err := f()
		if err != nil {
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
		return err
	}
	return retry.WithObserver(ob), t.Otel().Budget("run", b), attempt
}

// runObserver records run's metrics and puts each wait on the command's
// span, as an event.
type runObserver struct {
	m    retry.Observer
	root trace.Span
	n    int // attempts started
}

func (o *runObserver) OnRetry(ctx context.Context, e retry.Event) {
	o.m.OnRetry(ctx, e)
	o.root.AddEvent(otelagain.WaitEventName, trace.WithAttributes(
		otelagain.WaitDurationKey.Float64(e.Delay.Seconds()), attribute.Int("again.attempt", e.Attempt)))
}

func (o *runObserver) OnEnd(ctx context.Context, attempts int, err error) {
	o.m.OnEnd(ctx, attempts, err)
	o.root.SetAttributes(otelagain.RetryReasonKey.String(otelagain.Reason(err)))
}
