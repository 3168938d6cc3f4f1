package sim

import (
	"math"
	"math/rand/v2"
)

// Runner runs f(0), …, f(n−1), in any order and possibly concurrently, and
// returns once every call has returned. Models hand it their independent
// runs; each call writes only its own result, and the model combines them in
// a fixed order afterwards, so any Runner gives the same results. The zero
// Runner (nil) is Serial. The command line passes one that uses every core.
type Runner func(n int, f func(i int))

// Serial is the Runner that calls f(0), …, f(n−1) one after the other on the
// calling goroutine.
func Serial(n int, f func(i int)) {
	for i := range n {
		f(i)
	}
}

// Run calls r(n, f), or Serial(n, f) if r is nil.
func (r Runner) Run(n int, f func(i int)) {
	if r == nil {
		Serial(n, f)
		return
	}
	r(n, f)
}

// Stream returns the random source of one run: a PCG seeded with seed and a
// hash of the values that identify the run. Deriving it from the run's
// identity rather than its position means a row of a table is the same
// whether it is computed alone or among others.
func Stream(seed uint64, id ...uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, StreamKey(id...)))
}

// StreamKey hashes the values that identify a run.
func StreamKey(id ...uint64) uint64 {
	h := uint64(0x9e3779b97f4a7c15)
	for _, v := range id {
		h = Mix(h ^ v)
	}
	return h
}

// Mix is splitmix64's finaliser: a bijection that spreads every input bit
// over the whole word.
func Mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// FloatID turns a probability or rate into a stream identifier.
func FloatID(f float64) uint64 { return math.Float64bits(f) }

// StringID turns a name into a stream identifier (FNV-1a), the same in
// every process.
func StringID(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}
