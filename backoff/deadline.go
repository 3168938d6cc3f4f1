package backoff

import "time"

// DeadlineReserve is the time a retry loop keeps for its last attempt
// before a deadline when the attempts have no timeout of their own: a wait
// that would end later than DeadlineReserve before the deadline is
// shortened to end then (see [FitDeadline]).
//
// 100 ms is enough for an attempt that can succeed at all to do so on a
// local network or within a region (a TCP connection, a TLS handshake and
// a small request and answer take a few to a few tens of milliseconds), and
// small beside the deadlines retry loops run under (seconds), so that the
// loop goes on trying until 0.1 s before the deadline. A dependency slower
// than that needs a per-attempt timeout, which then takes the reserve's
// place. The library, the command's help and docs/cli.md all state this one
// value.
const DeadlineReserve = 100 * time.Millisecond

// FitDeadline applies the deadline rule of every retry loop in this
// module (packages retry, retryhttp, retrygrpc, hedge, the again command,
// and the calculator and simulator that predict them) to wait, the wait
// before the next attempt, when left remains until the deadline. It returns
// the wait to make, and false if the loop must stop instead (with
// retry.ErrDeadline).
//
// reserve is the time the next attempt needs: its timeout, if attempts have
// one; 0 or less means DeadlineReserve.
//
// A wait drawn from the schedule (hint false) is shortened, if it would end
// later than reserve before the deadline, to end just then, so that one
// more attempt starts with time to run; the loop stops only when no more
// than reserve is left. Its last attempt thus starts within reserve of the
// deadline, however long the schedule's waits have grown, and a
// dependency that recovers earlier than reserve before the deadline is
// always reached.
//
// A server's hint (hint true: a Retry-After, a rate limit's reset, a gRPC
// pushback, a circuit breaker's or a throttle's wait) is never shortened:
// the server said when to come back, and coming back earlier only fails
// again. The loop stops at once if the hint ends at or after the deadline.
//
// FitDeadline is pure; a negative left (the deadline has passed) stops the
// loop, and no input overflows.
func FitDeadline(wait, left, reserve time.Duration, hint bool) (time.Duration, bool) {
	if hint {
		return wait, wait < left
	}
	if reserve <= 0 {
		reserve = DeadlineReserve
	}
	if left <= reserve {
		return 0, false
	}
	// left > reserve > 0, so left−reserve neither overflows nor is
	// negative.
	return max(min(wait, left-reserve), 0), true
}
