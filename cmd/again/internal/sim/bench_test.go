package sim

import (
	"testing"

	"github.com/again-go/again/backoff"
)

// BenchmarkOCCDefaultTable is `again sim occ` with its defaults: 19 client
// counts × 5 algorithms × 100 runs, on every core as the command runs it.
func BenchmarkOCCDefaultTable(b *testing.B) {
	for b.Loop() {
		if _, err := OCC(OCCConfig{Seed: 1, Runner: Parallel}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOutage is `again sim outage` with its defaults: five strategies.
func BenchmarkOutage(b *testing.B) {
	for b.Loop() {
		if _, err := Outage(OutageConfig{Seed: 1, Policy: backoff.Default(), Runner: Parallel}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFleet is `again sim fleet` with its defaults: 3 × 11 × 6 cells.
func BenchmarkFleet(b *testing.B) {
	for b.Loop() {
		if _, err := Fleet(FleetConfig{Seed: 1, Runner: Parallel}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStorm is the page's storm view: 100 clients, the default policy.
func BenchmarkStorm(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Storm(StormConfig{Policy: backoff.Default(), Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
