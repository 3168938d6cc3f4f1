package outage_test

import (
	"testing"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/cmd/again/internal/sim/outage"
	"github.com/again-go/again/cmd/again/internal/sim/simtest"
)

// BenchmarkOutage is `again sim outage` with its defaults: five strategies.
func BenchmarkOutage(b *testing.B) {
	for b.Loop() {
		if _, err := outage.Run(outage.Config{Seed: 1, Policy: backoff.Default(), Runner: simtest.Parallel}); err != nil {
			b.Fatal(err)
		}
	}
}
