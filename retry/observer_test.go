package retry_test

import (
	"context"
	"errors"
	"testing"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
)

// recorder is an Observer that keeps what it was told.
type recorder struct {
	retries []retry.Event
	ends    int
	attempt int
	err     error
}

func (r *recorder) OnRetry(_ context.Context, e retry.Event) { r.retries = append(r.retries, e) }
func (r *recorder) OnEnd(_ context.Context, attempts int, err error) {
	r.ends++
	r.attempt, r.err = attempts, err
}

// TestObserver checks what an Observer learns of each kind of call: every
// retry, and exactly one end with the attempts and the reason, which is
// what metrics count.
func TestObserver(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	zero := backoff.Policy{Initial: -1, Retries: 2}
	tests := []struct {
		name     string
		ctx      context.Context
		p        backoff.Policy
		fails    int   // attempts that fail before one succeeds
		failWith error // their error
		retries  int
		ends     int
		attempts int
		reason   error // nil: success
	}{
		{"first try", context.Background(), zero, 0, errFlaky, 0, 1, 1, nil},
		{"after two retries", context.Background(), zero, 2, errFlaky, 2, 1, 3, nil},
		{"exhausted", context.Background(), zero, 5, errFlaky, 2, 1, 3, retry.ErrExhausted},
		{"permanent", context.Background(), zero, 5, retry.Permanent(errFlaky), 0, 1, 1, retry.ErrPermanent},
		{"canceled before the first attempt", done, zero, 0, errFlaky, 0, 1, 0, retry.ErrCanceled},
		{"invalid policy: success observed", context.Background(), backoff.Policy{Multiplier: 0.5}, 0, errFlaky, 0, 1, 1, nil},
		{"invalid policy: failure not observed", context.Background(), backoff.Policy{Multiplier: 0.5}, 5, errFlaky, 0, 0, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r recorder
			n := 0
			_, err := retry.Do(tt.ctx, tt.p, func(context.Context) (int, error) {
				if n++; n <= tt.fails {
					return 0, tt.failWith
				}
				return n, nil
			}, retry.WithObserver(&r))
			if len(r.retries) != tt.retries || r.ends != tt.ends || r.attempt != tt.attempts {
				t.Fatalf("observer saw %d retries, %d ends, %d attempts; want %d, %d, %d (Do: %v)",
					len(r.retries), r.ends, r.attempt, tt.retries, tt.ends, tt.attempts, err)
			}
			for i, e := range r.retries {
				if e.Attempt != i+1 || e.Err == nil {
					t.Errorf("retry %d: Event %+v, want Attempt %d and the attempt's error", i, e, i+1)
				}
			}
			if tt.ends == 0 {
				return
			}
			if r.err != err {
				t.Errorf("OnEnd's error = %v, want Do's own: %v", r.err, err)
			}
			if tt.reason != nil && !errors.Is(r.err, tt.reason) {
				t.Errorf("OnEnd's error = %v, want one matching %v", r.err, tt.reason)
			}
		})
	}
}

// TestObserverLoop checks that a Loop driven by hand (as retryhttp drives
// one) ends its call with the Observer too.
func TestObserverLoop(t *testing.T) {
	var r recorder
	l, err := retry.NewLoop(context.Background(), backoff.Policy{Initial: -1, Retries: 1}, retry.WithObserver(&r))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Failed(context.Background(), errFlaky); err != nil {
		t.Fatal(err)
	}
	l.Succeeded()
	if len(r.retries) != 1 || r.ends != 1 || r.attempt != 2 || r.err != nil {
		t.Errorf("observer saw %d retries and end (%d attempts, %v) %d times; want 1 retry, one end after 2 attempts with nil", len(r.retries), r.attempt, r.err, r.ends)
	}
}
