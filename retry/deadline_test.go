package retry_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
)

func TestUntilDeadline(t *testing.T) {
	errDown := errors.New("connection refused")
	every := backoff.Policy{Initial: time.Second, Max: time.Second, Retries: backoff.UntilDeadline, Jitter: backoff.NoJitter}
	tests := []struct {
		name     string
		timeout  time.Duration // 0: no deadline
		policy   backoff.Policy
		wantErr  error
		attempts int // attempts made
	}{
		// A wait of 1 s before each retry: attempts at 0 s, 1 s, ... 9 s; the
		// wait after the tenth would end at the deadline, so it is shortened
		// to leave the reserve: an eleventh attempt at 9.9 s.
		{"retries until the deadline", 10 * time.Second, every, retry.ErrDeadline, 11},
		{"refuses a context without deadline", 0, every, retry.ErrNoDeadline, 0},
		{"a number of retries stops first", 10 * time.Second, backoff.Policy{Initial: time.Second, Max: time.Second, Retries: 2, Jitter: backoff.NoJitter}, retry.ErrExhausted, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				if tt.timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.timeout)
					defer cancel()
				}
				n := 0
				err := retry.Run(ctx, tt.policy, func(context.Context) error { n++; return errDown })
				if !errors.Is(err, tt.wantErr) || n != tt.attempts {
					t.Fatalf("Run = %v after %d attempts, want %v after %d", err, n, tt.wantErr, tt.attempts)
				}
			})
		})
	}
}

// A dependency that answers every attempt with a wait hint of 0 (a
// server's Retry-After: 0) is not retried in a hot loop until the
// deadline: each wait is floored at the policy's first delay, so there are
// at most deadline/Initial+1 attempts. The hooks see the wait made, and
// the hint stays readable as the server gave it.
func TestZeroHintUntilDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const deadline, initial = 2 * time.Second, 100 * time.Millisecond
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		p := backoff.Policy{Initial: initial, Retries: backoff.UntilDeadline}
		n := 0
		var delays []time.Duration
		err := retry.Run(ctx, p, func(context.Context) error {
			if n++; n > 1000 {
				// Zero waits never move the fake clock: end the storm so
				// that the test fails rather than hangs.
				return retry.Permanent(errFlaky)
			}
			return retry.After(0, errFlaky)
		}, retry.WithOnRetry(func(e retry.Event) { delays = append(delays, e.Delay) }))
		if most := int(deadline/initial) + 1; n > most {
			t.Fatalf("%d attempts in %v, want at most %d", n, deadline, most)
		}
		if !errors.Is(err, retry.ErrDeadline) {
			t.Errorf("Run = %v, want ErrDeadline", err)
		}
		for i, d := range delays {
			if d != initial {
				t.Errorf("Event.Delay before retry %d = %v, want the first delay %v", i+1, d, initial)
			}
		}
		if d, ok := retry.RetryAfter(err); !ok || d != 0 {
			t.Errorf("RetryAfter(err) = %v, %v; want the hint 0, true", d, ok)
		}
	})
}

