package otelagain

import (
	"context"
	"errors"

	"github.com/again-go/again/retry"
	"github.com/again-go/again/throttle"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Admitter returns a, counting the requests it rejects under name (the
// again.throttle.rejections counter: errors matching throttle.ErrRejected)
// and reporting, when the metrics are collected, its probability of
// rejection (the again.throttle.p gauge: any Admitter with a method P()
// float64, as *throttle.Throttler and fleet.Throttle have) and the send
// rate it learned (the again.throttle.rate gauge: a *throttle.Rate, once
// throttled). Give the returned Admitter, not a, to retry.WithAdmitter.
//
// One gauge series is kept per name, the latest Admitter given wins:
// make one per throttle, with a name from a bounded set. A nil a is
// returned as nil. The returned Admitter is safe for concurrent use if a
// is.
func (t *Telemetry) Admitter(name string, a retry.Admitter) retry.Admitter {
	if a == nil {
		return nil
	}
	return t.admitter("\x00"+name, a, ThrottleNameKey.String(name))
}

func (t *Telemetry) admitter(id string, a retry.Admitter, kvs ...attribute.KeyValue) retry.Admitter {
	if oa, ok := a.(*observedAdmitter); ok {
		a = oa.a // already observed: observe the Admitter itself under this name
	}
	oa := &observedAdmitter{a: a, t: t, attrs: bind(kvs...), set: attribute.NewSet(kvs...)}
	t.mu.Lock()
	t.admits[id] = oa
	t.mu.Unlock()
	return oa
}

// Throttles instruments every Admitter of g under name, each with its key
// (again.throttle.key), as Admitter does one: it sets g.New (calling the
// one g had, or making g's default, first), so that each Admitter made
// from then on is observed. Call it before g's first use: Admitters made
// earlier are not instrumented. Calling it again for the same g does
// nothing. Transport calls it for the Transport's Throttles. A Group
// bounds its keys (throttle.Group's MaxKeys), and so the series.
func (t *Telemetry) Throttles(name string, g *throttle.Group) {
	if g == nil {
		return
	}
	t.mu.Lock()
	done := t.tgroups[g]
	t.tgroups[g] = true
	t.mu.Unlock()
	if done {
		return
	}
	prev := g.New
	g.New = func(key string) (retry.Admitter, error) {
		var a retry.Admitter
		var err error
		if prev != nil {
			a, err = prev(key)
		} else {
			a, err = throttle.New(throttle.Config{})
		}
		if err != nil {
			return nil, err
		}
		return t.admitter(name+"\x00"+key, a, ThrottleNameKey.String(name), ThrottleKeyKey.String(key)), nil
	}
}

type observedAdmitter struct {
	a     retry.Admitter
	t     *Telemetry
	attrs bound
	set   attribute.Set
}

func (a *observedAdmitter) Admit(ctx context.Context) error {
	err := a.a.Admit(ctx)
	if err != nil && errors.Is(err, throttle.ErrRejected) {
		a.t.throttleRejections.Add(ctx, 1, a.attrs.add...)
	}
	return err
}

func (a *observedAdmitter) Done(overloaded bool) { a.a.Done(overloaded) }

func (a *observedAdmitter) observe(o metric.Observer, p, rate metric.Float64ObservableGauge) {
	switch src := a.a.(type) {
	case interface{ P() float64 }:
		o.ObserveFloat64(p, src.P(), metric.WithAttributeSet(a.set))
	case *throttle.Rate:
		if st := src.Stats(); st.Enabled {
			o.ObserveFloat64(rate, st.FillRate, metric.WithAttributeSet(a.set))
		}
	}
}
