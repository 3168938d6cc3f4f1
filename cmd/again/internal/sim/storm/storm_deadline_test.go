package storm

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/cmd/again/internal/sim"
	"github.com/again-go/again/retry"
)

// A storm with a deadline is what retry.Do does: for every jitter kind,
// seed and deadline, one client's attempts start when those of retry.Do,
// drawing the same jitter on the fake clock, do, so that the model
// predicts the loop. No attempt but the first starts later than the
// reserve before the deadline.
func TestStormDeadlineIsTheLoops(t *testing.T) {
	jitters := []backoff.Jitter{backoff.FullJitter, backoff.NoJitter, backoff.EqualJitter, backoff.ProportionalJitter, backoff.DecorrelatedJitter, backoff.GRPCJitter}
	deadlines := []time.Duration{50 * time.Millisecond, 900 * time.Millisecond, 3 * time.Second, 10 * time.Second, time.Minute}
	for _, j := range jitters {
		for seed := range uint64(20) {
			dl := deadlines[int(seed)%len(deadlines)]
			p := backoff.Policy{Initial: 300 * time.Millisecond, Max: 20 * time.Second, Retries: 12, Jitter: j}
			c := Config{Policy: p, Clients: 1, Bucket: time.Second, Seed: seed, Deadline: dl}
			var model []time.Duration
			c.starts(func(_ int, at time.Duration) { model = append(model, at) })

			var loop []time.Duration
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(t.Context(), dl)
				defer cancel()
				start := time.Now()
				_ = retry.Run(ctx, p, func(context.Context) error {
					loop = append(loop, time.Since(start))
					return fmt.Errorf("down")
				}, retry.WithRand(sim.Stream(seed, sim.StringID("storm"))))
			})
			name := fmt.Sprintf("%v jitter, seed %d, deadline %v", j, seed, dl)
			if !slices.Equal(model, loop) {
				t.Errorf("%s: the storm's attempts at %v, retry.Run's at %v", name, model, loop)
			}
			for i, at := range model[1:] {
				if at > dl-backoff.DeadlineReserve {
					t.Errorf("%s: attempt %d at %v, later than %v before the deadline", name, i+2, at, backoff.DeadlineReserve)
				}
			}
		}
	}
}
