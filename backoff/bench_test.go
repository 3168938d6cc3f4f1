package backoff_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
)

// sink keeps results alive so the compiler cannot drop the benchmarked call.
var sink time.Duration

func BenchmarkDelay(b *testing.B) {
	p := backoff.Default()
	n := 0
	for b.Loop() {
		n = n%50 + 1
		sink = p.Delay(n)
	}
}

func BenchmarkSample(b *testing.B) {
	for _, j := range []backoff.Jitter{backoff.FullJitter, backoff.DecorrelatedJitter} {
		b.Run(j.String(), func(b *testing.B) {
			p := backoff.Default()
			p.Jitter = j
			r := rand.New(rand.NewPCG(1, 2))
			n := 0
			var prev time.Duration
			for b.Loop() {
				n = n%50 + 1
				prev = p.Sample(n, prev, r)
			}
			sink = prev
		})
	}
}
