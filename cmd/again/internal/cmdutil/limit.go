package cmdutil

import "github.com/again-go/again/limiter"

// Adaptive is the word that asks a limit flag (fetch --limit, proxy
// --shed) for an adaptive limit in place of a number.
const Adaptive = "adaptive"

// AdaptiveLimit is the algorithm of a limit flag's Adaptive: Netflix's
// Gradient2 from 20, between 1 and 200 (Min 1, since a service may take
// fewer than Netflix's 20 at once).
func AdaptiveLimit() limiter.Algorithm { return limiter.Gradient2{Min: 1} }
