package backoff

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/again-go/again/backoff/internal/sched"
)

// Policy describes a retry schedule: how long to wait before each retry and
// how many retries to make after the first attempt.
//
// The nominal delay before retry n (1-based) is
//
//	d(n) = min(Max, Initial × Multiplier^(n−1))
//
// and Jitter spreads the actual delay around it so that clients that failed
// together do not retry together. Max is a hard ceiling: no jitter exceeds
// it, except GRPCJitter's, which gRPC applies after the cap.
//
// # Zero and negative fields
//
// This is the module's one rule for zero and negative values, stated here
// once: every field and option of packages backoff, retry, retryhttp,
// breaker and fleet follows it, and their documentation links here. As for
// net.Dialer.KeepAlive, zero means the documented default, and a negative
// value means "none" where that makes sense (no wait, no cap, no retries,
// no hint honoured, no limit) and is rejected, with an error naming the
// field, where it does not. For a Policy:
//
//	Field         zero means          negative means
//	Initial       500 ms              no wait: retry at once
//	Multiplier    2                   invalid (it must be 0 or a finite number >= 1)
//	Max           10 s                no cap (NoCap)
//	Retries       3                   no retries: one attempt (NoRetries)
//	Jitter        FullJitter          invalid
//	JitterFactor  0.25                invalid (it must be 0 or in (0, 1])
//
// (JitterFactor applies to ProportionalJitter and GRPCJitter only.)
//
// Retries also takes [UntilDeadline]: retry until the context's deadline.
//
// So the zero Policy behaves exactly like [Default], and a partly filled
// Policy such as Policy{Retries: 5} keeps the defaults of the fields it
// leaves out: it never becomes a burst of retries without waits.
//
// Because the default cap is 10 s, Validate rejects a Policy whose Initial is
// above 10 s while Max is zero (Policy{Initial: 30 * time.Second} would
// otherwise wait 10 s, not 30 s): set Max, or Max: NoCap. An explicit Max
// below Initial is accepted and means every delay is Max.
//
// A Policy is a plain value: its methods never modify it and are safe for
// concurrent use.
type Policy struct {
	// Initial is the nominal delay before the first retry.
	// Zero means 500 ms; negative means no wait.
	Initial time.Duration
	// Multiplier is the growth factor between consecutive delays, a finite
	// number >= 1. Zero means 2.
	Multiplier float64
	// Max caps every delay, jitter included. Zero means 10 s; negative
	// ([NoCap]) means no cap.
	Max time.Duration
	// Retries is how many retries follow the first attempt, so an operation
	// runs at most Retries+1 times (see MaxAttempts). Zero means 3;
	// negative ([NoRetries]) means none: the first attempt is the only one.
	Retries int
	// Jitter is how the actual delay is drawn around the nominal one.
	// The zero value is FullJitter.
	Jitter Jitter
	// JitterFactor is f for ProportionalJitter and GRPCJitter, in (0, 1];
	// zero means 0.25.
	// It must be zero for every other kind of jitter.
	JitterFactor float64
}

// NoCap is a Max that means "no cap": delays grow until they saturate at
// the largest time.Duration. Any negative Max means the same.
const NoCap time.Duration = -1

// NoRetries is a Retries that means "no retries": the first attempt is the
// only one. Any negative Retries means the same.
const NoRetries = -1

// UntilDeadline is a Retries that means "retry until the deadline": the
// retry loops of packages retry and retryhttp make attempts until the
// context's deadline, shortening the last wait so that the last attempt
// starts within DeadlineReserve (or the attempts' timeout) before it (see
// FitDeadline; retry.ErrDeadline then says why they stopped), and refuse
// to start, with retry.ErrNoDeadline
// and before the first attempt, when the context has no deadline, so that
// a loop without a limit cannot be written by mistake. MaxAttempts returns
// the largest int for it. It is the one way to wait for a dependency for
// up to a given time: Retries 0 means 3 retries, whatever the deadline.
const UntilDeadline = math.MaxInt

// Default returns the recommended policy: 500 ms first delay, ×2, capped at
// 10 s, 3 retries, full jitter, with every field spelled out. It behaves
// exactly like the zero Policy. These are the seed article's values, with
// full jitter because it minimises total work when many clients contend.
// Each call returns a new value; change its fields freely.
func Default() Policy {
	return Policy{
		Initial:    sched.DefaultInitial,
		Multiplier: sched.DefaultMultiplier,
		Max:        sched.DefaultMax,
		Retries:    sched.DefaultRetries,
		Jitter:     FullJitter,
	}
}

// ErrInvalid is matched by errors.Is for every error that Validate returns.
var ErrInvalid = errors.New("backoff: invalid policy")

