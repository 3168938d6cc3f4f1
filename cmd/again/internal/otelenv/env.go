package otelenv

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"go.opentelemetry.io/contrib/propagators/aws/xray"
	"go.opentelemetry.io/contrib/propagators/b3"
	"go.opentelemetry.io/contrib/propagators/jaeger"
	"go.opentelemetry.io/contrib/propagators/ot"
	"go.opentelemetry.io/otel/propagation"
)

// Variables are the OTEL_ variables that Read and Start read, in the order
// docs/telemetry.md lists them (a test checks that it lists each). The
// exporter reads a few more itself (timeouts, certificates, compression),
// named in the doc.
var Variables = []string{
	"OTEL_SDK_DISABLED",
	"OTEL_TRACES_EXPORTER",
	"OTEL_METRICS_EXPORTER",
	"OTEL_LOGS_EXPORTER",
	"OTEL_EXPORTER_OTLP_PROTOCOL",
	"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
	"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
	"OTEL_EXPORTER_OTLP_ENDPOINT",
	"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
	"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
	"OTEL_EXPORTER_OTLP_HEADERS",
	"OTEL_EXPORTER_OTLP_TRACES_HEADERS",
	"OTEL_EXPORTER_OTLP_METRICS_HEADERS",
	"OTEL_PROPAGATORS",
	"OTEL_SERVICE_NAME",
	"OTEL_RESOURCE_ATTRIBUTES",
}

// DefaultEndpoint is where OTLP/HTTP goes when an exporter is asked for by
// name and no endpoint is set: the spec's default, a collector on the same
// host, in plain HTTP (the SDK's own default is https, a compatibility
// footnote of the spec that no local collector answers).
const DefaultEndpoint = "http://localhost:4318"

// Settings are what the environment asks for, as Read decided. The zero
// Settings export nothing and propagate nothing.
type Settings struct {
	Traces, Metrics Signal
	// Propagators are the names of the propagators, in order, as
	// OTEL_PROPAGATORS lists them ("tracecontext", "baggage"): empty for
	// none.
	Propagators []string
}

// Signal is how one signal is exported. The zero Signal is not exported.
type Signal struct {
	// Export is whether the signal is exported at all.
	Export bool
	// Endpoint is the full URL that the exporter posts to, path included
	// (http://localhost:4318/v1/traces).
	Endpoint string
	// Headers are sent with each export, as OTEL_EXPORTER_OTLP_HEADERS and
	// the signal's own variable give them (the signal's win).
	Headers map[string]string
}

// Propagator returns the propagator that s.Propagators names: the
// composite of them, in order.
func (s Settings) Propagator() propagation.TextMapPropagator {
	var ps []propagation.TextMapPropagator
	for _, name := range s.Propagators {
		if p := propagators[name]; p != nil {
			ps = append(ps, p())
		}
	}
	return propagation.NewCompositeTextMapPropagator(ps...)
}

// propagators are the values of OTEL_PROPAGATORS that the spec defines,
// but none: W3C's from the API, the others from the OpenTelemetry
// contrib modules (small, with no dependency beyond the API).
var propagators = map[string]func() propagation.TextMapPropagator{
	"tracecontext": func() propagation.TextMapPropagator { return propagation.TraceContext{} },
	"baggage":      func() propagation.TextMapPropagator { return propagation.Baggage{} },
	"b3":           func() propagation.TextMapPropagator { return b3.New(b3.WithInjectEncoding(b3.B3SingleHeader)) },
	"b3multi":      func() propagation.TextMapPropagator { return b3.New(b3.WithInjectEncoding(b3.B3MultipleHeader)) },
	"jaeger":       func() propagation.TextMapPropagator { return jaeger.Jaeger{} },
	"xray":         func() propagation.TextMapPropagator { return xray.Propagator{} },
	"ottrace":      func() propagation.TextMapPropagator { return ot.OT{} },
}

// signal names one signal's variables.
type signal struct {
	name     string // for messages: "traces", "metrics"
	exporter string // OTEL_TRACES_EXPORTER
	upper    string // TRACES, in OTEL_EXPORTER_OTLP_TRACES_*
	path     string // appended to OTEL_EXPORTER_OTLP_ENDPOINT: /v1/traces
}

var (
	traces  = signal{"traces", "OTEL_TRACES_EXPORTER", "TRACES", "/v1/traces"}
	metrics = signal{"metrics", "OTEL_METRICS_EXPORTER", "METRICS", "/v1/metrics"}
)

