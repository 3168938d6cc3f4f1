package otelenv_test

import (
	"fmt"

	"github.com/again-go/again/cmd/again/internal/otelenv"
	"github.com/again-go/again/cmd/again/internal/otelenv/otlptest"
)

// Read says what it ignores, and exports what it understands: here, spans
// to the spec's default endpoint, no metrics, and no propagation.
func ExampleRead() {
	lookup := otlptest.Env("OTEL_TRACES_EXPORTER=OTLP OTEL_METRICS_EXPORTER=prometheus OTEL_PROPAGATORS=none")
	s := otelenv.Read(lookup, func(line string) { fmt.Println("warning:", line) })
	fmt.Println(s.Traces.Endpoint, s.Metrics.Export, len(s.Propagators))
	// Output:
	// warning: OTEL_METRICS_EXPORTER=prometheus ignored: again exports otlp or none
	// http://localhost:4318/v1/traces false 0
}
