package admission

import (
	"context"
	"sync/atomic"
	"time"
)

// Limit is the concurrency limit a Shedder admits requests under: a Fixed
// one, or an adaptive one that learns from the handler's latency, such as
// package limiter's Limiter (with its default MaxWait of zero).
//
// Admit takes a permit if the limit allows one more request in flight,
// and returns a non-nil error otherwise; it must not wait (the Shedder
// queues), and is called with the Shedder's queue locked when the queue
// is not empty. Release gives a permit back, after a request that took
// took (negative: not measured, as after a panic or when the client went
// away) and was an overload signal if overloaded. A Shedder never calls
// Release more often than Admit succeeded. Both must be safe for
// concurrent use.
type Limit interface {
	Admit(ctx context.Context) error
	Release(overloaded bool, took time.Duration)
}

// Fixed is a fixed concurrency limit: Admit succeeds while fewer than N
// permits are out. The zero Fixed admits nothing; NewFixed makes one. It
// is safe for concurrent use.
type Fixed struct {
	n        int64
	inflight atomic.Int64
}

var _ Limit = (*Fixed)(nil)

// NewFixed returns a limit of n permits. n below 1 is 1.
func NewFixed(n int) *Fixed { return &Fixed{n: int64(max(n, 1))} }

// Admit takes a permit if fewer than N are out, and returns ErrLimited
// otherwise. It never waits, and does not read ctx.
func (f *Fixed) Admit(context.Context) error {
	for {
		n := f.inflight.Load()
		if n >= f.n {
			return ErrLimited
		}
		if f.inflight.CompareAndSwap(n, n+1) {
			return nil
		}
	}
}

// Release gives a permit back; a fixed limit learns nothing from the
// request.
func (f *Fixed) Release(bool, time.Duration) { f.inflight.Add(-1) }

// Limit returns N.
func (f *Fixed) Limit() int { return int(f.n) }

// InFlight returns the permits out now.
func (f *Fixed) InFlight() int { return int(f.inflight.Load()) }