// reader is one Read: the lookup, and the warnings said so far, so that
// each variable is warned about once however many signals read it.
type reader struct {
	lookup func(string) (string, bool)
	warn   func(string)
	warned map[string]bool
}

// get returns the variable's value, trimmed; empty and unset are the same,
// as the spec says.
func (r *reader) get(name string) string {
	v, _ := r.lookup(name)
	return strings.TrimSpace(v)
}

// warnf says one line about the variable name, the first time only.
func (r *reader) warnf(name, format string, args ...any) {
	if r.warned[name] {
		return
	}
	r.warned[name] = true
	r.warn(name + fmt.Sprintf(format, args...))
}

// Read decides what the environment asks for. lookup is os.LookupEnv or
// a test's; warn gets one line for each variable whose value is ignored
// (in part or whole), with what is done instead. Read never fails: a
// value it does not understand is reported and ignored, as the spec asks.
//
// As the command always has, it exports a signal only when asked: its
// exporter variable says otlp, or an endpoint is set (the spec's default
// exporter, otlp, would send every run's telemetry to localhost).
func Read(lookup func(string) (string, bool), warn func(string)) Settings {
	r := &reader{lookup: lookup, warn: warn, warned: map[string]bool{}}
	if strings.EqualFold(r.get("OTEL_SDK_DISABLED"), "true") {
		return Settings{}
	}
	s := Settings{Propagators: r.propagators()}
	s.Traces = r.signal(traces)
	s.Metrics = r.signal(metrics)
	// again makes no logs: otlp and none are understood and have nothing
	// to do; anything else is warned about as for the other signals.
	r.exporters("OTEL_LOGS_EXPORTER")
	return s
}

// exporters reads an exporter variable: whether it names otlp, whether it
// was set at all once what is not understood is ignored.
func (r *reader) exporters(name string) (otlp, set bool) {
	v := r.get(name)
	if v == "" {
		return false, false
	}
	var ignored []string
	for _, e := range strings.Split(v, ",") {
		switch e = strings.ToLower(strings.TrimSpace(e)); e {
		case "otlp":
			otlp, set = true, true
		case "none":
			set = true
		case "":
		default:
			ignored = append(ignored, e)
		}
	}
	switch {
	case len(ignored) == 0:
	case slices.Contains(ignored, "console") && len(ignored) == 1:
		r.warnf(name, "=console ignored: again prints no telemetry, its output is the command's; it exports otlp or none")
	default:
		r.warnf(name, "=%s ignored: again exports otlp or none", quote(strings.Join(ignored, ",")))
	}
	return otlp, set
}

