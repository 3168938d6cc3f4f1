package fleet

import (
	"math"
	"sync/atomic"

	"github.com/again-go/again/retry"
)

var (
	_ retry.Budget             = (*Budget)(nil)
	_ interface{ Take() bool } = (*Budget)(nil) // what package hedge asks a Budget for
	// What retry asks a Budget for to charge a class's cost (retry.Class.Cost).
	_ interface{ FailureCost(float64) bool } = (*Budget)(nil)
)

// costMilli is a failure's cost in milli-tokens, as retry.TokenBucket's
// FailureCost counts it: a cost that is not a number > 0 takes nothing.
func costMilli(cost float64) int64 {
	if !(cost > 0) {
		return 0
	}
	return toMilli(cost)
}

// toMilli is v > 0 tokens in milli-tokens, as retry.TokenBucket counts
// them: rounded to the nearest, so that 8.001 (8000.999… × 1000 in
// floating point) is 8001, and clamped far beyond any real bucket so that
// the sums cannot overflow.
func toMilli(v float64) int64 {
	return int64(math.Round(math.Min(v, math.MaxInt64/(4*milli)) * milli))
}

// localBucket is the bucket a Budget decides with while Redis cannot be
// used: gRPC A6's rule, exactly as the script and retry.TokenBucket apply
// it, in the same milli-tokens, but with a level the Budget sets. It holds
// the milli-tokens missing from a full bucket, as the Redis key does.
type localBucket struct {
	capArg int64 // capacity in milli-tokens
	refund int64 // milli-tokens per success
	used   atomic.Int64
}

func newLocalBucket(capArg, refund int64) *localBucket {
	return &localBucket{capArg: capArg, refund: refund}
}

// success refunds one success, never above the capacity.
func (l *localBucket) success() {
	for {
		u := l.used.Load()
		if u == 0 || l.used.CompareAndSwap(u, max(0, u-l.refund)) {
			return
		}
	}
}

// failure takes m milli-tokens (a failure's cost), never below zero, and
// reports whether more than half the tokens remain, the retry rule.
func (l *localBucket) failure(m int64) bool {
	for {
		u := l.used.Load()
		next := min(u+m, l.capArg)
		if l.used.CompareAndSwap(u, next) {
			return l.capArg-next > l.capArg/2
		}
	}
}

// take takes one token if more than half the tokens remain after it, and
// reports whether it did: retry.TokenBucket.Take's rule.
func (l *localBucket) take() bool {
	for {
		u := l.used.Load()
		next := u + milli
		if l.capArg-next <= l.capArg/2 {
			return false
		}
		if l.used.CompareAndSwap(u, next) {
			return true
		}
	}
}

// decide makes a decision of kind (failure or take) on the local bucket;
// a failure costs m milli-tokens.
func (l *localBucket) decide(kind int, m int64) bool {
	if kind == take {
		return l.take()
	}
	return l.failure(m)
}

// set makes the level the one Redis just reported.
func (l *localBucket) set(used int64) { l.used.Store(min(max(used, 0), l.capArg)) }

// clamp lowers the level to the fallback level if it is above it: just
// enough tokens for one retry (one failure leaves a thousandth of a token
// above half), so that a process deciding alone makes at most one retry
// until its own successes refill its bucket, however full the shared
// bucket was when it last saw it.
func (l *localBucket) clamp() {
	floor := max(0, l.capArg-(l.capArg/2+milli+1))
	for {
		u := l.used.Load()
		if u >= floor || l.used.CompareAndSwap(u, floor) {
			return
		}
	}
}
