package otelagain

import (
	"context"
	"sync"

	"github.com/again-go/again/hedge"
	"github.com/again-go/again/throttle"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the meter and the tracer: the
// module's import path.
const ScopeName = "github.com/again-go/again/otelagain"

// Telemetry makes the instruments of this package on one MeterProvider and
// one TracerProvider, and instruments retry calls, HTTP transports, budgets
// and breakers with them. Make one with New, once per process (or per
// provider), and share it.
//
// The zero Telemetry is not usable: use New. A Telemetry is safe for
// concurrent use.
type Telemetry struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator

	calls       metric.Int64ObservableCounter
	attempts    metric.Int64Histogram
	retryCounts metric.Int64Histogram
	waits       metric.Float64Histogram

	hedgesSent metric.Int64Counter
	hedgesWon  metric.Int64Counter

	faultsInjected metric.Int64Counter

	budgetRejections metric.Int64Counter
	tokens           metric.Float64ObservableGauge

	throttleRejections metric.Int64Counter
	throttleP          metric.Float64ObservableGauge
	throttleRate       metric.Float64ObservableGauge

	breakerState       metric.Int64ObservableGauge
	breakerTransitions metric.Int64Counter
	breakerRejections  metric.Int64Counter
	breakerStale       metric.Int64Counter

	mu      sync.Mutex
	retries map[string]*retryMetrics // by name
	budgets map[string]retryBudget   // observed by the tokens gauge, by name
	groups  map[string]*observedGroup
	admits  map[string]*observedAdmitter // observed by the throttle gauges, by name and key
	tgroups map[*throttle.Group]bool     // the throttle Groups instrumented
	hedgers map[*hedge.Hedger]struct{}   // instrumented already

	lim    limitInstruments
	limits map[any]string // the *limiter.Group or *limiter.Limiter observed, and its name
	meter  metric.Meter   // for the instruments made on first use (shed's)
	sheds  shedInstruments
}

// Option changes what New uses. The zero Option does nothing.
type Option struct{ apply func(*config) }

type config struct {
	mp   metric.MeterProvider
	tp   trace.TracerProvider
	prop propagation.TextMapPropagator
}

// WithMeterProvider makes the instruments on mp. Without it (or with a nil
// mp), New uses the global MeterProvider (otel.GetMeterProvider), which
// records nothing until the application sets one.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return Option{func(c *config) { c.mp = mp }}
}

// WithTracerProvider makes the spans on tp. Without it (or with a nil tp),
// New uses the global TracerProvider (otel.GetTracerProvider).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return Option{func(c *config) { c.tp = tp }}
}

// WithPropagators sets how each HTTP attempt carries its span's context to
// the server (W3C traceparent, for example). Without it (or with a nil
// p), New uses the global propagator (otel.GetTextMapPropagator), which
// propagates nothing until the application sets one.
func WithPropagators(p propagation.TextMapPropagator) Option {
	return Option{func(c *config) { c.prop = p }}
}

// Buckets of the histograms, as gRPC's A96 metrics have them: counts of 1
// to 5 for the attempts and retries of a call, and gRPC's latency buckets
// (A66), in seconds, for the waits.
var (
	countBuckets   = []float64{1, 2, 3, 4, 5}
	latencyBuckets = []float64{0, 0.00001, 0.00005, 0.0001, 0.0003, 0.0006, 0.0008, 0.001, 0.002,
		0.003, 0.004, 0.005, 0.006, 0.008, 0.01, 0.013, 0.016, 0.02, 0.025, 0.03, 0.04, 0.05, 0.065,
		0.08, 0.1, 0.13, 0.16, 0.2, 0.25, 0.3, 0.4, 0.5, 0.65, 0.8, 1, 2, 5, 10, 20, 50, 100}
)

