package retry

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
)

// overloadError says whether it is an overload signal, and may be a
// rejection.
type overloadError struct{ rejected, overload bool }

func (e overloadError) Error() string {
	return fmt.Sprintf("rejected %v, overload %v", e.rejected, e.overload)
}
func (e overloadError) Rejected() bool  { return e.rejected }
func (e overloadError) Overload() bool  { return e.overload }
func (e overloadError) Permanent() bool { return false }

// breakerLike is a rejection without an Overload method.
type breakerLike struct{}

func (breakerLike) Error() string  { return "rejected" }
func (breakerLike) Rejected() bool { return true }

func TestIsOverload(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain failure", errors.New("boom"), false},
		{"a rejection (a breaker's)", breakerLike{}, true},
		{"an exhausted budget", fmt.Errorf("inner: %w", ErrBudget), true},
		{"an overload answer", overloadError{overload: true}, true},
		{"a local rejection (a concurrency limit's)", overloadError{rejected: true}, false},
		{"a local rejection, wrapped", fmt.Errorf("x: %w", overloadError{rejected: true}), false},
		{"a local and a breaker's rejection", errors.Join(overloadError{rejected: true}, breakerLike{}), true},
	} {
		if got := IsOverload(c.err); got != c.want {
			t.Errorf("IsOverload(%s) = %v, want %v", c.name, got, c.want)
		}
	}
}

// holder is a Releaser that counts what it holds and what it was told.
type holder struct {
	held, admitted int
	took           []time.Duration
	overloaded     []bool
}

func (h *holder) Admit(context.Context) error { h.held++; h.admitted++; return nil }
func (h *holder) Done(bool)                   { panic("Done called on a Releaser: Release must be") }
func (h *holder) Release(overloaded bool, took time.Duration) {
	h.held--
	h.took = append(h.took, took)
	h.overloaded = append(h.overloaded, overloaded)
}

func TestReleaser(t *testing.T) {
	// Each admitted attempt is released once, with its duration and its
	// classification, and also when op panics (took negative).
	h := &holder{}
	calls := 0
	_, err := Do(context.Background(), backoff.Policy{Initial: -1, Retries: 2}, func(context.Context) (int, error) {
		calls++
		if calls == 3 {
			return 1, nil
		}
		return 0, overloadError{overload: true}
	}, WithAdmitter(h, nil))
	if err != nil || h.held != 0 || h.admitted != 3 || len(h.took) != 3 || h.took[0] < 0 ||
		!h.overloaded[0] || !h.overloaded[1] || h.overloaded[2] {
		t.Errorf("Do: err %v, %d held, %d admitted, took %v, overloaded %v; want nil, 0, 3, 3 durations ≥ 0, [true true false]",
			err, h.held, h.admitted, h.took, h.overloaded)
	}
	h = &holder{}
	func() {
		defer func() { _ = recover() }()
		_ = Run(context.Background(), backoff.Policy{}, func(context.Context) error { panic("op panics") }, WithAdmitter(h, nil))
	}()
	if h.held != 0 || len(h.took) != 1 || h.took[0] >= 0 {
		t.Errorf("after op panicked: %d held, took %v; want 0, one negative duration", h.held, h.took)
	}
}
