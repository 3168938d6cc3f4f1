package limiter

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/again-go/again/breaker/breakertest"
)

// FuzzLimiter drives a Limiter of each kind with calls that take, end
// (succeeding, dropped or ignored) and release permits on a virtual clock,
// rare or frequent enough to be sampled, and checks the invariants: 1 ≤
// limit ≤ the algorithm's maximum, a permit is granted only under the
// limit, and when every call has ended no permit is left in use.
func FuzzLimiter(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 1, 5, 1, 9, 2, 3})
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 1, 200, 1, 1})
	f.Add([]byte{2, 0, 0, 1, 10, 1, 250, 0, 2, 7, 3, 0, 1, 1})
	f.Add([]byte{3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1})
	// Gradient2, calls every 7 µs for 21 ms, each a success: one in 8
	// measured after the first 10 ms (ops[0]'s bit 2 makes the clock's
	// steps µs, not ms).
	sampled := []byte{4 | 3}
	for range 3000 {
		sampled = append(sampled, 4, 3)
	}
	f.Add(sampled)
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) == 0 {
			return
		}
		algs := []Algorithm{nil, AIMD{Min: 1, Max: 30}, Vegas{Max: 50, ProbeMultiplier: 1}, Gradient2{Min: 1, Max: 40, ProbeInterval: time.Second, ProbeSamples: 3}}
		alg := algs[int(ops[0])%len(algs)]
		cfg := Config{Algorithm: alg, Clock: breakertest.NewClock(time.Unix(0, 0)), Rand: rand.New(rand.NewPCG(1, 2))}
		hi := DefaultLimit
		if alg == nil {
			cfg.Limit = 1 + int(ops[0])%7
			hi = cfg.Limit
		} else {
			hi = []int{0, 30, 50, 40}[int(ops[0])%len(algs)]
		}
		l := mustNew(t, cfg)
		clk := cfg.Clock.(*breakertest.Clock)
		unit := time.Millisecond
		if ops[0]&4 != 0 {
			unit = time.Microsecond // frequent calls: sampled
		}
		var held []Permit
		for i := 1; i < len(ops); i++ {
			b := ops[i]
			clk.Advance(time.Duration(b) * unit)
			switch {
			case b%4 == 0 || len(held) == 0:
				p, err := l.Acquire(context.Background())
				if err == nil {
					held = append(held, p)
					if s := l.Snapshot(); s.InFlight > s.Limit {
						t.Fatalf("op %d: granted with %d in flight over a limit of %d", i, s.InFlight, s.Limit)
					}
				}
			default:
				k := int(b) % len(held)
				held[k].Done(Outcome(b % 3))
				held = append(held[:k], held[k+1:]...)
			}
			if got := l.Limit(); got < 1 || got > hi {
				t.Fatalf("op %d: Limit() = %d, want in [1, %d]", i, got, hi)
			}
		}
		for i := range held {
			held[i].Release()
		}
		if s := l.Snapshot(); s.InFlight != 0 || s.Waiting != 0 {
			t.Fatalf("after every call ended: %+v, want none in flight or waiting", s)
		}
	})
}
