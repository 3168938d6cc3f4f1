package otelagain

import (
	"github.com/again-go/again/fault"
	"go.opentelemetry.io/otel/attribute"
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

// Faults instruments in under name (the again.fault.name attribute): it
// sets in.OnInject (calling the one in had, if any, after its own) so that
// every injected fault counts in
//
//	again.fault.injected   Counter   {fault}   faults injected, with again.fault.name and again.fault.kind
//
// and adds the event again.fault (with again.fault.kind and
// again.fault.index) to the span of the request's context, if it has one:
// on the client side, under retryhttp and Transport, that is the
// attempt's span, next to the retry it caused. Call it before in's first
// use, once.
func (t *Telemetry) Faults(name string, in *fault.Injector) {
	if in == nil {
		return
	}
	kinds := fault.Kinds()
	byKind := make([]bound, len(kinds))
	for i, k := range kinds {
		byKind[i] = bind(FaultNameKey.String(name), FaultKindKey.String(k.String()))
	}
	prev := in.OnInject
	in.OnInject = func(e fault.Event) {
		k := int(e.Fault.Kind)
		t.faultsInjected.Add(e.Context, 1, byKind[k].add...)
		if span := trace.SpanFromContext(e.Context); span.IsRecording() {
			span.AddEvent(FaultEvent, trace.WithAttributes(FaultKindKey.String(e.Fault.Kind.String()), FaultIndexKey.Int(e.Index)))
		}
		if prev != nil {
			prev(e)
		}
	}
}
