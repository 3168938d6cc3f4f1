package occ_test

import (
	"testing"

	"github.com/again-go/again/cmd/again/internal/sim/occ"
	"github.com/again-go/again/cmd/again/internal/sim/simtest"
)

// BenchmarkOCCDefaultTable is `again sim occ` with its defaults: 19 client
// counts × 5 algorithms × 100 runs, on every core as the command runs it.
func BenchmarkOCCDefaultTable(b *testing.B) {
	for b.Loop() {
		if _, err := occ.Run(occ.Config{Seed: 1, Runner: simtest.Parallel}); err != nil {
			b.Fatal(err)
		}
	}
}
