package fleet_test

import (
	"testing"

	"github.com/again-go/again/cmd/again/internal/sim/fleet"
	"github.com/again-go/again/cmd/again/internal/sim/simtest"
)

// BenchmarkFleet is `again sim fleet` with its defaults: 3 × 11 × 6 cells.
func BenchmarkFleet(b *testing.B) {
	for b.Loop() {
		if _, err := fleet.Run(fleet.Config{Seed: 1, Runner: simtest.Parallel}); err != nil {
			b.Fatal(err)
		}
	}
}
