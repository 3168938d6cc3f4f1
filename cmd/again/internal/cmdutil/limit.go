package cmdutil

import (
	"strconv"
	"strings"

	"github.com/again-go/again/cmd/again/internal/sim/simshed"
	"github.com/again-go/again/limiter"
)

// Adaptive is the word that asks a limit flag (fetch --limit, proxy
// --shed) for an adaptive limit in place of a number: simshed's, which
// the page's limit accepts too.
const Adaptive = simshed.Adaptive

// AdaptiveLimit is the algorithm of a limit flag's Adaptive: Netflix's
// Gradient2 from 20, between 1 and 200 (Min 1, since a service may take
// fewer than Netflix's 20 at once).
func AdaptiveLimit() limiter.Algorithm { return limiter.Gradient2{Min: 1} }

// ShedAdaptiveLimit is the algorithm of --shed adaptive (again proxy, sim
// outage and sim throttle): simshed.AdaptiveLimit, which the page's
// WebAssembly shares without linking this package (and net/http).
func ShedAdaptiveLimit() limiter.Algorithm { return simshed.AdaptiveLimit() }

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
