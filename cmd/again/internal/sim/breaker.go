package sim

import (
	"context"
	"errors"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
)

// VirtualClock is a breaker.Clock that the models move: the breaker reads
// the time only when it decides, so this drives it completely. The zero
// value is the start of a run. A VirtualClock belongs to one run: it is not
// safe for concurrent use.
type VirtualClock struct {
	At time.Duration // the virtual time since the start of the run
}

// Now returns the virtual time as an instant after an arbitrary epoch.
func (c *VirtualClock) Now() time.Time { return time.Unix(1e9, 0).Add(c.At) }

// NewBreaker returns a breaker with the package's recommended rules, on the
// model's clock and random stream.
func NewBreaker(clock *VirtualClock, r backoff.Rand) *breaker.Breaker {
	b, err := breaker.New(breaker.Config{Clock: clock, Rand: r})
	if err != nil {
		panic("sim: the default breaker.Config is invalid: " + err.Error())
	}
	return b
}

// Admit asks b for a call at the clock's time. It returns the ticket to
// report the outcome on, or, when the breaker rejects the call, false and
// the wait its error hints at (through RetryAfter, as package retry reads
// it).
func Admit(b *breaker.Breaker) (t breaker.Ticket, ok bool, wait time.Duration) {
	t, err := b.Allow(context.Background())
	if err == nil {
		return t, true, 0
	}
	var hint interface{ RetryAfter() time.Duration }
	if errors.As(err, &hint) {
		wait = hint.RetryAfter()
	}
	return t, false, wait
}

// Outcome is the breaker outcome of an attempt that succeeded or failed.
func Outcome(ok bool) breaker.Outcome {
	if ok {
		return breaker.Success
	}
	return breaker.Failure
}
