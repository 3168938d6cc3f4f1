package otelagain_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
	"github.com/again-go/again/hedge"
	"github.com/again-go/again/retry"
)

var errFlaky = errors.New("flaky")

// TestRetryMetrics checks the per-call metrics of retry.Do for each way a
// call ends: what a dashboard of retries reads.
func TestRetryMetrics(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	zero := backoff.Policy{Initial: -1, Retries: 2}
	tests := []struct {
		name     string
		ctx      context.Context
		fails    int
		err      error
		calls    string // again.retry.calls
		attempts string // again.retry.attempts
		retries  string // again.retry.retries
		waits    string // again.retry.wait.duration
	}{
		// A first-try success is a call of one attempt, without retries.
		{"first try", context.Background(), 0, errFlaky,
			"{again.retry.name=db,again.retry.reason=success}=1",
			"{again.retry.name=db,again.retry.reason=success}=1/1", "", ""},
		{"after one retry", context.Background(), 1, errFlaky,
			"{again.retry.name=db,again.retry.reason=success}=1",
			"{again.retry.name=db,again.retry.reason=success}=1/2",
			"{again.retry.name=db,again.retry.reason=success}=1/1",
			"{again.retry.name=db}=1/0"},
		{"exhausted", context.Background(), 9, errFlaky,
			"{again.retry.name=db,again.retry.reason=exhausted}=1",
			"{again.retry.name=db,again.retry.reason=exhausted}=1/3",
			"{again.retry.name=db,again.retry.reason=exhausted}=1/2",
			"{again.retry.name=db}=2/0"},
		{"permanent", context.Background(), 9, retry.Permanent(errFlaky),
			"{again.retry.name=db,again.retry.reason=permanent}=1",
			"{again.retry.name=db,again.retry.reason=permanent}=1/1", "", ""},
		// An open breaker whose probe is further off than the longest wait
		// honoured: an operator must not read it as a server's hint.
		{"rejected", context.Background(), 9, &breaker.OpenError{State: breaker.Open, Wait: 2 * time.Minute},
			"{again.retry.name=db,again.retry.reason=rejected}=1",
			"{again.retry.name=db,again.retry.reason=rejected}=1/1", "", ""},
		{"a server's hint too long", context.Background(), 9, retry.After(2*time.Minute, errFlaky),
			"{again.retry.name=db,again.retry.reason=retry_after_too_long}=1",
			"{again.retry.name=db,again.retry.reason=retry_after_too_long}=1/1", "", ""},
		{"canceled before the first attempt", canceled, 0, errFlaky,
			"{again.retry.name=db,again.retry.reason=canceled}=1",
			"{again.retry.name=db,again.retry.reason=canceled}=1/0", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSDK(t)
			opt := s.tel.Retry("db")
			n := 0
			_, _ = retry.Do(tt.ctx, zero, func(context.Context) (int, error) {
				if n++; n <= tt.fails {
					return 0, tt.err
				}
				return n, nil
			}, opt)
			for _, c := range []struct{ metric, want string }{
				{"again.retry.calls", tt.calls}, {"again.retry.attempts", tt.attempts},
				{"again.retry.retries", tt.retries}, {"again.retry.wait.duration", tt.waits},
			} {
				if got := show(s.points(t, c.metric)); got != c.want {
					t.Errorf("%s = %s, want %s", c.metric, got, c.want)
				}
			}
		})
	}
}

// TestWaitSeconds checks that waits are recorded in seconds.
func TestWaitSeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		n := 0
		p := backoff.Policy{Initial: 20 * time.Millisecond, Retries: 1, Jitter: backoff.NoJitter}
		_ = retry.Run(t.Context(), p, func(context.Context) error {
			if n++; n == 1 {
				return errFlaky
			}
			return nil
		}, s.tel.Retry("db"))
		if got := show(s.points(t, "again.retry.wait.duration")); got != "{again.retry.name=db}=1/0.02" {
			t.Errorf("again.retry.wait.duration = %s, want one wait of 0.02 s", got)
		}
	})
}