func TestUntilDeadlineLoop(t *testing.T) {
	p := backoff.Policy{Retries: backoff.UntilDeadline}
	if _, err := retry.NewLoop(context.Background(), p); !errors.Is(err, retry.ErrNoDeadline) {
		t.Fatalf("NewLoop without a deadline = %v, want ErrNoDeadline", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if _, err := retry.NewLoop(ctx, p); err != nil {
		t.Fatalf("NewLoop with a deadline = %v, want nil", err)
	}
	if got := p.MaxAttempts(); got != backoff.UntilDeadline {
		t.Errorf("MaxAttempts() = %d, want the largest int", got)
	}
}

// refusal is a refusal before the dependency was called, with a wait
// hint, as a circuit breaker's.
type refusal struct {
	wait      time.Duration
	permanent bool
}

func (r refusal) Error() string             { return "rejected" }
func (r refusal) Rejected() bool            { return true }
func (r refusal) RetryAfter() time.Duration { return r.wait }
func (r refusal) Permanent() bool           { return r.permanent }

func TestRejectedWait(t *testing.T) {
	tests := []struct {
		name   string
		err    refusal
		opts   []retry.Option
		reason error         // nil: the retry succeeds
		waited time.Duration // before the retry, or before giving up
	}{
		{"waits for the hint by default", refusal{wait: 2 * time.Second}, nil, nil, 2 * time.Second},
		{"a negative limit waits for no refusal", refusal{wait: 2 * time.Second}, []retry.Option{retry.WithMaxRejectedWait(-1)}, retry.ErrRejected, 0},
		{"a hint above the limit", refusal{wait: 2 * time.Second}, []retry.Option{retry.WithMaxRejectedWait(time.Second)}, retry.ErrRejected, 0},
		{"its own limit, not WithMaxRetryAfter's", refusal{wait: 2 * time.Second},
			[]retry.Option{retry.WithMaxRetryAfter(-1), retry.WithMaxRejectedWait(time.Minute)}, nil, 2 * time.Second},
		{"zero means WithMaxRetryAfter's", refusal{wait: 2 * time.Second},
			[]retry.Option{retry.WithMaxRetryAfter(time.Second), retry.WithMaxRejectedWait(0)}, retry.ErrRejected, 0},
		{"a Permanent method stops at once", refusal{wait: time.Hour, permanent: true}, nil, retry.ErrPermanent, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := 0
				start := time.Now()
				err := retry.Run(context.Background(), backoff.Policy{Initial: -1}, func(context.Context) error {
					if n++; n == 1 {
						return tt.err
					}
					return nil
				}, tt.opts...)
				if tt.reason == nil && err != nil || tt.reason != nil && !errors.Is(err, tt.reason) {
					t.Fatalf("Run = %v, want %v", err, tt.reason)
				}
				if d := time.Since(start); d != tt.waited {
					t.Errorf("Run took %v, want %v", d, tt.waited)
				}
			})
		})
	}
}

// The caller's own context ending a call is logged at Info, not Warn: the
// caller chose to stop.
func TestLoggerCanceledIsInfo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&buf, nil))
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		err := retry.Run(ctx, backoff.Policy{Initial: time.Minute, Max: time.Minute}, func(context.Context) error {
			return errors.New("flaky")
		}, retry.WithLogger(logger))
		if !errors.Is(err, retry.ErrCanceled) {
			t.Fatalf("Run = %v, want ErrCanceled", err)
		}
		if !strings.Contains(buf.String(), `level=INFO msg="retry: giving up"`) || strings.Contains(buf.String(), "level=WARN") {
			t.Errorf("log:\n%s\nwant the give-up at Info and nothing at Warn", buf.String())
		}
	})
}

// jitters are every jitter kind, for the property tests below.
var jitters = []backoff.Jitter{backoff.FullJitter, backoff.NoJitter, backoff.EqualJitter, backoff.ProportionalJitter, backoff.DecorrelatedJitter, backoff.GRPCJitter}

