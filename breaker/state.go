package breaker

import "fmt"

// State is where a breaker is in its cycle. The zero State is Closed.
type State int8

const (
	// Closed: every call is admitted and its outcome counted.
	Closed State = iota
	// Open: calls are rejected with ErrOpen until the open period ends.
	Open
	// HalfOpen: a limited number of probe calls are admitted; the others are
	// rejected. Enough successful probes close the breaker, a failed one
	// opens it again for longer.
	HalfOpen
	// Isolated: opened by hand with Breaker.Isolate; calls are rejected until
	// Breaker.Reset.
	Isolated
)

// String returns "closed", "open", "half-open" or "isolated".
func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half-open"
	case Isolated:
		return "isolated"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Outcome is how a call's result counts toward the breaker's decision.
type Outcome int8

const (
	// Success counts toward closing the breaker and keeps it closed.
	Success Outcome = iota
	// Failure counts toward tripping the breaker.
	Failure
	// Neutral counts neither way: the caller gave up, or the error was not
	// the dependency's fault. A neutral probe frees its slot for another.
	Neutral
)

// String returns "success", "failure" or "neutral".
func (o Outcome) String() string {
	switch o {
	case Success:
		return "success"
	case Failure:
		return "failure"
	case Neutral:
		return "neutral"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}
