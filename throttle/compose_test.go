package throttle_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/throttle"
)

// always draws 0: every request with p > 0 is rejected.
type always struct{}

func (always) Float64() float64 { return 0 }

var fast = backoff.Policy{Initial: -1, Retries: 2}

// overloaded is an error type that says so without importing retry.
type overloaded struct{}

func (overloaded) Error() string  { return "server: 503 Service Unavailable" }
func (overloaded) Overload() bool { return true }

func TestDoThrottledSpendsNoBudget(t *testing.T) {
	th, _ := throttle.New(throttle.Config{Rand: always{}})
	var budget retry.TokenBucket
	opts := []retry.Option{retry.WithAdmitter(th, nil), retry.WithBudget(&budget)}
	// One overloaded call: three attempts, each refused by the backend,
	// the last two rejected locally once p > 0.
	calls := 0
	err := retry.Run(t.Context(), fast, func(context.Context) error { calls++; return overloaded{} }, opts...)
	if calls != 1 {
		t.Errorf("op ran %d times, want 1: the Throttler rejects the retries", calls)
	}
	if !errors.Is(err, retry.ErrExhausted) || !errors.Is(err, throttle.ErrRejected) {
		t.Fatalf("Run = %v, want retries exhausted on a local rejection", err)
	}
	if n := strings.Count(err.Error(), "throttle:"); n != 1 {
		t.Errorf("message %q states the throttle %d times, want once", err, n)
	}
	// Only the failure that was sent spent a token.
	if got := budget.Tokens(); got != retry.DefaultMaxTokens-1 {
		t.Errorf("budget holds %v tokens, want %v: rejections spend nothing", got, retry.DefaultMaxTokens-1)
	}
	s := th.Snapshot()
	if s.Requests != 1 || s.Accepts != 0 || s.Rejected != 2 {
		t.Errorf("Snapshot = %+v, want 1 request and 2 rejected (not counted: no accept in the window), 0 accepts", s)
	}
}

// TestDoRateRefunds: success through a Rate refunds the retry budget
// (aws-sdk-go-v2#3550 is that the SDK's adaptive mode never does).
func TestDoRateRefunds(t *testing.T) {
	r, _ := throttle.NewRate(throttle.RateConfig{})
	budget := &retry.TokenBucket{TokenRatio: 1}
	budget.Failure()
	budget.Failure()
	opts := []retry.Option{retry.WithAdmitter(r, nil), retry.WithBudget(budget)}
	for range 2 {
		if err := retry.Run(t.Context(), fast, func(context.Context) error { return nil }, opts...); err != nil {
			t.Fatal(err)
		}
	}
	if got := budget.Tokens(); got != retry.DefaultMaxTokens {
		t.Errorf("budget holds %v tokens after 2 successes, want %v", got, float64(retry.DefaultMaxTokens))
	}
}

func TestDoRateWaitsForItsToken(t *testing.T) {
	synctest.Test(t, doRateWaits)
}

func doRateWaits(t *testing.T) {
	r, _ := throttle.NewRate(throttle.RateConfig{FailFast: true})
	r.Done(true) // on at 0.5/s, empty: a token in 2 s
	var waits []time.Duration
	opts := []retry.Option{
		retry.WithAdmitter(r, nil),
		retry.WithMaxRejectedWait(-1), // fail fast: do not wait the hint
		retry.WithOnRetry(func(e retry.Event) { waits = append(waits, e.Delay) }),
	}
	err := retry.Run(t.Context(), fast, func(context.Context) error { return nil }, opts...)
	if !errors.Is(err, retry.ErrRejected) || !errors.Is(err, throttle.ErrRejected) {
		t.Fatalf("Run = %v, want ErrRejected: the token is 2s off", err)
	}
	if d, _ := retry.RetryAfter(err); d != 2*time.Second {
		t.Errorf("RetryAfter = %v, want 2s", d)
	}
}

func TestIsOverload(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("connection refused"), false},
		{context.DeadlineExceeded, false},
		{overloaded{}, true},
		{fmt.Errorf("call: %w", overloaded{}), true},
		{errors.Join(errors.New("x"), overloaded{}), true},
		{&breaker.OpenError{State: breaker.Open}, true},
		{&retry.Error{Reason: retry.ErrBudget, Last: errors.New("x")}, true},
		{&retry.Error{Reason: retry.ErrExhausted, Last: overloaded{}}, true},
		{&retry.Error{Reason: retry.ErrExhausted, Last: errors.New("x")}, false},
	} {
		if got := retry.IsOverload(tc.err); got != tc.want {
			t.Errorf("IsOverload(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestGroupBounded(t *testing.T) {
	made := 0
	g := throttle.Group{MaxKeys: 2, New: func(string) (retry.Admitter, error) {
		made++
		return throttle.New(throttle.Config{})
	}}
	a1, _ := g.Get("a")
	g.Get("b")
	c, _ := g.Get("c")
	d, _ := g.Get("d")
	if again, _ := g.Get("a"); again != a1 {
		t.Error("Get(a) twice returned two Admitters")
	}
	if c != d {
		t.Error("keys beyond MaxKeys have Admitters of their own, want them to share one")
	}
	if o, _ := g.Get(throttle.OverflowKey); o != c {
		t.Error("the shared Admitter is not under OverflowKey")
	}
	if g.Len() != 2 || made != 3 {
		t.Errorf("Len = %d, made %d; want 2 keys and 3 Admitters", g.Len(), made)
	}
	bad := throttle.Group{New: func(string) (retry.Admitter, error) { return throttle.New(throttle.Config{K: 0.1}) }}
	if _, err := bad.Get("x"); !errors.Is(err, throttle.ErrInvalid) {
		t.Errorf("Get with an invalid Config = %v, want ErrInvalid", err)
	}
}

func TestConcurrent(t *testing.T) {
	th, _ := throttle.New(throttle.Config{})
	r, _ := throttle.NewRate(throttle.RateConfig{FailFast: true})
	var g throttle.Group
	var wg sync.WaitGroup
	const n, each = 4, 500
	for i := range n {
		wg.Go(func() {
			for j := range each {
				over := (i+j)%3 == 0
				for _, a := range []retry.Admitter{th, r} {
					if a.Admit(context.Background()) == nil {
						a.Done(over)
					}
				}
				ga, _ := g.Get(fmt.Sprint(j % 5))
				if ga.Admit(context.Background()) == nil {
					ga.Done(over)
				}
				_ = th.Snapshot()
				_ = r.Stats()
			}
		})
	}
	wg.Wait()
	// Every request asked for is counted, or is a rejection made while
	// the window held no accept (the first answers may all be overloads).
	if s := th.Snapshot(); s.Requests+s.Uncounted != n*each {
		t.Errorf("Requests %d + Uncounted %d, want %d", s.Requests, s.Uncounted, n*each)
	}
}
