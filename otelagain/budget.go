package otelagain

import (
	"context"

	"github.com/again-go/again/retry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Budget returns b, counting the retries it refuses under name (the
// again.budget.rejections counter) and reporting its tokens left (the
// again.budget.tokens gauge): the local count of a *retry.TokenBucket (any
// Budget with a method Tokens() float64), or the shared bucket of a
// fleet.Budget (a method SharedTokens(ctx) (float64, error), read when
// the metrics are collected, within the collection's context). A budget
// with neither reports no tokens. Give the returned Budget, not b, to
// retry.WithBudget or retryhttp.Transport. It forwards Validate to b, and
// a class's cost (retry.Class.Cost) to b's FailureCost if b has one.
//
// One gauge series is kept per name, the latest budget given wins: make
// one per budget, with a name from a bounded set. A nil b is returned as
// nil. The returned Budget is safe for concurrent use if b is.
func (t *Telemetry) Budget(name string, b retry.Budget) retry.Budget {
	if b == nil {
		return nil
	}
	if tb, ok := b.(*retry.TokenBucket); ok && tb == nil {
		return nil
	}
	if ob, ok := b.(*observedBudget); ok {
		b = ob.b // already observed: observe the budget itself under this name
	}
	ob := &observedBudget{b: b, t: t, attrs: bind(BudgetNameKey.String(name)),
		set: attribute.NewSet(BudgetNameKey.String(name))}
	t.mu.Lock()
	t.budgets[name] = ob
	t.mu.Unlock()
	return ob
}

// retryBudget is an observed budget, as the gauge's callback sees it.
type retryBudget interface {
	observe(ctx context.Context, o metric.Observer, g metric.Float64ObservableGauge)
}

type observedBudget struct {
	b     retry.Budget
	t     *Telemetry
	attrs bound
	set   attribute.Set
}

func (b *observedBudget) Success() { b.b.Success() }

func (b *observedBudget) Failure() bool { return b.counted(b.b.Failure()) }

// FailureCost charges b a class's cost (retry.Class.Cost) if b takes
// costs, as a *retry.TokenBucket and a fleet.Budget do; otherwise it is
// Failure, as retry would call it on b itself. Without it the class's
// cost would be lost behind the observer.
func (b *observedBudget) FailureCost(cost float64) bool {
	if cb, ok := b.b.(interface{ FailureCost(float64) bool }); ok {
		return b.counted(cb.FailureCost(cost))
	}
	return b.Failure()
}

// counted counts a refused retry and returns ok.
func (b *observedBudget) counted(ok bool) bool {
	if !ok {
		b.t.budgetRejections.Add(context.Background(), 1, b.attrs.add...)
	}
	return ok
}

// Validate is the budget's own, so that retry and retryhttp check it
// before the first attempt as they would without telemetry.
func (b *observedBudget) Validate() error {
	if v, ok := b.b.(interface{ Validate() error }); ok {
		return v.Validate()
	}
	return nil
}

func (b *observedBudget) observe(ctx context.Context, o metric.Observer, g metric.Float64ObservableGauge) {
	switch src := b.b.(type) {
	case interface{ Tokens() float64 }:
		o.ObserveFloat64(g, src.Tokens(), metric.WithAttributeSet(b.set))
	case interface {
		SharedTokens(context.Context) (float64, error)
	}:
		// A store that does not answer leaves a gap in the series rather
		// than a made-up value.
		if n, err := src.SharedTokens(ctx); err == nil {
			o.ObserveFloat64(g, n, metric.WithAttributeSet(b.set))
		}
	}
}
