package plan

import (
	"cmp"
	"math"
	"slices"
)

// term is the distribution of one jittered delay, in nanoseconds: with
// probability q uniform on [lo, hi], otherwise exactly hi. That covers every
// kind of jitter but Decorrelated: a point (None, or a zero-width range) is
// lo == hi; Full, Equal and unclamped Proportional jitter are q == 1; and
// Proportional jitter whose range crosses the cap is a uniform part plus the
// point mass that the clamp piles up at the cap.
type term struct{ lo, hi, q float64 }

func (t term) width() float64 { return t.hi - t.lo }

// mean returns the exact mean of the term.
func (t term) mean() float64 { return t.lo + t.width()*(1-t.q/2) }

// variance returns the exact variance: w²(q/3 − q²/4), from E[X] = w(1 − q/2)
// and E[X²] = w²(q/3 + 1 − q) for X measured from lo.
func (t term) variance() float64 {
	w := t.width()
	return max(0, w*w*(t.q/3-t.q*t.q/4))
}

// The percentile engine's size. The widest exactTerms random terms are
// convolved exactly on a grid of about gridPoints points; the narrower rest
// (there are any only with more than exactTerms retries) are grouped into at
// most bundleTerms bundles, each replaced by a uniform with the bundle's exact
// mean and variance. The cost is (exactTerms + bundleTerms) × gridPoints.
//
// Why this is accurate enough: the grid step h is at most (Max − Min) /
// gridPoints, and the grid arithmetic below keeps every term's mean exact, so
// the only grid error is an added variance of at most h²/6 per term. A bundle
// has the exact mean and variance of the terms it replaces and every one of
// them is narrower than any exactly convolved term, so its error lies in
// third and higher cumulants, which hardly move a percentile of a sum of
// more than exactTerms terms (tests check the result against Monte Carlo).
const (
	gridPoints  = 4096
	exactTerms  = 128
	bundleTerms = 48
)

// sumQuantiles returns the quantiles qs (each in [0, 1]) of the sum of the
// independent terms. It may reorder terms.
func sumQuantiles(terms []term, qs []float64) []float64 {
	out := make([]float64, len(qs))
	base := 0.0 // the grid's first point, in nanoseconds
	random := terms[:0]
	for _, t := range terms {
		if t.width() > 0 {
			random = append(random, t)
			continue
		}
		base += t.hi
	}
	if len(random) == 0 {
		for i := range out {
			out[i] = base
		}
		return out
	}
	slices.SortFunc(random, func(a, b term) int { return cmp.Compare(b.width(), a.width()) })
	exact := random[:min(len(random), exactTerms)]
	all := append(slices.Clip(exact), bundle(random[len(exact):])...)

	span := 0.0
	for _, t := range all {
		span += t.width()
	}
	h := span / gridPoints
	size := gridPoints + 2*len(all) + 2
	cur, next := make([]float64, 1, size), make([]float64, size)
	prefix := make([]float64, size+1)
	cur[0] = 1
	for _, t := range all {
		base += t.lo
		cur, next = convolve(next, cur, prefix, t.width()/h, t.q), cur
	}

	// Each grid mass is spread evenly over [x − h/2, x + h/2], which keeps
	// the mean and makes the distribution function continuous.
	cum, j := 0.0, 0
	for i, q := range qs {
		for j < len(cur)-1 && cum+cur[j] < q {
			cum += cur[j]
			j++
		}
		frac := 0.5
		if cur[j] > 0 {
			frac = min(1, max(0, (q-cum)/cur[j]))
		}
		out[i] = base + (float64(j)-0.5+frac)*h
	}
	return out
}

// bundle replaces runs of consecutive terms by single uniform terms with the
// run's exact mean and variance, so that there are at most bundleTerms of them.
func bundle(rest []term) []term {
	if len(rest) <= bundleTerms {
		return rest
	}
	total := 0.0
	for _, t := range rest {
		total += t.variance()
	}
	target := total / bundleTerms
	var out []term
	mean, vari := 0.0, 0.0
	for i, t := range rest {
		mean += t.mean()
		vari += t.variance()
		if vari >= target || i == len(rest)-1 {
			half := math.Sqrt(3 * vari) // a uniform of width 2·half has variance half²/3
			out = append(out, term{lo: mean - half, hi: mean + half, q: 1})
			mean, vari = 0, 0
		}
	}
	return out
}

// convolve returns src convolved with one term (its lo removed) on a grid of
// unit step: a uniform on [0, m] with weight q and a point at m with weight
// 1 − q. Every point of the term is shared between its two neighbouring grid
// points in proportion to closeness ("cloud in cell"), which keeps the mean
// exact. For the uniform part that gives the kernel weights
//
//	k(0) = 1/(2m), k(1..fl−1) = 1/m, k(fl) = (1 − (1−f)²/2)/m, k(fl+1) = f²/(2m)
//
// for m >= 1 with fl = ⌊m⌋ and f = m − fl, and k(0) = 1 − m/2, k(1) = m/2 for
// m < 1. The constant middle run is a moving sum over prefix sums, so each
// term costs O(len(src)) whatever its width.
func convolve(dst, src, prefix []float64, m, q float64) []float64 {
	fl := int(m)
	f := m - float64(fl)
	n := len(src)
	dst = dst[:n+fl+2]
	clear(dst)

	// The point mass at m.
	if q < 1 {
		wp := 1 - q
		for i, v := range src {
			dst[i+fl] += wp * (1 - f) * v
			dst[i+fl+1] += wp * f * v
		}
	}
	if q == 0 {
		return dst
	}
	if fl == 0 {
		k0, k1 := q*(1-m/2), q*m/2
		for i, v := range src {
			dst[i] += k0 * v
			dst[i+1] += k1 * v
		}
		return dst
	}
	k0, kfl, kfl1 := q/(2*m), q*(1-(1-f)*(1-f)/2)/m, q*f*f/(2*m)
	for i, v := range src {
		dst[i] += k0 * v
		dst[i+fl] += kfl * v
		dst[i+fl+1] += kfl1 * v
	}
	if fl < 2 {
		return dst
	}
	// dst[j] += q/m × (src[j−fl+1] + … + src[j−1]), with prefix[i] = src[0] + … + src[i−1].
	prefix = prefix[:n+1]
	prefix[0] = 0
	for i, v := range src {
		prefix[i+1] = prefix[i] + v
	}
	inv := q / m
	for j := 1; j < len(dst); j++ {
		hiIdx := min(j, n)
		loIdx := min(max(j-fl+1, 0), n)
		dst[j] += inv * (prefix[hiIdx] - prefix[loIdx])
	}
	return dst
}
