package fleettest_test

import (
	"context"
	"testing"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/fleet"
	"github.com/again-go/again/fleet/fleettest"
	"github.com/again-go/again/retry"
)

// In a test: a redis-server of the test's own, a budget on it, and a fault
// played mid-test. Examples get no *testing.T, so the test is a function
// value here; in a _test.go file it is a TestXxx function. It needs Debian's
// redis-server package.
func ExampleStart() {
	testBudget := func(t *testing.T) {
		s := fleettest.Start(t) // stopped when the test ends
		b, err := fleet.OpenBudget("redis://"+s.Addr()+"/0?key=test", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		s.Kill() // a crash: the budget falls back to local decisions
		err = retry.Run(context.Background(), backoff.Policy{Initial: -1}, func(context.Context) error {
			return nil
		}, retry.WithBudget(b))
		if err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	}
	_ = testBudget
}