// TestBudgetMetrics checks the budget's rejections and tokens left, for a
// bucket that a run of failures empties.
func TestBudgetMetrics(t *testing.T) {
	s := newSDK(t)
	b := s.tel.Budget("api", &retry.TokenBucket{MaxTokens: 4})
	for range 2 {
		_ = retry.Run(context.Background(), backoff.Policy{Initial: -1, Retries: 5},
			func(context.Context) error { return errFlaky }, retry.WithBudget(b))
	}
	// 4 tokens: the first failure leaves 3 (> 2, retry), the second 2 (no
	// more than half: refused); the second call's first failure leaves 1,
	// refused too.
	if got := show(s.points(t, "again.budget.rejections")); got != "{again.budget.name=api}=2" {
		t.Errorf("again.budget.rejections = %s, want 2", got)
	}
	if got := show(s.points(t, "again.budget.tokens")); got != "{again.budget.name=api}=1" {
		t.Errorf("again.budget.tokens = %s, want 1", got)
	}
	if s.tel.Budget("nil", (*retry.TokenBucket)(nil)) != nil {
		t.Error("Budget of a nil *TokenBucket is not nil: retry would call its methods")
	}
	if err := s.tel.Budget("bad", &retry.TokenBucket{MaxTokens: -1}).(interface{ Validate() error }).Validate(); !errors.Is(err, retry.ErrInvalid) {
		t.Errorf("Validate of an observed invalid bucket = %v, want ErrInvalid", err)
	}
}

// TestBudgetClassCost: an observed budget charges a class's cost to the
// budget it observes, as the budget itself would be charged, and counts
// the retry the cost makes it refuse.
func TestBudgetClassCost(t *testing.T) {
	s := newSDK(t)
	tb := &retry.TokenBucket{MaxTokens: 20}
	b := s.tel.Budget("api", tb)
	overload := retry.Class{Name: "overload", Cost: 5, Policy: backoff.Policy{Initial: -1, Retries: 5}}
	_ = retry.Run(context.Background(), backoff.Policy{Initial: -1, Retries: 5},
		func(context.Context) error { return errFlaky }, retry.WithClasses(overload), retry.WithBudget(b))
	// 20 tokens, 5 a failure: 15 (retry), then 10 (no more than half:
	// refused).
	if got := tb.Tokens(); got != 10 {
		t.Errorf("Tokens() = %v after two failures of cost 5 from 20, want 10", got)
	}
	if got := show(s.points(t, "again.budget.rejections")); got != "{again.budget.name=api}=1" {
		t.Errorf("again.budget.rejections = %s, want 1", got)
	}
}

// TestGroupMetrics checks a Group's breaker metrics, per key: the state
// gauge, the transitions and the rejections.
func TestGroupMetrics(t *testing.T) {
	s := newSDK(t)
	g := &breaker.Group{Config: breaker.Config{MinCalls: -1}}
	s.tel.Group("api", g)
	a, err := g.Get("a.example")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Get("b.example"); err != nil {
		t.Fatal(err)
	}
	_ = a.Do(context.Background(), func(context.Context) error { return errFlaky })
	for range 3 {
		_ = a.Do(context.Background(), func(context.Context) error { return nil })
	}
	const key = "again.breaker.key=a.example,again.breaker.name=api"
	if got, want := show(s.points(t, "again.breaker.transitions")),
		"{again.breaker.from=closed,"+key+",again.breaker.to=open}=1"; got != want {
		t.Errorf("again.breaker.transitions = %s, want %s", got, want)
	}
	if got, want := show(s.points(t, "again.breaker.rejections")),
		"{"+key+",again.breaker.state=open}=3"; got != want {
		t.Errorf("again.breaker.rejections = %s, want %s", got, want)
	}
	state := s.points(t, "again.breaker.state")
	for attrs, want := range map[string]string{
		key + ",again.breaker.state=open":                                               "1",
		key + ",again.breaker.state=closed":                                             "0",
		"again.breaker.key=b.example,again.breaker.name=api,again.breaker.state=closed": "1",
		"again.breaker.key=b.example,again.breaker.name=api,again.breaker.state=open":   "0",
	} {
		if state[attrs] != want {
			t.Errorf("again.breaker.state{%s} = %q, want %s (all: %s)", attrs, state[attrs], want, show(state))
		}
	}
	if len(state) != 8 {
		t.Errorf("again.breaker.state has %d series, want 8 (2 keys × 4 states): %s", len(state), show(state))
	}
}

