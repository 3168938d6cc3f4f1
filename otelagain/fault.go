package otelagain

import (
	"net"
	"strconv"
	"sync"

	"github.com/again-go/again/fault"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys of the fault metric and events.
const (
	// FaultNameKey names a fault.Injector: the name given to Faults.
	FaultNameKey = attribute.Key("again.fault.name")
	// FaultKindKey is an injected fault's kind (fault.Kind's names:
	// status, reset, latency, ...).
	FaultKindKey = attribute.Key("again.fault.kind")
	// FaultIndexKey is the fault's index in the Injector's Faults (span
	// events only: it would multiply the series).
	FaultIndexKey = attribute.Key("again.fault.index")
)

// FaultEvent is the name of the span event of an injected fault.
const FaultEvent = "again.fault"

// MaxFaultTargets is how many distinct server.address values the fault
// counter of one Faults call records; the faults of any further target
// count under server.address "_OTHER" (OpenTelemetry's name for values
// past a bound). On the server side the address comes from the request's
// Host header, which the client chooses: without a bound, a client could
// make the counter a series per request.
const MaxFaultTargets = 100

// otherTarget is the server.address of targets past MaxFaultTargets.
const otherTarget = "_OTHER"

// Faults instruments in under name (the again.fault.name attribute): it
// sets in.OnInject (calling the one in had, if any, after its own) so that
// every injected fault counts in
//
//	again.fault.injected   Counter   {fault}   faults injected, with again.fault.name, again.fault.kind and server.address
//
// and adds the event again.fault (with again.fault.kind,
// again.fault.index, server.address and server.port) to the span of the
// request's context, if it has one: on the client side, under retryhttp
// and Transport, that is the attempt's span, next to the retry it caused.
//
// The target, server.address and server.port, is the fault.Event's Host
// split at its port: the host of the request's URL (or its Host header)
// for HTTP, the call's :authority for gRPC. It holds no path, query or
// userinfo. The counter has no server.port (a series per port would
// rarely help) and records at most MaxFaultTargets addresses; a request
// without a host has no server.address. Call Faults before in's first
// use, once.
func (t *Telemetry) Faults(name string, in *fault.Injector) {
	if in == nil {
		return
	}
	ft := &faultTargets{name: FaultNameKey.String(name), series: map[faultSeries]bound{}}
	prev := in.OnInject
	in.OnInject = func(e fault.Event) {
		host, port := splitTarget(e.Host)
		t.faultsInjected.Add(e.Context, 1, ft.bound(e.Fault.Kind, host).add...)
		if span := trace.SpanFromContext(e.Context); span.IsRecording() {
			attrs := make([]attribute.KeyValue, 0, 4)
			attrs = append(attrs, FaultKindKey.String(e.Fault.Kind.String()), FaultIndexKey.Int(e.Index))
			if host != "" {
				attrs = append(attrs, semconv.ServerAddress(host))
				if port > 0 {
					attrs = append(attrs, semconv.ServerPort(port))
				}
			}
			span.AddEvent(FaultEvent, trace.WithAttributes(attrs...))
		}
		if prev != nil {
			prev(e)
		}
	}
}

// faultSeries is a series of the fault counter: a kind and an address.
type faultSeries struct {
	kind fault.Kind
	host string
}

// faultTargets holds the counter's attribute sets of one Faults call,
// made on first use. It is safe for concurrent use.
type faultTargets struct {
	name   attribute.KeyValue
	mu     sync.Mutex
	series map[faultSeries]bound
	hosts  map[string]bool // the addresses recorded, up to MaxFaultTargets
}

// bound returns the attribute set of kind k at host, "" for none.
func (ft *faultTargets) bound(k fault.Kind, host string) bound {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if host != "" && !ft.hosts[host] {
		if len(ft.hosts) < MaxFaultTargets {
			if ft.hosts == nil {
				ft.hosts = map[string]bool{}
			}
			ft.hosts[host] = true
		} else {
			host = otherTarget
		}
	}
	s := faultSeries{k, host}
	b, ok := ft.series[s]
	if !ok {
		kvs := []attribute.KeyValue{ft.name, FaultKindKey.String(k.String())}
		if host != "" {
			kvs = append(kvs, semconv.ServerAddress(host))
		}
		b = bind(kvs...)
		ft.series[s] = b
	}
	return b
}

// splitTarget splits a fault.Event's Host, "host", "host:port" or
// "[ipv6]:port", into the host and the port (0 if none).
func splitTarget(hostport string) (string, int) {
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		port, _ := strconv.Atoi(p)
		return h, port
	}
	if n := len(hostport); n > 1 && hostport[0] == '[' && hostport[n-1] == ']' {
		return hostport[1 : n-1], 0
	}
	return hostport, 0
}
