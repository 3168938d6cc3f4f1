package otelagain

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/again-go/again/shed"
)

// Attribute keys of the shedding metrics.
const (
	// ShedNameKey names a shed.Shedder: the name given to Shedder.
	ShedNameKey = attribute.Key("again.shed.name")
	// ShedCriticalityKey is a request's class: CRITICAL_PLUS, CRITICAL,
	// SHEDDABLE_PLUS, SHEDDABLE or UNKNOWN.
	ShedCriticalityKey = attribute.Key("again.shed.criticality")
	// ShedReasonKey is why a request was shed (shed.Reason's names:
	// queue_full, overload, deadline, timeout, canceled, quota), or
	// "admitted" on the queue-delay histogram.
	ShedReasonKey = attribute.Key("again.shed.reason")
)

// shedInstruments are the shedding metrics, made on the first call to
// Shedder so that a program that sheds nothing exports none.
type shedInstruments struct {
	once     sync.Once
	shed     metric.Int64Counter
	delay    metric.Float64Histogram
	inFlight metric.Int64ObservableGauge
	queued   metric.Int64ObservableGauge

	mu       sync.Mutex
	shedders map[string]*shed.Shedder // by name, the latest wins
}

func (t *Telemetry) shedInstruments() *shedInstruments {
	si := &t.sheds
	si.once.Do(func() {
		m := t.meter
		var errs []error
		keep := func(err error) {
			if err != nil {
				errs = append(errs, err)
			}
		}
		var err error
		si.shed, err = m.Int64Counter("again.shed.requests", metric.WithUnit("{request}"),
			metric.WithDescription("Requests the shedders refused, by class and reason."))
		keep(err)
		si.delay, err = m.Float64Histogram("again.shed.queue.duration", metric.WithUnit("s"),
			metric.WithDescription("How long each queued request waited, by class and outcome."),
			metric.WithExplicitBucketBoundaries(latencyBuckets...))
		keep(err)
		si.inFlight, err = m.Int64ObservableGauge("again.shed.in_flight", metric.WithUnit("{request}"),
			metric.WithDescription("Requests each shedder is serving."))
		keep(err)
		si.queued, err = m.Int64ObservableGauge("again.shed.queued", metric.WithUnit("{request}"),
			metric.WithDescription("Requests waiting in each shedder's queue."))
		keep(err)
		si.shedders = map[string]*shed.Shedder{}
		_, err = m.RegisterCallback(si.observe, si.inFlight, si.queued)
		keep(err)
		for _, err := range errs {
			otel.Handle(err)
		}
	})
	return si
}

func (si *shedInstruments) observe(_ context.Context, o metric.Observer) error {
	si.mu.Lock()
	defer si.mu.Unlock()
	for name, s := range si.shedders {
		st := s.Snapshot()
		set := metric.WithAttributeSet(attribute.NewSet(ShedNameKey.String(name)))
		o.ObserveInt64(si.inFlight, int64(st.InFlight), set)
		o.ObserveInt64(si.queued, int64(st.Queued), set)
	}
	return nil
}

// Shedder returns shed.New(cfg) with cfg's hooks extended to count what it
// sheds under name (again.shed.requests, by again.shed.criticality and
// again.shed.reason) and to record each queued request's wait
// (again.shed.queue.duration, in seconds, by class and outcome), and
// reports, when the metrics are collected, the requests it serves and
// those it queues (the again.shed.in_flight and again.shed.queued
// gauges). The Config's own OnShed and OnQueued are still called. One
// gauge series is kept per name: the latest Shedder wins.
func (t *Telemetry) Shedder(name string, cfg shed.Config) (*shed.Shedder, error) {
	si := t.shedInstruments()
	// The attribute sets, made once per class and reason: the hooks then
	// record without allocating.
	type key struct {
		c shed.Criticality
		r shed.Reason
	}
	sets := map[key]metric.MeasurementOption{}
	for c := shed.Unknown; c <= shed.CriticalPlus; c++ {
		for r := shed.Admitted; r <= shed.Quota; r++ {
			sets[key{c, r}] = metric.WithAttributeSet(attribute.NewSet(ShedNameKey.String(name),
				ShedCriticalityKey.String(c.String()), ShedReasonKey.String(r.String())))
		}
	}
	set := func(c shed.Criticality, r shed.Reason) metric.MeasurementOption {
		if o, ok := sets[key{c, r}]; ok {
			return o
		}
		return metric.WithAttributes(ShedNameKey.String(name), ShedCriticalityKey.String(c.String()), ShedReasonKey.String(r.String()))
	}
	onShed, onQueued := cfg.OnShed, cfg.OnQueued
	cfg.OnShed = func(c shed.Criticality, r shed.Reason) {
		si.shed.Add(context.Background(), 1, set(c, r))
		if onShed != nil {
			onShed(c, r)
		}
	}
	cfg.OnQueued = func(c shed.Criticality, waited time.Duration, r shed.Reason) {
		si.delay.Record(context.Background(), waited.Seconds(), set(c, r))
		if onQueued != nil {
			onQueued(c, waited, r)
		}
	}
	s, err := shed.New(cfg)
	if err != nil {
		return nil, err
	}
	si.mu.Lock()
	si.shedders[name] = s
	si.mu.Unlock()
	return s, nil
}
