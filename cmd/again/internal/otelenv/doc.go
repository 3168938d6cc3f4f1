// Package otelenv turns the OTEL_* environment variables into the again
// command's SDK set-up.
//
// It decides which signals are exported, where, with which headers, and how
// trace context is propagated, as the OpenTelemetry configuration spec
// (sdk-environment-variables.md, common.md) says a program must read them.
//
// The environment belongs to the whole process tree: the variables that
// `again run` sees were often set for the program it runs. So nothing
// here ever fails: a value otelenv does not understand (an exporter it
// lacks, a protocol it does not speak, an endpoint without a scheme, a
// malformed header) is reported once, in one line, through the warning
// function the command gives, and ignored, and the command goes on with
// its own output and exit status untouched. Header values never appear in
// what it says, nor in what the SDK says (its error handler and logger
// are routed through the same function, without their values); text from
// a collector is shown with its control characters escaped; however many
// exports fail, a run says so in one line.
//
// It knows no command and no flag: the command gives it a way to look up
// the environment and a warning function, and gets the providers.
//
// # Quick start
//
//	sdk := otelenv.Start(ctx, otelenv.Options{
//		Lookup: os.LookupEnv,
//		Warn:   func(line string) { fmt.Fprintln(stderr, "again run: telemetry:", line) },
//	})
//	tel := otelagain.New(otelagain.WithTracerProvider(sdk.TracerProvider()),
//		otelagain.WithMeterProvider(sdk.MeterProvider()),
//		otelagain.WithPropagators(sdk.Propagator()))
//	...
//	if sig := sdk.Shutdown(signals, nil); sig != nil {
//		// a signal cut the flush short: exit as that signal says
//	}
//
// docs/telemetry.md lists every variable read and what is done with it;
// Variables is the same list, in Go, and a test keeps the two together.
package otelenv
