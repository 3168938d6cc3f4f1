// Package simshed is a simulated server's load shedding, by package shed's code.
//
// It runs admission.Core, the middleware's own decisions, on a model's virtual
// clock, for the outage and throttle models. A package of its own, so that
// the models that do not shed (and the page's WebAssembly) do not link
// package shed and net/http.
package simshed

import (
	"fmt"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/cmd/again/internal/sim"
	"github.com/again-go/again/limiter"
	"github.com/again-go/again/shed/admission"
)

// Config is how a simulated server sheds load: with package shed's Core, the
// code of its middleware, on the model's clock; what `again proxy --shed
// N|adaptive` puts in front of a service. Requests beyond the limit wait
// in its queue, by attempt (first attempts before retries), under CoDel
// (5 ms / 100 ms), and those that cannot be served in time are answered
// at once with a 503 and a jittered Retry-After. The zero Config sheds
// nothing: the server takes every request.
type Config struct {
	// Limit is a fixed concurrency limit: at most Limit requests served
	// at once. Zero: none, unless Adaptive.
	Limit int
	// Adaptive, if not nil, replaces Limit: a limiter.Limiter of this
	// algorithm, on the model's clock, learns the limit from the
	// server's latency (again proxy --shed adaptive uses Gradient2{Min:
	// 1}).
	Adaptive limiter.Algorithm
}

// On reports whether s sheds.
func (s Config) On() bool { return s.Limit > 0 || s.Adaptive != nil }

// MaxLimit bounds Config.Limit.
const MaxLimit = 100_000

// Adaptive is the word that asks --shed (again proxy, sim outage and sim
// throttle, and the page's limit) for an adaptive limit, AdaptiveLimit, in
// place of a number.
const Adaptive = "adaptive"

// AdaptiveLimit is the algorithm of --shed adaptive: Netflix's Gradient2
// between 1 and 200, from 100, package shed's default fixed limit, not a
// client's 20. A server's limit starts under the load it takes, not
// before it: from 20, a service of 1 s at 40 requests a second shed half
// of its first second's requests while the limit learned, and clients
// behind a circuit breaker took that for an outage (again sim outage
// --shed adaptive, breaker: 0.74 of the requests served, 0.84 from 100).
// It is here, not in cmdutil, so that the page's WebAssembly runs the
// command's algorithm without linking net/http.
func AdaptiveLimit() limiter.Algorithm { return limiter.Gradient2{Min: 1, Initial: 100} }

// Check returns a *sim.FieldError for a Limit out of range (its Field
// "Shed.Limit", as the models name their field).
func (s Config) Check() error {
	if s.Adaptive == nil {
		return sim.CheckInt("Shed.Limit", s.Limit, 0, MaxLimit)
	}
	return nil
}

// New returns the Core of s on clock, drawing Retry-After's jitter
// from jitter and an adaptive limit's probes from probes, and telling
// decide each queued request's fate (admission.NewCore). Two streams, so that
// the limit's draws depend only on the requests it admits and releases, as
// a middleware's do. s must shed (On).
func New(s Config, clock *sim.VirtualClock, jitter, probes backoff.Rand, decide func(*admission.Waiter, admission.Reason)) *admission.Core {
	cfg := admission.Config{Limit: s.Limit, Rand: jitter}
	if s.Adaptive != nil {
		l, err := limiter.New(limiter.Config{Algorithm: s.Adaptive, Clock: clock, Rand: probes})
		if err != nil {
			panic(fmt.Sprintf("sim: the limiter of %+v: %v", s, err))
		}
		cfg.Adaptive = l
	}
	c, err := admission.NewCore(cfg, clock.Now(), decide)
	if err != nil {
		panic("sim: " + err.Error())
	}
	return c
}

// HintFloor returns the wait before a retry that a server's Retry-After
// of hint asks for, as package retry waits it: never less than the
// policy's first delay (a hint replaces one wait, not the schedule).
func HintFloor(hint time.Duration, p backoff.Policy) time.Duration {
	return max(hint, p.Delay(1))
}

// Hint returns the Retry-After that core tells a client shed at the
// clock's time, in the header's whole seconds.
func Hint(core *admission.Core, clock *sim.VirtualClock) time.Duration {
	return time.Duration(admission.RetryAfterSeconds(core.RetryAfter(clock.Now()))) * time.Second
}
