package fleet

import (
	"sync/atomic"

	"github.com/again-go/again/retry"
)

var (
	_ retry.Budget             = (*Budget)(nil)
	_ interface{ Take() bool } = (*Budget)(nil) // what package hedge asks a Budget for
)

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

// failure takes one token, never below zero, and reports whether more than
// half the tokens remain, the retry rule.
func (l *localBucket) failure() bool {
	for {
		u := l.used.Load()
		next := min(u+milli, l.capArg)
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

// decide makes a decision of kind (failure or take) on the local bucket.
func (l *localBucket) decide(kind int) bool {
	if kind == take {
		return l.take()
	}
	return l.failure()
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