// TestDeadlineRule checks the deadline rule on the fake clock, for every
// jitter kind, many seeds and deadlines, attempts that take no time or up
// to the reserve given with WithDeadlineReserve, and both
// backoff.UntilDeadline and a number of retries:
//   - no attempt starts later than the reserve before the deadline (no wait
//     ends after it), except the first, which the caller starts;
//   - a call that ends with ErrDeadline started its last attempt within the
//     reserve before the deadline, and returned without sleeping again;
//   - with Retries n, the call ends with whichever comes first: n retries
//     (ErrExhausted) or the deadline (ErrDeadline, as above);
//   - a dependency that recovers at any time earlier than the deadline
//     minus the reserve is reached, whatever the schedule's waits.
func TestDeadlineRule(t *testing.T) {
	deadlines := []time.Duration{50 * time.Millisecond, 350 * time.Millisecond, time.Second, 2500 * time.Millisecond, 10 * time.Second, 47 * time.Second}
	reserves := []time.Duration{0, 30 * time.Millisecond, 700 * time.Millisecond} // 0: the default
	retries := []int{backoff.UntilDeadline, 4}
	for _, j := range jitters {
		t.Run(j.String(), func(t *testing.T) {
			for seed := range uint64(120) {
				src := rand.New(rand.NewPCG(seed, 37))
				dl := deadlines[int(seed)%len(deadlines)]
				res := reserves[int(seed/2)%len(reserves)]
				need := res
				if need == 0 {
					need = backoff.DeadlineReserve
				}
				p := backoff.Policy{Initial: 200 * time.Millisecond, Max: 5 * time.Second, Jitter: j, Retries: retries[int(seed/3)%len(retries)]}
				// The dependency recovers at a random time before the deadline
				// minus the reserve, or never (recover >= dl).
				recover := time.Duration(src.Int64N(int64(dl)))
				reachable := recover < dl-need
				// Each attempt takes a random time within the reserve (none
				// when the reserve is the default).
				var took time.Duration
				if res > 0 {
					took = time.Duration(src.Int64N(int64(res)))
				}
				name := fmt.Sprintf("seed %d: deadline %v, reserve %v, retries %d, recovery at %v, attempts take %v", seed, dl, need, p.Retries, recover, took)
				synctest.Test(t, func(t *testing.T) {
					ctx, cancel := context.WithTimeout(t.Context(), dl)
					defer cancel()
					start := time.Now()
					var at []time.Duration
					err := retry.Run(ctx, p, func(ctx context.Context) error {
						now := time.Since(start)
						at = append(at, now)
						time.Sleep(took)
						if now >= recover {
							return nil
						}
						return errFlaky
					}, retry.WithRand(rand.New(rand.NewPCG(seed, 1))), retry.WithDeadlineReserve(res))
					for i, a := range at[1:] {
						if a > dl-need {
							t.Fatalf("%s: attempt %d started at %v, later than %v before the deadline", name, i+2, a, need)
						}
					}
					last := at[len(at)-1]
					switch {
					case err == nil:
						if last < recover {
							t.Fatalf("%s: succeeded at %v, before the recovery", name, last)
						}
					case errors.Is(err, retry.ErrDeadline):
						if reachable {
							t.Fatalf("%s: Run = %v, attempts at %v; want the recovery reached", name, err, at)
						}
						if len(at) > 1 && last+took < dl-need {
							t.Fatalf("%s: stopped after an attempt at %v, with more than %v left", name, last, need)
						}
						if end := time.Since(start); end != last+took {
							t.Fatalf("%s: returned at %v, want at once after the last attempt, at %v", name, end, last+took)
						}
					case errors.Is(err, retry.ErrExhausted):
						if len(at) != p.MaxAttempts() {
							t.Fatalf("%s: Run = %v after %d attempts, want %d", name, err, len(at), p.MaxAttempts())
						}
					default:
						t.Fatalf("%s: Run = %v, attempts at %v", name, err, at)
					}
					if reachable && p.Retries == backoff.UntilDeadline && err != nil {
						t.Fatalf("%s: Run = %v, want success", name, err)
					}
				})
			}
		})
	}
}

// A server's hint is never shortened: a hint that ends within the deadline
// is waited as it is, even into the reserve, and one that ends at or after
// the deadline stops the loop at once.
func TestDeadlineHint(t *testing.T) {
	p := backoff.Policy{Initial: 10 * time.Millisecond, Retries: backoff.UntilDeadline, Jitter: backoff.NoJitter}
	tests := []struct {
		name    string
		hint    time.Duration
		breaker bool            // the hint is a breaker's rejection, not a server's
		at      []time.Duration // attempts' start times
		reason  error
	}{
		{"a hint ending in the reserve is waited", 950 * time.Millisecond, false, ms(0, 950), retry.ErrDeadline},
		{"a hint ending at the deadline stops at once", time.Second, false, ms(0), retry.ErrDeadline},
		{"a hint ending after the deadline stops at once", 5 * time.Second, false, ms(0), retry.ErrDeadline},
		{"a breaker's wait ending in the reserve is waited", 950 * time.Millisecond, true, ms(0, 950), retry.ErrDeadline},
		{"a breaker's wait ending after the deadline stops at once", 5 * time.Second, true, ms(0), retry.ErrDeadline},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(t.Context(), time.Second)
				defer cancel()
				start := time.Now()
				var at []time.Duration
				err := retry.Run(ctx, p, func(context.Context) error {
					at = append(at, time.Since(start))
					if tt.breaker {
						return refusal{wait: tt.hint}
					}
					return retry.After(tt.hint, errFlaky)
				})
				if !equalDurations(at, tt.at) {
					t.Errorf("attempts started at %v, want %v", at, tt.at)
				}
				if !errors.Is(err, tt.reason) {
					t.Errorf("Run = %v, want %v", err, tt.reason)
				}
				if got, want := time.Since(start), tt.at[len(tt.at)-1]; got != want {
					t.Errorf("returned after %v, want %v (at once)", got, want)
				}
			})
		})
	}
}
