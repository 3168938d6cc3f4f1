package retry_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
)

// hintError carries a wait hint without importing retry's After, as another
// package's error type (a breaker's) does.
type hintError struct{ d time.Duration }

func (e hintError) Error() string             { return fmt.Sprintf("busy for %v", e.d) }
func (e hintError) RetryAfter() time.Duration { return e.d }

// rejection is an attempt refused before it reached the dependency.
type rejection struct {
	hint time.Duration
	no   bool // Rejected() returns false
}

func (e *rejection) Error() string             { return "open circuit" }
func (e *rejection) Rejected() bool            { return !e.no }
func (e *rejection) RetryAfter() time.Duration { return e.hint }

// countingBudget is a Budget that records its calls and allows retries
// while allow is true.
type countingBudget struct {
	successes, failures int
	allow               bool
}

func (b *countingBudget) Success()      { b.successes++ }
func (b *countingBudget) Failure() bool { b.failures++; return b.allow }

func TestBudgetInterface(t *testing.T) {
	tests := []struct {
		name               string
		errs               []error
		allow              bool
		reason             error
		attempts           int
		successes, failues int
	}{
		{name: "success after failures", errs: failing(2, errFlaky), allow: true, attempts: 3, successes: 1, failues: 2},
		{name: "refused", errs: failing(5, errFlaky), allow: false, reason: retry.ErrBudget, attempts: 1, failues: 1},
		{name: "exhausted wins over refused", errs: failing(5, errFlaky), allow: true, reason: retry.ErrExhausted, attempts: 4, failues: 4},
		{name: "permanent is not counted", errs: []error{retry.Permanent(errFlaky)}, reason: retry.ErrPermanent, attempts: 1},
		{name: "rejections are not counted", errs: []error{&rejection{}, &rejection{}}, allow: false, attempts: 3, successes: 1},
		{name: "Rejected false is counted", errs: []error{&rejection{no: true}}, allow: true, attempts: 2, successes: 1, failues: 1},
		{name: "wrapped rejection", errs: []error{fmt.Errorf("call: %w", &rejection{})}, allow: false, attempts: 2, successes: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := &countingBudget{allow: tt.allow}
				s := newScript(tt.errs...)
				_, err := retry.Do(t.Context(), policy, s.op, retry.WithBudget(b))
				if tt.reason == nil {
					if err != nil {
						t.Fatalf("Do: %v, want success", err)
					}
				} else {
					checkError(t, err, tt.reason, tt.attempts, nil)
				}
				if len(s.at) != tt.attempts {
					t.Errorf("attempts = %d, want %d", len(s.at), tt.attempts)
				}
				if b.successes != tt.successes || b.failures != tt.failues {
					t.Errorf("Success calls = %d, Failure calls = %d; want %d, %d", b.successes, b.failures, tt.successes, tt.failues)
				}
			})
		})
	}
}

// A rejection's hint sets the wait, as After's does, and it still counts
// as an attempt against the policy.
func TestRejectedHint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(failing(10, &rejection{hint: 7 * time.Second})...)
		_, err := retry.Do(t.Context(), policy, s.op)
		checkError(t, err, retry.ErrExhausted, 4, nil)
		if want := ms(0, 7000, 14000, 21000); !equalDurations(s.at, want) {
			t.Errorf("attempts at %v, want %v", s.at, want)
		}
		if !retry.IsRejected(err) {
			t.Errorf("IsRejected(%v) = false, want true", err)
		}
	})
}

func TestNilBudget(t *testing.T) {
	var tb *retry.TokenBucket
	err := retry.Run(t.Context(), backoff.Policy{Retries: 1, Initial: time.Nanosecond, Multiplier: 1}, func(context.Context) error { return nil }, retry.WithBudget(tb))
	if err != nil {
		t.Fatalf("Run with a nil *TokenBucket: %v, want success without a budget", err)
	}
}

func TestTokenBucketValidate(t *testing.T) {
	tests := []struct {
		b     *retry.TokenBucket
		field string // "" if valid
	}{
		{&retry.TokenBucket{}, ""},
		{&retry.TokenBucket{MaxTokens: 4, TokenRatio: 0.5}, ""},
		{&retry.TokenBucket{MaxTokens: -1}, "MaxTokens"},
		{&retry.TokenBucket{MaxTokens: math.NaN()}, "MaxTokens"},
		{&retry.TokenBucket{MaxTokens: math.Inf(1)}, "MaxTokens"},
		{&retry.TokenBucket{TokenRatio: -0.1}, "TokenRatio"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%v,%v", tt.b.MaxTokens, tt.b.TokenRatio), func(t *testing.T) {
			err := tt.b.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, retry.ErrInvalid) || !strings.Contains(err.Error(), "TokenBucket."+tt.field) {
				t.Fatalf("Validate() = %v, want ErrInvalid naming TokenBucket.%s", err, tt.field)
			}
			called := false
			err2 := retry.Run(t.Context(), policy, func(context.Context) error { called = true; return nil }, retry.WithBudget(tt.b))
			if called || !errors.Is(err2, retry.ErrInvalid) {
				t.Errorf("Run with an invalid budget: called = %v, err = %v; want no call and the Validate error", called, err2)
			}
		})
	}
}

// Elapsed counts from the first failure for Do (two attempts of 200 ms
// each with a 100 ms wait between them: the wait and the second attempt,
// 300 ms) and from NewLoop for a Loop (all of it, 500 ms).
func TestElapsed(t *testing.T) {
	p := backoff.Policy{Initial: 100 * time.Millisecond, Multiplier: 2, Retries: 1, Jitter: backoff.NoJitter}
	work := func(context.Context) error {
		time.Sleep(200 * time.Millisecond) // the attempt's own work, on the fake clock
		return errFlaky
	}
	t.Run("Do", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			re := checkError(t, retry.Run(t.Context(), p, work), retry.ErrExhausted, 2, errFlaky)
			if re.Elapsed != 500*time.Millisecond {
				t.Errorf("Elapsed = %v, want 500ms: both attempts' 200ms and the 100ms wait", re.Elapsed)
			}
		})
	})
	t.Run("Loop", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l, err := retry.NewLoop(t.Context(), p)
			if err != nil {
				t.Fatal(err)
			}
			for err == nil {
				err = l.Failed(t.Context(), work(t.Context()))
			}
			re := checkError(t, err, retry.ErrExhausted, 2, errFlaky)
			if re.Elapsed != 500*time.Millisecond {
				t.Errorf("Elapsed = %v, want 500ms", re.Elapsed)
			}
		})
	})
}
