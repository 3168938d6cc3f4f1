package bench

import (
	"context"
	"errors"
	"testing"
	"time"

	avast "github.com/avast/retry-go/v4"
	avast5 "github.com/avast/retry-go/v5"
	awsretry "github.com/aws/aws-sdk-go-v2/aws/retry"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/retry"
)

const fromAWS = "From aws-sdk-go-v2's retryer (aws/retry)"

// errThrottled is an AWS throttling error (its code is one of the SDK's
// DefaultThrottleErrorCodes) that says so to again too (retry.IsOverload),
// as an adapter of the SDK's errors would.
type errThrottled struct{}

func (errThrottled) Error() string     { return "ThrottlingException: rate exceeded" }
func (errThrottled) ErrorCode() string { return "ThrottlingException" }
func (errThrottled) Overload() bool    { return true }

// errTransient is an AWS error the SDK retries as transient, not as a
// throttle: a 500's InternalError.
type errTransient struct{}

func (errTransient) Error() string     { return "InternalError" }
func (errTransient) ErrorCode() string { return "InternalError" }

var _ = row(fromAvast, "`AttemptsForError(n, err)` (v4.3 and later): at most n attempts that fail with `err`, counted against `Attempts` too", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		// Ten attempts in all, but two for errMig: both libraries stop at
		// the second failure with errMig.
		c4, c5, ca := &counter{fail: -1}, &counter{fail: -1}, &counter{fail: -1}
		_ = avast.Do(c4.errOp, avast.Attempts(10), avast.Delay(0), avast.AttemptsForError(2, errMig))
		_ = avast5.New(avast5.Attempts(10), avast5.Delay(0), avast5.AttemptsForError(2, errMig)).Do(c5.errOp)
		class := retry.Class{Match: func(err error) bool { return errors.Is(err, errMig) },
			Policy: backoff.Policy{Initial: -1, Retries: retriesForAttempts(2)}}
		err := retry.Run(context.Background(), backoff.Policy{Initial: -1, Retries: retriesForAttempts(10)}, ca.ctxErrOp, retry.WithClasses(class))
		wantCalls(t, "retry-go v4", c4.calls, 2)
		wantCalls(t, "retry-go v5", c5.calls, 2)
		wantCalls(t, "again", ca.calls, 2)
		if !errors.Is(err, retry.ErrExhausted) {
			t.Errorf("again: %v, want ErrExhausted", err)
		}
	})
})

var _ = row(fromAWS, "`retry.NewStandard()` with the 2026 behaviour (v1.48): throttling errors wait from 1 s and cost 5 tokens, other transient ones from 50 ms and cost 14; 3 attempts; waits capped at 20 s before full jitter", func(t *testing.T) {
	var costs []uint
	s := awsretry.NewStandard(func(o *awsretry.StandardOptions) { o.RateLimiter = costRecorder{&costs} })
	classes := retry.AWSClasses()
	if s.MaxAttempts() != retry.AWSMaxAttempts {
		t.Errorf("MaxAttempts: aws %d, again %d", s.MaxAttempts(), retry.AWSMaxAttempts)
	}
	for i, err := range []error{errThrottled{}, errTransient{}} {
		if _, e := s.GetRetryToken(context.Background(), err); e != nil {
			t.Fatal(e)
		}
		c := classes[i]
		if c.Match != nil && !c.Match(err) || i == 1 && classes[0].Match(err) {
			t.Errorf("%v: again's class is not %q", err, c.Name)
		}
		if float64(costs[i]) != c.Cost {
			t.Errorf("%v: aws costs %d tokens, again's class %q %v", err, costs[i], c.Name, c.Cost)
		}
		// The SDK's waits are full jitter under min(base × 2^(n−1), 20 s):
		// their largest of many draws is close to again's nominal delay,
		// never above it.
		for n := 1; n <= 8; n++ {
			var longest time.Duration
			for range 400 {
				d, e := s.RetryDelay(n, err)
				if e != nil {
					t.Fatal(e)
				}
				longest = max(longest, d)
			}
			if want := c.Policy.Delay(n); longest > want || longest < want*9/10 {
				t.Errorf("%v, retry %d: aws's longest wait %v, again's nominal %v", err, n, longest, want)
			}
		}
		if c.Policy.Jitter != backoff.FullJitter {
			t.Errorf("class %q jitter %v, want full jitter as the SDK's", c.Name, c.Policy.Jitter)
		}
	}
})

// costRecorder is an aws RateLimiter that grants every token and records
// its cost.
type costRecorder struct{ costs *[]uint }

func (r costRecorder) GetToken(_ context.Context, cost uint) (func() error, error) {
	*r.costs = append(*r.costs, cost)
	return func() error { return nil }, nil
}
func (costRecorder) AddTokens(uint) error { return nil }
