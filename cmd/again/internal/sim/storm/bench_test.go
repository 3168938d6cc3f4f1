package storm_test

import (
	"testing"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/cmd/again/internal/sim/storm"
)

// BenchmarkStorm is the page's storm view: 100 clients, the default policy.
func BenchmarkStorm(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := storm.Run(storm.Config{Policy: backoff.Default(), Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