// New returns a Telemetry that makes its instruments on the providers
// that opts name, or on the global ones. An instrument the MeterProvider
// refuses is reported to otel.Handle, the global error handler, and
// replaced by one that records nothing, as OpenTelemetry's own
// instrumentation does: telemetry never fails the program.
func New(opts ...Option) *Telemetry {
	var c config
	for _, o := range opts {
		if o.apply != nil {
			o.apply(&c)
		}
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	if c.prop == nil {
		c.prop = otel.GetTextMapPropagator()
	}
	m := c.mp.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL))
	t := &Telemetry{
		meter:   m,
		tracer:  c.tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		prop:    c.prop,
		retries: map[string]*retryMetrics{},
		budgets: map[string]retryBudget{},
		groups:  map[string]*observedGroup{},
		admits:  map[string]*observedAdmitter{},
		tgroups: map[*throttle.Group]bool{},
		hedgers: map[*hedge.Hedger]struct{}{},
		limits:  map[any]string{},
	}
	var errs []error
	// keep records an instrument's error; the instrument itself is usable
	// either way (the SDK returns one that records nothing).
	keep := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		keep(err)
		return c
	}
	histogram := func(name, unit, desc string) metric.Int64Histogram {
		h, err := m.Int64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(countBuckets...))
		keep(err)
		return h
	}
	var err error
	t.calls, err = m.Int64ObservableCounter("again.retry.calls", metric.WithUnit("{call}"),
		metric.WithDescription("Calls that ended, by the reason they stopped."))
	keep(err)
	t.attempts = histogram("again.retry.attempts", "{attempt}",
		"Attempts per call, the first included.")
	t.retryCounts = histogram("again.retry.retries", "{retry}", "Retries per call that retried at least once.")
	t.waits, err = m.Float64Histogram("again.retry.wait.duration", metric.WithUnit("s"),
		metric.WithDescription("Each wait between two attempts of a call."), metric.WithExplicitBucketBoundaries(latencyBuckets...))
	keep(err)
	t.hedgesSent = counter("again.hedge.sent", "{hedge}", "Hedges sent: copies of an attempt beyond the first.")
	t.hedgesWon = counter("again.hedge.won", "{hedge}", "Hedges whose answer was their attempt's.")
	t.faultsInjected = counter("again.fault.injected", "{fault}", "Faults injected by package fault's injectors.")
	t.budgetRejections = counter("again.budget.rejections", "{retry}", "Retries the budget refused.")
	t.tokens, err = m.Float64ObservableGauge("again.budget.tokens", metric.WithUnit("{token}"),
		metric.WithDescription("Tokens left in the budget."))
	keep(err)
	t.breakerState, err = m.Int64ObservableGauge("again.breaker.state", metric.WithUnit("{state}"),
		metric.WithDescription("1 for the state each breaker is in, 0 for the others."))
	keep(err)
	t.breakerTransitions = counter("again.breaker.transitions", "{transition}", "State changes of the breakers.")
	t.breakerRejections = counter("again.breaker.rejections", "{call}", "Calls the breakers rejected.")
	t.breakerStale = counter("again.breaker.stale", "{report}", "Reports the breakers dropped, arriving after a state change.")
	t.throttleRejections = counter("again.throttle.rejections", "{request}", "Requests the throttles rejected locally, unsent.")
	t.throttleP, err = m.Float64ObservableGauge("again.throttle.p", metric.WithUnit("1"),
		metric.WithDescription("Probability with which each throttle rejects its next request."))
	keep(err)
	t.throttleRate, err = m.Float64ObservableGauge("again.throttle.rate", metric.WithUnit("{request}/s"),
		metric.WithDescription("Send rate each adaptive rate limiter learned, once throttled."))
	keep(err)
	_, err = m.RegisterCallback(t.observe, t.calls, t.tokens, t.breakerState, t.throttleP, t.throttleRate)
	keep(err)
	t.newLimitInstruments(m, keep)
	for _, err := range errs {
		otel.Handle(err)
	}
	return t
}

// observe reports the observable instruments: the calls counted so far,
// every budget's tokens and every breaker's state, read now.
func (t *Telemetry) observe(ctx context.Context, o metric.Observer) error {
	t.mu.Lock()
	retries := make([]*retryMetrics, 0, len(t.retries))
	for _, m := range t.retries {
		retries = append(retries, m)
	}
	budgets := make([]retryBudget, 0, len(t.budgets))
	for _, b := range t.budgets {
		budgets = append(budgets, b)
	}
	groups := make([]*observedGroup, 0, len(t.groups))
	for _, g := range t.groups {
		groups = append(groups, g)
	}
	admits := make([]*observedAdmitter, 0, len(t.admits))
	for _, a := range t.admits {
		admits = append(admits, a)
	}
	t.mu.Unlock()
	for _, a := range admits {
		a.observe(o, t.throttleP, t.throttleRate)
	}
	for _, m := range retries {
		m.observe(o, t.calls)
	}
	for _, b := range budgets {
		b.observe(ctx, o, t.tokens)
	}
	for _, g := range groups {
		g.observe(o, t.breakerState)
	}
	return nil
}

// Attribute keys of this package's metrics and spans.
const (
	// RetryNameKey names the retried operation: the name given to Retry
	// or Transport.
	RetryNameKey = attribute.Key("again.retry.name")
	// RetryReasonKey is why a call stopped: see the package doc.
	RetryReasonKey = attribute.Key("again.retry.reason")
	// HedgeNameKey names a hedge.Hedger: the name given to Hedger.
	HedgeNameKey = attribute.Key("again.hedge.name")
	// BudgetNameKey names a budget: the name given to Budget.
	BudgetNameKey = attribute.Key("again.budget.name")
	// ThrottleNameKey names a throttle: the name given to Admitter or
	// Throttles.
	ThrottleNameKey = attribute.Key("again.throttle.name")
	// ThrottleKeyKey is an Admitter's key in its throttle.Group (a host in
	// retryhttp, a target or method in retrygrpc).
	ThrottleKeyKey = attribute.Key("again.throttle.key")
	// BreakerNameKey names a breaker or a Group: the name given to
	// Breaker, Group or Transport.
	BreakerNameKey = attribute.Key("again.breaker.name")
	// BreakerKeyKey is a breaker's key in its Group (a host by default in
	// retryhttp).
	BreakerKeyKey = attribute.Key("again.breaker.key")
	// BreakerStateKey is a breaker state: closed, open, half_open or
	// isolated.
	BreakerStateKey = attribute.Key("again.breaker.state")
	// BreakerFromKey and BreakerToKey are the states of a transition.
	BreakerFromKey = attribute.Key("again.breaker.from")
	BreakerToKey   = attribute.Key("again.breaker.to")
)
