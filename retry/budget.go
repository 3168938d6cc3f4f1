package retry

import (
	"math"
	"sync/atomic"
)

// Defaults of a Budget whose fields are zero; they are gRPC's usual values.
const (
	DefaultMaxTokens  = 10
	DefaultTokenRatio = 0.1
)

// milli is the fixed-point scale of the token count: gRPC specifies
// TokenRatio to three decimal places, so milli-tokens count it exactly.
const milli = 1000

// Budget limits retries across many calls, so that when a dependency is
// down the extra load from retrying stays near zero instead of multiplying
// the traffic by Retries+1. It is gRPC's retry throttling (proposal A6): a
// bucket holds up to MaxTokens tokens and starts full; every failed attempt
// that could be retried costs one token, every success refunds TokenRatio;
// a retry is allowed only while more than MaxTokens/2 tokens remain. The
// first attempt of a call is never blocked.
//
// The zero Budget is ready to use, with MaxTokens 10 and TokenRatio 0.1:
// after about five consecutive failures retries stop, and resume after
// about ten successes per missing token. Set the fields before first use
// and do not change them afterwards. Share one *Budget, typically per
// downstream service, between the calls that should throttle together
// with WithBudget. A Budget is safe for concurrent use and lock-free.
type Budget struct {
	// MaxTokens is the bucket's capacity, > 0; zero or less means 10.
	MaxTokens float64
	// TokenRatio is the tokens refunded by each success, > 0; zero or less
	// means 0.1. It is counted in thousandths.
	TokenRatio float64

	// used is the number of milli-tokens missing from the full bucket, so
	// that the zero value is a full bucket without any initialisation.
	used atomic.Int64
}

func (b *Budget) capacity() int64 {
	if !(b.MaxTokens > 0) {
		return DefaultMaxTokens * milli
	}
	return int64(math.Min(b.MaxTokens, math.MaxInt64/(4*milli)) * milli)
}

func (b *Budget) refund() int64 {
	if !(b.TokenRatio > 0) {
		return DefaultTokenRatio * milli
	}
	return max(1, int64(math.Min(b.TokenRatio, math.MaxInt64/(4*milli))*milli))
}

// Tokens returns the tokens currently in the bucket, between 0 and MaxTokens.
func (b *Budget) Tokens() float64 {
	return float64(b.capacity()-b.used.Load()) / milli
}

// failure takes one token, leaving at least zero.
func (b *Budget) failure() {
	c := b.capacity()
	for {
		u := b.used.Load()
		n := min(u+milli, c)
		if n == u || b.used.CompareAndSwap(u, n) {
			return
		}
	}
}

// success refunds TokenRatio tokens, up to a full bucket.
func (b *Budget) success() {
	r := b.refund()
	for {
		u := b.used.Load()
		if u == 0 {
			return
		}
		if b.used.CompareAndSwap(u, max(u-r, 0)) {
			return
		}
	}
}

// allow reports whether a retry may be made: more than half the tokens remain.
func (b *Budget) allow() bool {
	c := b.capacity()
	return c-b.used.Load() > c/2
}
