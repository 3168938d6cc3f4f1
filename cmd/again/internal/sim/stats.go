package sim

import "math"

// Percentile returns the q-th quantile of sorted xs (nearest rank), 0
// for none.
func Percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}
