package cmdutil

import (
	"strconv"
	"strings"

	"github.com/again-go/again/limiter"
)

// Adaptive is the word that asks a limit flag (fetch --limit, proxy
// --shed) for an adaptive limit in place of a number.
const Adaptive = "adaptive"

// AdaptiveLimit is the algorithm of a limit flag's Adaptive: Netflix's
// Gradient2 from 20, between 1 and 200 (Min 1, since a service may take
// fewer than Netflix's 20 at once).
func AdaptiveLimit() limiter.Algorithm { return limiter.Gradient2{Min: 1} }

// ShedAdaptiveLimit is the algorithm of --shed adaptive (again proxy, sim
// outage and sim throttle): AdaptiveLimit's Gradient2, but from 100,
// package shed's default fixed limit, not a client's 20. A server's limit
// starts under the load it takes, not before it: from 20, a service of
// 1 s at 40 requests a second shed half of its first second's requests
// while the limit learned, and clients behind a circuit breaker took that
// for an outage (again sim outage --shed adaptive, breaker: 0.74 of the
// requests served, 0.84 from 100).
func ShedAdaptiveLimit() limiter.Algorithm { return limiter.Gradient2{Min: 1, Initial: 100} }

// ParseShed reads a --shed value (again proxy, again sim outage and
// throttle): a whole number N, a fixed concurrency limit; Adaptive; or ""
// or 0 for none (n 0, adaptive false). Anything else is a usage error.
func ParseShed(v string) (n int, adaptive bool, err error) {
	v = strings.TrimSpace(v)
	switch v {
	case Adaptive:
		return 0, true, nil
	case "":
		return 0, false, nil
	}
	n, err = strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, false, BadValue("--shed", v, "a whole number (0 for no shedding) or %s", Adaptive)
	}
	return n, false, nil
}