// TestBreakerMetrics checks a single breaker, whose own hooks still run.
func TestBreakerMetrics(t *testing.T) {
	s := newSDK(t)
	var own []breaker.Change
	b, err := s.tel.Breaker("db", breaker.Config{MinCalls: -1, OnStateChange: func(c breaker.Change) { own = append(own, c) }})
	if err != nil {
		t.Fatal(err)
	}
	b.Isolate()
	_ = b.Do(context.Background(), func(context.Context) error { return nil })
	if len(own) != 1 {
		t.Errorf("the Config's own OnStateChange saw %d changes, want 1", len(own))
	}
	if got, want := show(s.points(t, "again.breaker.rejections")), "{again.breaker.name=db,again.breaker.state=isolated}=1"; got != want {
		t.Errorf("again.breaker.rejections = %s, want %s", got, want)
	}
	if got := s.points(t, "again.breaker.state")["again.breaker.name=db,again.breaker.state=isolated"]; got != "1" {
		t.Errorf("again.breaker.state{isolated} = %q, want 1", got)
	}
	if _, err := s.tel.Breaker("bad", breaker.Config{FailureRatio: 2}); !errors.Is(err, breaker.ErrInvalid) {
		t.Errorf("Breaker with an invalid Config: %v, want ErrInvalid", err)
	}
}

// TestBreakerStale checks that a report dropped for arriving after a state
// change is counted, by the state that admitted the call, and still
// reaches the Config's own OnStale.
func TestBreakerStale(t *testing.T) {
	s := newSDK(t)
	var own []breaker.Stale
	b, err := s.tel.Breaker("db", breaker.Config{MinCalls: -1, OnStale: func(st breaker.Stale) { own = append(own, st) }})
	if err != nil {
		t.Fatal(err)
	}
	tk, err := b.Allow(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_ = b.Do(context.Background(), func(context.Context) error { return errFlaky }) // trips the breaker
	tk.Done(nil)                                                                    // from the closed round: stale
	if got, want := show(s.points(t, "again.breaker.stale")), "{again.breaker.name=db,again.breaker.state=closed}=1"; got != want {
		t.Errorf("again.breaker.stale = %s, want %s", got, want)
	}
	if len(own) != 1 || own[0] != (breaker.Stale{Outcome: breaker.Success, Admitted: breaker.Closed, Now: breaker.Open}) {
		t.Errorf("the Config's own OnStale saw %+v, want one success admitted closed, dropped open", own)
	}
}

// TestHedgeMetrics checks the hedges sent and won, for attempts whose
// first copy is slow and whose hedge answers at once.
func TestHedgeMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		var own int
		h := &hedge.Hedger{After: time.Millisecond, OnHedge: func(hedge.Event) { own++ }}
		s.tel.Hedger("users", h)
		for range 3 {
			var copies atomic.Int32
			_, err := hedge.Do(t.Context(), backoff.Policy{Retries: -1}, h, "k", func(ctx context.Context) (int, error) {
				if copies.Add(1) == 1 {
					<-ctx.Done() // the first copy is slow: the hedge wins
					return 0, ctx.Err()
				}
				return 1, nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if sent, won := show(s.points(t, "again.hedge.sent")), show(s.points(t, "again.hedge.won")); sent != "{again.hedge.name=users}=3" || won != "{again.hedge.name=users}=3" {
			t.Errorf("again.hedge.sent = %s, again.hedge.won = %s; want 3 each", sent, won)
		}
		if own != 6 {
			t.Errorf("the Hedger's own OnHedge saw %d events, want 6", own)
		}
	})
}