// FieldError reports a Policy field whose value is outside its accepted range.
// It matches ErrInvalid with errors.Is.
type FieldError struct {
	Field    string // the Policy field, e.g. "Multiplier"
	Value    string // the rejected value, formatted
	Accepted string // what is accepted, e.g. "a finite number >= 1"
}

// Error returns "backoff: FIELD must be ACCEPTED, got VALUE", such as
// "backoff: Multiplier must be a finite number >= 1 (or 0 for the default 2), got 0.5".
func (e *FieldError) Error() string {
	return fmt.Sprintf("backoff: %s must be %s, got %s", e.Field, e.Accepted, e.Value)
}

// Is reports whether target is ErrInvalid.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

// Validate reports the first field that is out of range, as a *FieldError.
// It applies the zero rule (see Policy): zero fields take their defaults and
// negative Initial, Max and Retries mean none. It also rejects an Initial
// above the default cap of 10 s when Max is zero, since such a policy would
// silently wait less than Initial.
func (p Policy) Validate() error {
	// The check of a valid policy is small enough to be inlined into a
	// retry loop's first attempt, where it runs on every call; the
	// messages are built apart.
	if p.valid() {
		return nil
	}
	return p.invalid()
}

// valid reports whether Validate finds nothing wrong. NaN fails every
// comparison, so it is out of every range here. The pointer saves a copy
// of the policy that cost more than the comparisons (a 16-byte reload of
// fields just stored 8 bytes at a time stalls the store forwarding).
func (p *Policy) valid() bool {
	return (p.Multiplier == 0 || (p.Multiplier >= 1 && p.Multiplier <= math.MaxFloat64)) &&
		(p.Max != 0 || p.Initial <= sched.DefaultMax) &&
		p.Jitter >= FullJitter && p.Jitter <= GRPCJitter &&
		(p.JitterFactor == 0 || (p.Jitter.hasFactor() && p.JitterFactor > 0 && p.JitterFactor <= 1))
}

// invalid returns the *FieldError for the first field out of range, or
// nil.
func (p Policy) invalid() error {
	switch {
	case math.IsNaN(p.Multiplier) || math.IsInf(p.Multiplier, 0) || (p.Multiplier != 0 && p.Multiplier < 1):
		return &FieldError{"Multiplier", fmt.Sprint(p.Multiplier), "a finite number >= 1 (or 0 for the default 2)"}
	case p.Max == 0 && p.Initial > sched.DefaultMax:
		return &FieldError{"Initial", p.Initial.String(), "at most the default Max of 10s when Max is 0 (set Max, or Max: NoCap)"}
	case p.Jitter < FullJitter || p.Jitter > GRPCJitter:
		return &FieldError{"Jitter", fmt.Sprint(int(p.Jitter)), "one of FullJitter, NoJitter, EqualJitter, ProportionalJitter, DecorrelatedJitter, GRPCJitter"}
	case p.Jitter.hasFactor() && (math.IsNaN(p.JitterFactor) || p.JitterFactor < 0 || p.JitterFactor > 1):
		return &FieldError{"JitterFactor", fmt.Sprint(p.JitterFactor), "a number in (0, 1] (or 0 for the default 0.25)"}
	case !p.Jitter.hasFactor() && p.JitterFactor != 0:
		return &FieldError{"JitterFactor", fmt.Sprint(p.JitterFactor), "0 unless Jitter is ProportionalJitter or GRPCJitter"}
	}
	return nil
}

// MaxAttempts returns the most attempts p allows, the first included:
// Retries+1 with the zero rule applied (Retries 0 gives 4, NoRetries gives
// 1), saturating at the largest int.
func (p Policy) MaxAttempts() int {
	n := max(sched.RetriesOf(p.Retries), 0)
	if n == math.MaxInt {
		return n
	}
	return n + 1
}

// EffectiveMultiplier returns the multiplier in effect: Multiplier, or 2
// when it is 0 (and 1 for a value Validate rejects).
func (p Policy) EffectiveMultiplier() float64 { return sched.MultiplierOf(p.Multiplier) }

// EffectiveJitterFactor returns the proportional factor in effect:
// JitterFactor, or 0.25 when it is 0 (clamped to [0, 1] for a value
// Validate rejects).
func (p Policy) EffectiveJitterFactor() float64 { return sched.FactorOf(p.JitterFactor) }

// Delay returns the nominal delay before retry n (1-based), with the cap
// applied and without jitter: min(Max, Initial × Multiplier^(n−1)). It runs
// in constant time for every n and saturates at the largest time.Duration
// instead of overflowing. n < 1 gives 0.
func (p Policy) Delay(n int) time.Duration {
	return sched.Delay(sched.InitialOf(p.Initial), sched.MultiplierOf(p.Multiplier), sched.MaxOf(p.Max), n)
}
