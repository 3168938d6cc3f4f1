package retry

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"
)

// Budget decides whether failed attempts may be retried, across many calls.
// Do and Run consult the Budget given with WithBudget; retryhttp.Transport
// consults its Budget field. TokenBucket is the usual implementation; a
// fleet-wide budget (shared by many processes) implements the same two
// methods. Implementations must be safe for concurrent use: one Budget is
// typically shared by every call to the same dependency.
//
// Neither method is called for an attempt that was rejected before reaching
// the dependency (an error with Rejected() true, see Do), nor for an error
// that is not retried at all (Permanent, the classifier, the caller's
// context).
type Budget interface {
	// Success records an attempt that succeeded.
	Success()
	// Failure records an attempt that failed and could be retried, and reports
	// whether the retry may be made.
	Failure() bool
}

// Defaults of a TokenBucket whose fields are zero; they are gRPC's usual
// values.
const (
	DefaultMaxTokens  = 10
	DefaultTokenRatio = 0.1
)

// milli is the fixed-point scale of the token count: gRPC specifies
// TokenRatio to three decimal places, so milli-tokens count it exactly.
const milli = 1000

// TokenBucket is a Budget that limits retries across many calls, so that
// when a dependency is down the extra load from retrying stays near zero
// instead of multiplying the traffic by the policy's attempts. It is gRPC's
// retry throttling (proposal A6): a bucket holds up to MaxTokens tokens and
// starts full; every failed attempt that could be retried costs one token,
// every success refunds TokenRatio; a retry is allowed only while more than
// MaxTokens/2 tokens remain. The first attempt of a call is never blocked.
//
// The zero TokenBucket is ready to use, with MaxTokens 10 and TokenRatio
// 0.1: after about five consecutive failures retries stop, and resume after
// about ten successes per missing token. Set the fields before first use
// and do not change them afterwards; Validate reports a field out of range,
// and Do, Run and retryhttp.Transport call it before the first attempt.
// Share one *TokenBucket, typically per downstream service, between the
// calls that should throttle together. A TokenBucket is safe for concurrent
// use and lock-free.
type TokenBucket struct {
	// MaxTokens is the bucket's capacity. Zero means 10 (DefaultMaxTokens);
	// otherwise it must be a finite number > 0.
	MaxTokens float64
	// TokenRatio is the number of tokens each success refunds, such as 0.1
	// for a tenth of a token. Zero means 0.1 (DefaultTokenRatio); otherwise
	// it must be a finite number > 0. The bucket counts in thousandths of a
	// token, rounding to the nearest, so a ratio below 0.001 refunds 0.001.
	TokenRatio float64

	// used is the number of milli-tokens missing from the full bucket, so
	// that the zero value is a full bucket without any initialisation.
	used atomic.Int64
}

var _ Budget = (*TokenBucket)(nil)

// ErrInvalid is matched (errors.Is) by the error of TokenBucket.Validate, a
// *FieldError (as backoff.ErrInvalid is by a Policy's, with the same
// pattern in every package of the module).
var ErrInvalid = errors.New("retry: invalid configuration")

// FieldError reports a field whose value is outside its accepted range,
// such as TokenBucket.MaxTokens. It matches ErrInvalid with errors.Is. The
// zero FieldError names no field and is never returned.
type FieldError struct {
	Field    string // the field, e.g. "TokenBucket.MaxTokens"
	Value    string // the rejected value, formatted
	Accepted string // what is accepted
}

// Error returns "retry: FIELD must be ACCEPTED, got VALUE".
func (e *FieldError) Error() string {
	return fmt.Sprintf("retry: %s must be %s, got %s", e.Field, e.Accepted, e.Value)
}

// Is reports whether target is ErrInvalid.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

// Validate reports whether the fields are in range: the error names the
// field, what it was and what is accepted: a *FieldError, which matches
// ErrInvalid.
// Negative values are rejected because neither "no capacity" nor "no
// refund" is a useful budget: to retry without a budget, give none.
func (b *TokenBucket) Validate() error {
	check := func(name string, v float64, def string) error {
		if v == 0 || (v > 0 && !math.IsInf(v, 1)) {
			return nil
		}
		return &FieldError{Field: "TokenBucket." + name, Value: fmt.Sprint(v), Accepted: "a finite number > 0 (0 means " + def + ")"}
	}
	if err := check("MaxTokens", b.MaxTokens, "10"); err != nil {
		return err
	}
	return check("TokenRatio", b.TokenRatio, "0.1")
}

func (b *TokenBucket) capacity() int64 {
	if !(b.MaxTokens > 0) {
		return DefaultMaxTokens * milli
	}
	return toMilli(b.MaxTokens)
}

func (b *TokenBucket) refund() int64 {
	if !(b.TokenRatio > 0) {
		return DefaultTokenRatio * milli
	}
	return max(1, toMilli(b.TokenRatio))
}

// Tokens returns the tokens currently in the bucket, between 0 and MaxTokens.
func (b *TokenBucket) Tokens() float64 {
	return float64(b.capacity()-b.used.Load()) / milli
}

// Failure takes one token, leaving at least zero, and reports whether a
// retry may be made: more than half the tokens remain.
func (b *TokenBucket) Failure() bool { return b.failure(milli) }

// FailureCost is Failure for a failure that costs cost tokens instead of
// one (see Class.Cost): it takes them, leaving at least zero, and reports
// whether a retry may be made. A cost that is not a number > 0 takes
// nothing.
func (b *TokenBucket) FailureCost(cost float64) bool {
	if !(cost > 0) {
		return b.failure(0)
	}
	return b.failure(toMilli(cost))
}

// toMilli is v > 0 tokens in milli-tokens, rounded to the nearest, so that
// a value written with three decimals is counted as written (1.005 tokens
// are 1005, where truncating 1.005 × 1000 = 1004.999… would give 1004), and
// clamped far beyond any real bucket so that the sums cannot overflow.
func toMilli(v float64) int64 {
	return int64(math.Round(math.Min(v, math.MaxInt64/(4*milli)) * milli))
}

// failure takes m milli-tokens.
func (b *TokenBucket) failure(m int64) bool {
	c := b.capacity()
	for {
		u := b.used.Load()
		n := min(u+m, c)
		if n == u || b.used.CompareAndSwap(u, n) {
			return c-n > c/2
		}
	}
}

// Take takes one token if more than half the tokens remain after it, and
// reports whether it did. Hedges spend this way (package hedge): a hedge
// that is refused costs nothing, where Failure counts every failure,
// whether or not it is retried, so that a bucket drained by refused hedges
// would never refill.
func (b *TokenBucket) Take() bool {
	c := b.capacity()
	for {
		u := b.used.Load()
		n := u + milli
		if c-n <= c/2 {
			return false
		}
		if b.used.CompareAndSwap(u, n) {
			return true
		}
	}
}

// Success refunds TokenRatio tokens, up to a full bucket.
func (b *TokenBucket) Success() {
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
