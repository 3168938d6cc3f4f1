package otelagain

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// reason is why a call stopped, as the again.retry.reason attribute says.
type reason uint8

const (
	reasonSuccess reason = iota
	reasonExhausted
	reasonPermanent
	reasonDeadline
	reasonCanceled
	reasonRetryAfterTooLong
	reasonRejected
	reasonBudget
	reasonNotReplayable
	reasonOther
	numReasons
)

var reasonNames = [numReasons]string{"success", "exhausted", "permanent", "deadline", "canceled",
	"retry_after_too_long", "rejected", "budget", "not_replayable", "other"}

// reasonOf maps the end of a call (nil, or the *retry.Error that ends it)
// to its reason, without allocating for a *retry.Error.
func reasonOf(err error) reason {
	if err == nil {
		return reasonSuccess
	}
	re, ok := err.(*retry.Error)
	if !ok && !errors.As(err, &re) {
		return reasonOther
	}
	switch re.Reason {
	case retry.ErrExhausted:
		return reasonExhausted
	case retry.ErrPermanent:
		if errors.Is(re.Last, retryhttp.ErrNotReplayable) {
			return reasonNotReplayable
		}
		return reasonPermanent
	case retry.ErrDeadline:
		return reasonDeadline
	case retry.ErrCanceled:
		return reasonCanceled
	case retry.ErrRetryAfterTooLong:
		return reasonRetryAfterTooLong
	case retry.ErrRejected:
		return reasonRejected
	case retry.ErrBudget:
		return reasonBudget
	}
	return reasonOther
}

// Reason returns the again.retry.reason of a call that ended with err: nil
// (success) or the *retry.Error that ended it (see the package doc for
// the values).
func Reason(err error) string { return reasonNames[reasonOf(err)] }

// retryMetrics records the calls of one named operation, with its
// attribute sets bound once, so that recording allocates nothing.
type retryMetrics struct {
	t        *Telemetry
	byReason [numReasons]bound
	name     bound
	// calls counts the calls by reason, for the again.retry.calls
	// observable counter.
	calls    [numReasons]atomic.Int64
	observed [numReasons][]metric.ObserveOption
}

// bound is one attribute set, as the options of each kind of instrument.
type bound struct {
	add []metric.AddOption
	rec []metric.RecordOption
}

func bind(kvs ...attribute.KeyValue) bound {
	set := metric.WithAttributeSet(attribute.NewSet(kvs...))
	return bound{add: []metric.AddOption{set}, rec: []metric.RecordOption{set}}
}

// retryMetrics returns the metrics of name, made on first use: the calls
// of one name share their series however many Observers record them.
func (t *Telemetry) retryMetrics(name string) *retryMetrics {
	t.mu.Lock()
	defer t.mu.Unlock()
	if m := t.retries[name]; m != nil {
		return m
	}
	m := &retryMetrics{t: t, name: bind(RetryNameKey.String(name))}
	for r := range numReasons {
		kvs := []attribute.KeyValue{RetryNameKey.String(name), RetryReasonKey.String(reasonNames[r])}
		m.byReason[r] = bind(kvs...)
		m.observed[r] = []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(kvs...))}
	}
	t.retries[name] = m
	return m
}

// end records a call that stopped for r after attempts attempts: every
// call, a first-try success too, in again.retry.attempts, so that its
// count is the calls and its sum their attempts.
func (m *retryMetrics) end(ctx context.Context, attempts int, r reason) {
	m.calls[r].Add(1)
	b := &m.byReason[r]
	m.t.attempts.Record(ctx, int64(attempts), b.rec...)
	if attempts > 1 {
		// As in A96, a call without retries records none.
		m.t.retryCounts.Record(ctx, int64(attempts-1), b.rec...)
	}
}

// observe reports the calls counted so far, by reason.
func (m *retryMetrics) observe(o metric.Observer, c metric.Int64ObservableCounter) {
	for r := range numReasons {
		if n := m.calls[r].Load(); n > 0 {
			o.ObserveInt64(c, n, m.observed[r]...)
		}
	}
}

// wait records one wait between attempts.
func (m *retryMetrics) wait(ctx context.Context, d time.Duration) {
	m.t.waits.Record(ctx, d.Seconds(), m.name.rec...)
}

// Observer returns a retry.Observer that records the calls it observes
// under the name given (the again.retry.name attribute): pass it to
// retry.WithObserver. Make it once per operation, not per call, and keep
// name from a bounded set (an operation or a dependency, never a request's
// ID or URL): each name is a time series per reason. It is safe for
// concurrent use by any number of calls; recording allocates nothing.
func (t *Telemetry) Observer(name string) retry.Observer {
	return observer{t.retryMetrics(name)}
}

// Retry is retry.WithObserver(t.Observer(name)): the option to give Do,
// Run or NewLoop. Make it once and reuse it.
func (t *Telemetry) Retry(name string) retry.Option {
	return retry.WithObserver(t.Observer(name))
}

type observer struct{ m *retryMetrics }

func (o observer) OnRetry(ctx context.Context, e retry.Event) { o.m.wait(ctx, e.Delay) }

func (o observer) OnEnd(ctx context.Context, attempts int, err error) {
	o.m.end(ctx, attempts, reasonOf(err))
}
