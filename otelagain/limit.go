package otelagain

import (
	"context"

	"github.com/again-go/again/limiter"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Limits reports, when the metrics are collected, every Limiter of g under
// name, each with its key (again.limit.key): its limit, the calls in
// flight and waiting, and the calls it refused (see the package doc). It
// reads the Limiters' own counts (limiter.Limiter.Snapshot), so it wraps
// nothing and may be called at any time, before or after g's first use.
// Calling it again for the same g renames it. Transport calls it for the
// Transport's Limits; for a gRPC client, give it the
// retrygrpc.Interceptor's Limits (keyed by target, or by its LimitKey). A
// Group bounds its keys (limiter.Group's MaxKeys), and so the series. A
// nil g does nothing.
func (t *Telemetry) Limits(name string, g *limiter.Group) {
	if g == nil {
		return
	}
	t.mu.Lock()
	t.limits[g] = name
	t.mu.Unlock()
}

// Limiter reports l under name, as Limits does each Limiter of a Group,
// without a key. A nil l does nothing.
func (t *Telemetry) Limiter(name string, l *limiter.Limiter) {
	if l == nil {
		return
	}
	t.mu.Lock()
	t.limits[l] = name
	t.mu.Unlock()
}

// limitInstruments are the limiters' observable instruments.
type limitInstruments struct {
	limit, inFlight, waiting metric.Int64ObservableGauge
	refused                  metric.Int64ObservableCounter
}

func (t *Telemetry) newLimitInstruments(m metric.Meter, keep func(error)) {
	gauge := func(name, desc string) metric.Int64ObservableGauge {
		g, err := m.Int64ObservableGauge(name, metric.WithUnit("{call}"), metric.WithDescription(desc))
		keep(err)
		return g
	}
	t.lim.limit = gauge("again.limit.limit", "Calls each concurrency limit lets in flight at once, now.")
	t.lim.inFlight = gauge("again.limit.in_flight", "Calls holding a permit of each concurrency limit.")
	t.lim.waiting = gauge("again.limit.waiting", "Calls waiting for a permit of each concurrency limit.")
	var err error
	t.lim.refused, err = m.Int64ObservableCounter("again.limit.refused", metric.WithUnit("{call}"),
		metric.WithDescription("Calls each concurrency limit refused locally, unsent."))
	keep(err)
	_, err = m.RegisterCallback(t.observeLimits, t.lim.limit, t.lim.inFlight, t.lim.waiting, t.lim.refused)
	keep(err)
}

// observeLimits reports every Limiter given to Limits or Limiter.
func (t *Telemetry) observeLimits(_ context.Context, o metric.Observer) error {
	t.mu.Lock()
	srcs := make(map[any]string, len(t.limits))
	for k, v := range t.limits {
		srcs[k] = v
	}
	t.mu.Unlock()
	for src, name := range srcs {
		switch src := src.(type) {
		case *limiter.Group:
			src.Range(func(key string, l *limiter.Limiter) bool {
				t.lim.observe(o, l, LimitNameKey.String(name), LimitKeyKey.String(key))
				return true
			})
		case *limiter.Limiter:
			t.lim.observe(o, src, LimitNameKey.String(name))
		}
	}
	return nil
}

func (li *limitInstruments) observe(o metric.Observer, l *limiter.Limiter, kvs ...attribute.KeyValue) {
	s := l.Snapshot()
	set := metric.WithAttributeSet(attribute.NewSet(kvs...))
	o.ObserveInt64(li.limit, int64(s.Limit), set)
	o.ObserveInt64(li.inFlight, int64(s.InFlight), set)
	o.ObserveInt64(li.waiting, int64(s.Waiting), set)
	o.ObserveInt64(li.refused, s.Refused, set)
}

// Attribute keys of the concurrency limits' metrics.
const (
	// LimitNameKey names a concurrency limit: the name given to Limits,
	// Limiter or Transport.
	LimitNameKey = attribute.Key("again.limit.name")
	// LimitKeyKey is a Limiter's key in its limiter.Group (a host in
	// retryhttp, a target or method in retrygrpc).
	LimitKeyKey = attribute.Key("again.limit.key")
)
