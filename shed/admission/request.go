package admission

import "time"

// Request is what a Core (or a Shedder) knows of a request before it
// admits it. The zero Request is a first attempt of class Config.Default
// without a deadline.
type Request struct {
	Criticality Criticality
	// Attempt is the attempt number, 1 for the first; 0 reads as 1.
	Attempt int
	// Deadline is when the client stops waiting; zero: unknown. A request
	// still queued at its deadline is dropped (within Config.DropFraction).
	Deadline time.Time
	// Timeout is the time the client will still wait, from its arrival
	// (Core.Arrive, Shedder.Admit): a deadline relative to the request's
	// arrival (the earlier of the two counts). Zero means none; HeaderTimeout's 0 is read as 1ns, a
	// deadline already passed.
	Timeout time.Duration
}

// Stats is a Core's (or a Shedder's) state, as Snapshot returns it: a
// plain value.
type Stats struct {
	// InFlight is how many requests hold a permit; Queued how many wait
	// for one.
	InFlight, Queued int
	// Overloaded reports CoDel's judgment: the queue serves newest first
	// and sloughs requests that waited over twice Target.
	Overloaded bool
	// Load is CoDel's load: the smallest delay of the current interval
	// over twice Target, from 0 to 1.
	Load float64
}
