package otelagain_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/again-go/again/otelagain"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sdk is the real OpenTelemetry SDK, with a manual reader and a span
// recorder, for exact assertions.
type sdk struct {
	reader *sdkmetric.ManualReader
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	tel    *otelagain.Telemetry
}

func newSDK(t testing.TB) *sdk {
	t.Helper()
	s := &sdk{reader: sdkmetric.NewManualReader(), spans: tracetest.NewSpanRecorder()}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(s.reader))
	s.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(s.spans))
	t.Cleanup(func() {
		_ = mp.Shutdown(context.Background())
		_ = s.tp.Shutdown(context.Background())
	})
	s.tel = otelagain.New(otelagain.WithMeterProvider(mp), otelagain.WithTracerProvider(s.tp),
		otelagain.WithPropagators(propagation.TraceContext{}))
	return s
}

// points returns every data point of the metric name now, each as its
// attributes ("k=v,k=v", sorted) and its value: the sum of a counter, the
// value of a gauge, or "count/sum" of a histogram.
func (s *sdk) points(t testing.TB, name string) map[string]string {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := s.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					got[attrs(p.Attributes)] = fmt.Sprint(p.Value)
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					got[attrs(p.Attributes)] = fmt.Sprint(p.Value)
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					got[attrs(p.Attributes)] = fmt.Sprint(p.Value)
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					got[attrs(p.Attributes)] = fmt.Sprintf("%d/%d", p.Count, p.Sum)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					got[attrs(p.Attributes)] = fmt.Sprintf("%d/%g", p.Count, p.Sum)
				}
			default:
				t.Fatalf("%s: unexpected data %T", name, m.Data)
			}
		}
	}
	return got
}

func attrs(s attribute.Set) string {
	var kv []string
	for _, a := range s.ToSlice() {
		kv = append(kv, string(a.Key)+"="+a.Value.String())
	}
	sort.Strings(kv)
	return strings.Join(kv, ",")
}

// show renders points in a stable order, for messages and comparisons.
func show(p map[string]string) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "{%s}=%s ", k, p[k])
	}
	return strings.TrimSpace(b.String())
}