// signal reads how sig is exported.
func (r *reader) signal(sig signal) Signal {
	own := "OTEL_EXPORTER_OTLP_" + sig.upper + "_ENDPOINT"
	otlp, set := r.exporters(sig.exporter)
	if !set {
		otlp = r.get("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || r.get(own) != ""
	}
	if !otlp || !r.protocol(sig) {
		return Signal{}
	}
	endpoint, ok := r.endpoint(sig, own)
	if !ok {
		return Signal{}
	}
	return Signal{Export: true, Endpoint: endpoint, Headers: r.headers(sig)}
}

// protocol reads the protocol of sig's exports, and whether it can be
// spoken: OTLP/HTTP with protobuf. http/json is sent as http/protobuf,
// which every OTLP/HTTP receiver takes on the same port; grpc, which
// again does not speak, exports nothing (its receiver would refuse every
// request).
func (r *reader) protocol(sig signal) bool {
	name := "OTEL_EXPORTER_OTLP_" + sig.upper + "_PROTOCOL"
	v := r.get(name)
	if v == "" {
		name = "OTEL_EXPORTER_OTLP_PROTOCOL"
		v = r.get(name)
	}
	switch p := strings.ToLower(v); p {
	case "", "http/protobuf":
	case "http/json":
		r.warnf(name, "=http/json: again sends OTLP/HTTP in protobuf (http/protobuf) instead")
	case "grpc":
		r.warnf(name, "=grpc: again exports OTLP over HTTP only (http/protobuf); %s not exported", r.signalsOf(name, sig))
		return false
	default:
		r.warnf(name, "=%s ignored: again sends OTLP over HTTP (http/protobuf)", quote(v))
	}
	return true
}

// signalsOf says which signals a variable shared by both stops: "traces
// and metrics" for a common one that both read, as far as Read knows when
// traces read it first.
func (r *reader) signalsOf(name string, sig signal) string {
	if strings.Contains(name, "_"+sig.upper+"_") {
		return sig.name
	}
	return "traces and metrics"
}

// endpoint returns the URL sig's exports go to: the signal's own
// variable as it is, or OTEL_EXPORTER_OTLP_ENDPOINT with the signal's
// path appended, or DefaultEndpoint's. A value that is not an http or
// https URL with a host (127.0.0.1:4318, without http://) is reported and
// nothing is exported to it, rather than sent to a host the user did not
// name: the spec requires the scheme.
func (r *reader) endpoint(sig signal, own string) (string, bool) {
	if v := r.get(own); v != "" {
		u, ok := r.url(own, v, sig.name)
		if !ok {
			return "", false
		}
		if u.Path == "" {
			u.Path = "/"
		}
		return u.String(), true
	}
	name, v := "OTEL_EXPORTER_OTLP_ENDPOINT", r.get("OTEL_EXPORTER_OTLP_ENDPOINT")
	if v == "" {
		v = DefaultEndpoint
	}
	u, ok := r.url(name, v, "")
	if !ok {
		return "", false
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + sig.path
	if u.RawPath != "" {
		u.RawPath = strings.TrimSuffix(u.RawPath, "/") + sig.path
	}
	return u.String(), true
}

// url parses an endpoint variable's value. Its message never quotes the
// value, which may carry credentials.
func (r *reader) url(name, v, signal string) (*url.URL, bool) {
	u, err := url.Parse(v)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return u, true
	}
	what := signal
	if what == "" {
		what = "traces and metrics"
	}
	hint := ""
	if !strings.Contains(v, "://") {
		hint = " (a host:port needs http:// before it)"
	}
	r.warnf(name, " is not an http:// or https:// URL with a host%s; %s not exported", hint, what)
	return nil, false
}

// headers reads the headers of sig's exports: the common variable's, then
// the signal's own, which win for a key they both set.
func (r *reader) headers(sig signal) map[string]string {
	h := map[string]string{}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_" + sig.upper + "_HEADERS"} {
		r.parseHeaders(name, h)
	}
	return h
}

// parseHeaders adds the headers of the variable name to h: a
// comma-separated list of key=value, each value percent-encoded (the
// W3C Baggage format, as the spec says). An entry that is malformed is
// not sent, and said so naming its key only, or its place in the list
// when the key cannot be told from the value: a header's value is
// usually a secret, and is never shown.
func (r *reader) parseHeaders(name string, h map[string]string) {
	v, _ := r.lookup(name)
	var bad []string
	for i, entry := range strings.Split(v, ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		key, value, ok := strings.Cut(entry, "=")
		key = strings.TrimSpace(key)
		if !ok || !isToken(key) {
			bad = append(bad, fmt.Sprintf("entry %d is not key=value", i+1))
			continue
		}
		dec, err := url.PathUnescape(strings.TrimSpace(value))
		if err != nil || strings.ContainsAny(dec, "\r\n\x00") {
			bad = append(bad, fmt.Sprintf("the value of %s is malformed (percent-encoding)", key))
			continue
		}
		h[strings.ToLower(key)] = dec
	}
	if len(bad) > 0 {
		r.warnf(name, ": %s; not sent", strings.Join(bad, ", "))
	}
}

// isToken reports whether s is an HTTP header name (RFC 9110's token).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

// propagators reads OTEL_PROPAGATORS: the propagators named, in order,
// without duplicates; tracecontext,baggage when it is not set; none for
// "none". A name the spec does not define is reported and ignored; a
// value of nothing but such names is as if not set.
func (r *reader) propagators() []string {
	const name = "OTEL_PROPAGATORS"
	v := r.get(name)
	var out, ignored []string
	none := false
	for _, p := range strings.Split(v, ",") {
		switch p = strings.ToLower(strings.TrimSpace(p)); {
		case propagators[p] != nil:
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		case p == "none":
			none = true
		case p == "":
		default:
			ignored = append(ignored, p)
		}
	}
	if len(ignored) > 0 {
		r.warnf(name, "=%s ignored: again propagates tracecontext, baggage, b3, b3multi, jaeger, xray, ottrace or none", quote(strings.Join(ignored, ",")))
	}
	switch {
	case none:
		return nil
	case len(out) == 0:
		return []string{"tracecontext", "baggage"}
	}
	return out
}
