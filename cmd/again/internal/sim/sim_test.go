package sim_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/cmd/again/internal/sim"
	"github.com/again-go/again/cmd/again/internal/sim/fleet"
	"github.com/again-go/again/cmd/again/internal/sim/occ"
	"github.com/again-go/again/cmd/again/internal/sim/outage"
	"github.com/again-go/again/cmd/again/internal/sim/storm"
)

// TestSimLimitMessages checks the errors for limits on several fields
// together: each names the expression limited, not one of its fields, and
// shows its terms.
func TestSimLimitMessages(t *testing.T) {
	uncapped := backoff.Policy{Initial: time.Second, Multiplier: 10, Max: backoff.NoCap, Retries: 30}
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"storm attempts", func() error {
			_, err := storm.Run(storm.Config{Policy: backoff.Policy{Retries: 100_000}})
			return err
		}, "sim: Clients × Policy.MaxAttempts() must be at most 10000000 attempts, got 100 × 100001 = 10000100"},
		{"storm attempts past the largest int", func() error {
			_, err := storm.Run(storm.Config{Policy: backoff.Policy{Retries: math.MaxInt}, Clients: 2})
			return err
		}, "sim: Clients × Policy.MaxAttempts() must be at most 10000000 attempts, got 2 × 9223372036854775807"},
		{"storm buckets", func() error {
			_, err := storm.Run(storm.Config{Policy: uncapped, Clients: 1})
			return err
		}, "sim: Bucket must be wide enough to hold the storm in at most 100000 buckets (or cap the delays), got 1s, and the delays add up to more than 292 years"},
		// The table reports the later of the storms with and without
		// jitter: here the one without.
		{"storm table buckets", func() error {
			_, err := storm.Table(storm.Config{Policy: backoff.Policy{Initial: time.Second, Retries: 20}, Bucket: time.Millisecond})
			return err
		}, "sim: Bucket must be wide enough to hold the storm in at most 100000 buckets (or cap the delays), got 1ms, and the last attempt starts at 2m55s, in bucket 175001"},
		{"occ work", func() error {
			_, err := occ.Run(occ.Config{Clients: []int{1000, 2000}})
			return err
		}, "sim: the sum of Clients² × Runs must be at most 100000000, got (1000² + 2000²) × 100 = 5000000 × 100 = 500000000"},
		{"occ work, one client count", func() error {
			_, err := occ.Run(occ.Config{Clients: []int{100_000}, Runs: 1})
			return err
		}, "sim: the sum of Clients² × Runs must be at most 100000000, got 100000² × 1 = 10000000000"},
		{"occ work, many client counts", func() error {
			_, err := occ.Run(occ.Config{Clients: []int{10, 20, 30, 40, 5000}, Runs: 10})
			return err
		}, "sim: the sum of Clients² × Runs must be at most 100000000, got (10² + 20² + … + 5000²) × 10 = 25003000 × 10 = 250030000"},
		{"outage requests", func() error {
			_, err := outage.Run(outage.Config{Rate: 10_000, Duration: time.Hour, Policy: backoff.Default()})
			return err
		}, "sim: Rate × (Duration − Spike) + SpikeRate × Spike must be at most 1000000 requests, got 10000/s × 3580s + 80/s × 20s = 35801600"},
		// Only the part of the spike within Duration counts.
		{"outage requests, spike past the end", func() error {
			_, err := outage.Run(outage.Config{SpikeRate: 10_000, Spike: time.Hour, Duration: 10 * time.Minute, Policy: backoff.Default()})
			return err
		}, "sim: Rate × (Duration − Spike) + SpikeRate × Spike must be at most 1000000 requests, got 40/s × 20s + 10000/s × 580s = 5800800"},
		{"fleet cells", func() error {
			clients := make([]int, 1000)
			for i := range clients {
				clients[i] = i + 1
			}
			_, err := fleet.Run(fleet.Config{Clients: clients, Failures: make([]float64, 101)})
			return err
		}, "sim: len(Clients) × len(Failures) × len(Strategies) must be at most 100000 cells, got 1000 × 101 × 6 = 606000"},
		{"fleet calls", func() error {
			_, err := fleet.Run(fleet.Config{Clients: []int{10, 100}, Rate: 10_000, Duration: time.Hour})
			return err
		}, "sim: len(Clients) × len(Failures) × len(Strategies) × Rate × Duration must be at most 1000000000 calls, got 2 × 11 × 6 × 36000000 = 4752000000"},
	}
	for _, tt := range tests {
		err := tt.run()
		var fe *sim.FieldError
		if !errors.As(err, &fe) || !errors.Is(err, sim.ErrInvalid) {
			t.Errorf("%s: %v; want a *FieldError", tt.name, err)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, err, tt.want)
		}
	}
}
