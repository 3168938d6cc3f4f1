package fleet

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
)

// TestClassCostShared: a retry of a class of cost 5 (retry.Class.Cost)
// takes 5 tokens from the shared bucket, which another process of the
// fleet (another client and Budget on the same key) sees and decides on.
func TestClassCostShared(t *testing.T) {
	s := startServer(t)
	cfg := BudgetConfig{Key: "cost", MaxTokens: 20, Timeout: time.Second, FlushInterval: time.Hour}
	cfg.Client = s.client(nil)
	a := newTestBudget(t, cfg)
	cfg.Client = s.client(nil)
	other := newTestBudget(t, cfg)

	// Through retry.Do, as a program of the fleet charges it: one
	// overload, retried at the class's cost, then a success.
	overload := retry.Class{Name: "overload", Match: func(err error) bool { return errors.Is(err, errOverload) }, Cost: 5,
		Policy: backoff.Policy{Initial: time.Nanosecond, Jitter: backoff.NoJitter}}
	calls := 0
	_, err := retry.Do(context.Background(), backoff.Policy{Initial: time.Nanosecond, Retries: 3}, func(context.Context) (int, error) {
		calls++
		if calls == 1 {
			return 0, errOverload
		}
		return 1, nil
	}, retry.WithClasses(overload), retry.WithBudget(a))
	if err != nil || calls != 2 {
		t.Fatalf("Do = %v after %d attempts, want a success at the second", err, calls)
	}
	if got := mustTokens(t, other); got != 15 {
		t.Fatalf("another process sees SharedTokens = %v after a retry of cost 5 from 20, want 15", got)
	}
	// The other process decides on what is left: 15-1 = 14 > 10, then
	// 14-5 = 9, not above half: refused.
	if got := other.Failure(); !got {
		t.Errorf("other.Failure() at 15 tokens of 20 = false, want true")
	}
	if got := other.FailureCost(5); got {
		t.Errorf("other.FailureCost(5) at 14 tokens of 20 = true, want false (9 left, not above half)")
	}
	if got := mustTokens(t, a); got != 9 {
		t.Errorf("SharedTokens = %v, want 9", got)
	}
	// A cost that is not a number > 0 takes nothing, as for
	// retry.TokenBucket.FailureCost.
	other.FailureCost(0)
	if got := mustTokens(t, a); got != 9 {
		t.Errorf("SharedTokens = %v after FailureCost(0), want 9 still", got)
	}
	if !a.Shared() || !other.Shared() {
		t.Error("some decision fell back to the local bucket")
	}
}

var errOverload = errors.New("overloaded")

// TestClassCostMatchesLocal: the shared bucket decides failures of any
// cost, interleaved with successes, failures of cost 1 and takes, exactly
// as retry.TokenBucket does.
func TestClassCostMatchesLocal(t *testing.T) {
	s := startServer(t)
	b := newTestBudget(t, BudgetConfig{Client: s.client(nil), MaxTokens: 30, TokenRatio: 0.5, Timeout: time.Second, FlushInterval: time.Hour})
	ref := newLocal(30, 0.5)
	// Costs; -1 a success, -2 a take, 1 a plain Failure.
	seq := []float64{5, 14, 1, -1, -1, -2, 0.25, 2.5, -1, 5, -2, 14, 1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 5, 1, 1, -2}
	for i, c := range seq {
		var got, want bool
		switch c {
		case -1:
			b.Success()
			ref.Success()
			continue
		case -2:
			got, want = b.Take(), ref.Take()
		case 1:
			got, want = b.Failure(), ref.Failure()
		default:
			got, want = b.FailureCost(c), ref.FailureCost(c)
		}
		if got != want {
			t.Fatalf("outcome %d (%v): got %v, want %v as retry.TokenBucket", i, c, got, want)
		}
	}
	if got, want := mustTokens(t, b), ref.Tokens(); got != want {
		t.Errorf("SharedTokens = %v, want %v as retry.TokenBucket", got, want)
	}
}

// TestClassCostFallback: while Redis cannot be used, the local bucket
// charges a failure its cost as the shared one does: from the fallback
// level (one retry's worth, 11.001 of 20 tokens) a failure of cost 5 is
// refused and leaves 6.001 tokens, where one of cost 1 would be allowed.
func TestClassCostFallback(t *testing.T) {
	b, err := OpenBudget("redis://127.0.0.1:1/0?key=k&max_tokens=20&token_ratio=1&connect_timeout=200ms&flush=1h", discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	local := func() float64 { return float64(b.local.capArg-b.local.used.Load()) / milli }
	if b.FailureCost(5) {
		t.Error("FailureCost(5) at the fallback level = true, want false")
	}
	if b.Shared() {
		t.Fatal("Shared() = true with no Redis")
	}
	if got := local(); got != 6.001 {
		t.Errorf("local tokens after a failure of cost 5 = %v, want 6.001", got)
	}
	for range 5 {
		b.Success()
	}
	if got := []bool{b.Failure(), b.FailureCost(0.5)}; !got[0] || got[1] {
		t.Errorf("after 5 successes (11.001 tokens): Failure, FailureCost(0.5) = %v, want [true false]", got)
	}
	if got := local(); got != 9.501 {
		t.Errorf("local tokens = %v, want 9.501", got)
	}
}
