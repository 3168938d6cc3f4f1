// Package otlptest is an OTLP/HTTP collector stand-in for tests.
//
// It is an httptest server on loopback that decodes what it gets with the
// OTLP protobuf definitions (the protocol's real end; no collector is
// installed here), or answers as the test says: an error status with a
// body, or nothing at all until the request is given up.
//
//	c := otlptest.New(t)
//	cmd.Env = append(cmd.Env, "OTEL_EXPORTER_OTLP_ENDPOINT="+c.URL)
//	...
//	spans := c.Named("again fetch")
package otlptest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Collector is the stand-in. Make one with New (or NewFailing,
// NewSilent); it is closed when the test ends. Its methods are safe for
// concurrent use.
type Collector struct {
	*httptest.Server
	status int    // 0: decode and answer 200
	body   string // with status
	silent bool

	mu       sync.Mutex
	spans    []*tracepb.Span
	services []string // service.name of each batch of spans
	metrics  []*metricpb.Metric
	headers  []http.Header
}

// New starts a collector that decodes and keeps what it gets.
func New(t testing.TB) *Collector { return start(t, &Collector{}) }

// NewFailing starts a collector that answers every export with status and
// body.
func NewFailing(t testing.TB, status int, body string) *Collector {
	return start(t, &Collector{status: status, body: body})
}

// NewSilent starts a collector that reads each export and never answers.
func NewSilent(t testing.TB) *Collector { return start(t, &Collector{silent: true}) }

// NewOn starts a collector as New does, on the address addr (such as
// 127.0.0.1:4318, the default endpoint's port), or fails the test if it
// cannot listen there.
func NewOn(t testing.TB, addr string) *Collector {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("otlptest: listening on %s: %v", addr, err)
	}
	c := &Collector{}
	c.Server = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(c.serve)}}
	c.Start()
	return clean(t, c)
}

func start(t testing.TB, c *Collector) *Collector {
	c.Server = httptest.NewServer(http.HandlerFunc(c.serve))
	return clean(t, c)
}

// clean closes c when the test ends.
func clean(t testing.TB, c *Collector) *Collector {
	t.Cleanup(func() {
		c.CloseClientConnections() // a silent one's handlers return
		c.Close()
	})
	return c
}

func (c *Collector) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	c.mu.Lock()
	c.headers = append(c.headers, r.Header.Clone())
	c.mu.Unlock()
	switch {
	case c.silent:
		<-r.Context().Done()
		return
	case c.status != 0:
		w.WriteHeader(c.status)
		io.WriteString(w, c.body)
		return
	case err != nil || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-protobuf":
		http.Error(w, "want a POST of application/x-protobuf", http.StatusBadRequest)
		return
	}
	var req, resp proto.Message
	switch r.URL.Path {
	case "/v1/traces":
		req, resp = &coltracepb.ExportTraceServiceRequest{}, &coltracepb.ExportTraceServiceResponse{}
	case "/v1/metrics":
		req, resp = &colmetricpb.ExportMetricsServiceRequest{}, &colmetricpb.ExportMetricsServiceResponse{}
	default:
		http.NotFound(w, r)
		return
	}
	if err := proto.Unmarshal(body, req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.keep(req)
	out, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func (c *Collector) keep(req proto.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch m := req.(type) {
	case *coltracepb.ExportTraceServiceRequest:
		for _, rs := range m.ResourceSpans {
			c.services = append(c.services, Value(rs.Resource.GetAttributes(), "service.name"))
			for _, ss := range rs.ScopeSpans {
				c.spans = append(c.spans, ss.Spans...)
			}
		}
	case *colmetricpb.ExportMetricsServiceRequest:
		for _, rm := range m.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				c.metrics = append(c.metrics, sm.Metrics...)
			}
		}
	}
}

// Requests returns how many exports arrived, decoded or not.
func (c *Collector) Requests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.headers)
}

// Headers returns the headers of each export, in order.
func (c *Collector) Headers() []http.Header {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]http.Header(nil), c.headers...)
}

// Services returns the service.name of each batch of spans.
func (c *Collector) Services() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.services...)
}

// Named returns the spans named name, in the order they arrived.
func (c *Collector) Named(name string) []*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range c.spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// MetricNames returns the names of the metrics received, once each.
func (c *Collector) MetricNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, m := range c.metrics {
		if !seen[m.Name] {
			seen[m.Name] = true
			out = append(out, m.Name)
		}
	}
	return out
}

// Point returns the value of the first point of the metric name whose
// attributes include every key=value of attrs: a counter's value, a
// gauge's, or "count/sum" of a histogram's; "" if there is none.
func (c *Collector) Point(name string, attrs ...string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	match := func(kvs []*commonpb.KeyValue) bool {
		for _, a := range attrs {
			k, v, _ := strings.Cut(a, "=")
			if Value(kvs, k) != v {
				return false
			}
		}
		return true
	}
	for _, m := range c.metrics {
		if m.Name != name {
			continue
		}
		switch d := m.Data.(type) {
		case *metricpb.Metric_Sum:
			for _, p := range d.Sum.DataPoints {
				if match(p.Attributes) {
					return fmt.Sprint(p.GetAsInt())
				}
			}
		case *metricpb.Metric_Gauge:
			for _, p := range d.Gauge.DataPoints {
				if match(p.Attributes) {
					return fmt.Sprint(p.GetAsDouble())
				}
			}
		case *metricpb.Metric_Histogram:
			for _, p := range d.Histogram.DataPoints {
				if match(p.Attributes) {
					return fmt.Sprintf("%d/%g", p.Count, p.GetSum())
				}
			}
		}
	}
	return ""
}

// Value returns the attribute key of kvs as text ("" if absent): a
// string as it is, a number formatted.
func Value(kvs []*commonpb.KeyValue, key string) string {
	for _, kv := range kvs {
		if kv.Key != key {
			continue
		}
		switch v := kv.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			return v.StringValue
		case *commonpb.AnyValue_IntValue:
			return fmt.Sprint(v.IntValue)
		case *commonpb.AnyValue_DoubleValue:
			return fmt.Sprint(v.DoubleValue)
		case *commonpb.AnyValue_BoolValue:
			return fmt.Sprint(v.BoolValue)
		}
	}
	return ""
}

// Env returns a lookup (as os.LookupEnv) of the variables of kvs, "K=V
// K=V" with values without spaces: the OTEL_ variables of one test's
// command line, without touching the process's.
func Env(kvs string) func(string) (string, bool) {
	vars := map[string]string{}
	for _, kv := range strings.Fields(kvs) {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}
