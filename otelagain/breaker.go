package otelagain

import (
	"context"
	"sync"

	"github.com/again-go/again/breaker"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// states are the breaker states as the metrics name them.
var states = [...]breaker.State{breaker.Closed, breaker.Open, breaker.HalfOpen, breaker.Isolated}

func stateName(s breaker.State) string {
	switch s {
	case breaker.Closed:
		return "closed"
	case breaker.Open:
		return "open"
	case breaker.HalfOpen:
		return "half_open"
	case breaker.Isolated:
		return "isolated"
	}
	return "other"
}

func stateIndex(s breaker.State) int {
	if s >= 0 && int(s) < len(states) {
		return int(s)
	}
	return 0
}

// breakerMetrics are the bound attribute sets of one breaker: its name,
// and its key in a Group.
type breakerMetrics struct {
	t       *Telemetry
	base    []attribute.KeyValue
	byState [len(states)]bound                  // rejections by the state that rejected, stale reports by the one that admitted
	state   [len(states)][]metric.ObserveOption // the gauge's series, by state
}

func (t *Telemetry) breakerMetrics(base ...attribute.KeyValue) *breakerMetrics {
	m := &breakerMetrics{t: t, base: base}
	for i, s := range states {
		kv := append(append([]attribute.KeyValue(nil), base...), BreakerStateKey.String(stateName(s)))
		m.byState[i] = bind(kv...)
		m.state[i] = []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(kv...))}
	}
	return m
}

// hook adds the metrics' hooks to cfg, keeping cfg's own.
func (m *breakerMetrics) hook(cfg *breaker.Config) {
	change, reject, stale := cfg.OnStateChange, cfg.OnReject, cfg.OnStale
	cfg.OnStateChange = func(c breaker.Change) {
		// Transitions are rare: the attribute set is built for each.
		kv := append(append([]attribute.KeyValue(nil), m.base...),
			BreakerFromKey.String(stateName(c.From)), BreakerToKey.String(stateName(c.To)))
		m.t.breakerTransitions.Add(context.Background(), 1, metric.WithAttributes(kv...))
		if change != nil {
			change(c)
		}
	}
	cfg.OnReject = func(e *breaker.OpenError) {
		m.t.breakerRejections.Add(context.Background(), 1, m.byState[stateIndex(e.State)].add...)
		if reject != nil {
			reject(e)
		}
	}
	cfg.OnStale = func(s breaker.Stale) {
		m.t.breakerStale.Add(context.Background(), 1, m.byState[stateIndex(s.Admitted)].add...)
		if stale != nil {
			stale(s)
		}
	}
}

func (m *breakerMetrics) observe(o metric.Observer, g metric.Int64ObservableGauge, b *breaker.Breaker) {
	now := b.State()
	for i, s := range states {
		v := int64(0)
		if s == now {
			v = 1
		}
		o.ObserveInt64(g, v, m.state[i]...)
	}
}

// observedGroup is a Group, or a single breaker, whose states the gauge
// reports.
type observedGroup struct {
	g      *breaker.Group
	single *breaker.Breaker
	one    *breakerMetrics // single's

	mu   sync.Mutex
	keys map[string]*breakerMetrics // a Group's, by key
}

func (og *observedGroup) observe(o metric.Observer, gauge metric.Int64ObservableGauge) {
	if og.single != nil {
		og.one.observe(o, gauge, og.single)
		return
	}
	og.g.Range(func(key string, b *breaker.Breaker) bool {
		og.mu.Lock()
		m := og.keys[key]
		og.mu.Unlock()
		if m != nil {
			m.observe(o, gauge, b)
		}
		return true
	})
}

// Group instruments every breaker of g under name (the again.breaker.name
// attribute), each with its key (again.breaker.key): it sets g.Configure
// (calling the one g had, if any, first) so that each breaker made from
// then on counts its transitions, rejections and stale reports, and reports the state of
// each breaker (read from the breaker when the metrics are collected) in
// the again.breaker.state gauge. Call it before g's first use: breakers
// made earlier are not instrumented. Calling it again for the same g does
// nothing.
//
// A Group never forgets a key, and each key is a series per state: keep
// keys bounded (retryhttp.Transport.BreakerKey can map hosts onto a
// bounded set; see the package doc).
func (t *Telemetry) Group(name string, g *breaker.Group) {
	if g == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, og := range t.groups {
		if og.g == g {
			return
		}
	}
	og := &observedGroup{g: g, keys: map[string]*breakerMetrics{}}
	prev := g.Configure
	g.Configure = func(key string, cfg *breaker.Config) {
		if prev != nil {
			prev(key, cfg)
		}
		m := t.breakerMetrics(BreakerNameKey.String(name), BreakerKeyKey.String(key))
		m.hook(cfg)
		og.mu.Lock()
		og.keys[key] = m
		og.mu.Unlock()
	}
	t.groups["group\x00"+name] = og
}

// Breaker returns breaker.New(cfg) with cfg's hooks extended to count its
// transitions, rejections and stale reports under name (the
// again.breaker.name attribute), and reports its state in the
// again.breaker.state gauge. The Config's own OnStateChange, OnReject and
// OnStale are still called. One gauge series is kept
// per name: the latest breaker wins.
func (t *Telemetry) Breaker(name string, cfg breaker.Config) (*breaker.Breaker, error) {
	m := t.breakerMetrics(BreakerNameKey.String(name))
	m.hook(&cfg)
	b, err := breaker.New(cfg)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.groups["breaker\x00"+name] = &observedGroup{single: b, one: m}
	t.mu.Unlock()
	return b, nil
}
