package breakertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newClock() *Clock { return NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) }

var errBoom = errors.New("boom")

// noJitter is an open schedule without jitter: 1s, 2s, 4s, ... capped at 8s.
var noJitter = backoff.Policy{Initial: time.Second, Multiplier: 2, Max: 8 * time.Second, Retries: 3, Jitter: backoff.NoJitter}

// newTest returns a breaker with cfg on clock c, unless cfg has a clock.
func newTest(t testing.TB, cfg breaker.Config, c *Clock) *breaker.Breaker {
	t.Helper()
	if cfg.Clock == nil {
		cfg.Clock = c
	}
	b, err := breaker.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return b
}

// call runs one call that returns err through b and reports whether b
// admitted it.
func call(b *breaker.Breaker, err error) bool {
	ran := false
	got := b.Do(context.Background(), func(context.Context) error { ran = true; return err })
	if !ran && !errors.Is(got, breaker.ErrOpen) {
		panic("rejected call without ErrOpen: " + got.Error())
	}
	return ran
}

func wantState(t *testing.T, b *breaker.Breaker, want breaker.State) {
	t.Helper()
	if got := b.State(); got != want {
		t.Fatalf("State() = %v, want %v", got, want)
	}
}

// rejection returns the *OpenError of a call that b rejects.
func rejection(t *testing.T, b *breaker.Breaker) *breaker.OpenError {
	t.Helper()
	_, err := b.Allow(context.Background())
	var oe *breaker.OpenError
	if !errors.As(err, &oe) {
		t.Fatalf("Allow() = %v, want an *OpenError", err)
	}
	return oe
}
