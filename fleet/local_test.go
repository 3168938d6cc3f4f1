package fleet

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/again-go/again/retry"
)

// FuzzLocalBucket: the fallback bucket, configured with the same
// MaxTokens and TokenRatio as a retry.TokenBucket, follows its rules
// (Failure, FailureCost and Take) exactly on any sequence of outcomes,
// and from the fallback level it allows at most one retry before a
// success.
func FuzzLocalBucket(f *testing.F) {
	// Below 0x80, byte%3: 0 a success, 1 a failure, 2 a take (0x30 '0',
	// 0x31 '1', 0x32 '2'); from 0x80, a failure costing (byte-0x80)/4 tokens.
	f.Add(10.0, 0.1, []byte("1111110000000000112222"))
	f.Add(500.0, 1.0, []byte("\x94\x94\xb8\xb800000\x94\x80\x812"))
	f.Add(3.0, 1.0, []byte("10101111222022"))
	f.Add(0.001, 0.001, []byte("112002"))
	// 8.001 × 1000 is 8000.999… in floating point: both must count 8001.
	f.Add(8.001, 40.0, []byte("1111"))
	f.Add(1.005, 1.005, []byte("1111\x84\x840"))
	f.Fuzz(func(t *testing.T, maxTokens, ratio float64, seq []byte) {
		capArg, err := milliTokens("MaxTokens", maxTokens, defaultMaxTokens)
		if err != nil || capArg < 1 || capArg > 1e12 {
			return
		}
		refund, err := milliTokens("TokenRatio", ratio, defaultTokenRatio)
		if err != nil {
			return
		}
		// The reference is configured with the same numbers the user
		// gave, so that the two count them alike, rounding included.
		ref := &retry.TokenBucket{MaxTokens: maxTokens, TokenRatio: ratio}
		l := newLocalBucket(capArg, max(1, refund))
		for i, o := range seq {
			if o >= 0x80 {
				// A failure of a class's cost (retry.Class.Cost): 0 to 31.75
				// tokens, 0 taking nothing.
				cost := float64(o&0x7f) / 4
				if got, want := l.failure(costMilli(cost)), ref.FailureCost(cost); got != want {
					t.Fatalf("cap %d refund %d, outcome %d of %q: failure of cost %v = %v, retry.TokenBucket.FailureCost says %v", capArg, refund, i, seq, cost, got, want)
				}
				continue
			}
			switch o % 3 {
			case 0:
				l.success()
				ref.Success()
			case 1:
				if got, want := l.failure(milli), ref.Failure(); got != want {
					t.Fatalf("cap %d refund %d, outcome %d of %q: failure() = %v, retry.TokenBucket says %v", capArg, refund, i, seq, got, want)
				}
			case 2:
				if got, want := l.take(), ref.Take(); got != want {
					t.Fatalf("cap %d refund %d, outcome %d of %q: take() = %v, retry.TokenBucket says %v", capArg, refund, i, seq, got, want)
				}
			}
		}
		l.clamp()
		allowed := 0
		for range 3 {
			if l.failure(milli) {
				allowed++
			}
		}
		if allowed > 1 {
			t.Fatalf("cap %d: %d retries from the fallback level, want at most 1", capArg, allowed)
		}
	})
}

// TestFallbackLevel: the rule a fleet relies on when Redis goes away. A
// process that never reached Redis gets one retry, and another only after
// its own successes refill its bucket (twenty at the default ratio); one that
// last saw the shared bucket spent gets none; one that saw it full gets
// one, not a full bucket's four.
func TestFallbackLevel(t *testing.T) {
	closed := func(t *testing.T) *Budget {
		b, err := OpenBudget("redis://127.0.0.1:1/0?key=k&connect_timeout=200ms&flush=1h", discard())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	t.Run("never reached", func(t *testing.T) {
		b := closed(t)
		if got := []bool{b.Failure(), b.Failure()}; !got[0] || got[1] {
			t.Fatalf("decisions = %v, want one retry then none", got)
		}
		// 4.001 tokens left: 20 successes make 6.001, one more retry.
		for range 20 {
			b.Success()
		}
		if got := []bool{b.Failure(), b.Failure()}; !got[0] || got[1] {
			t.Fatalf("after 20 successes: decisions = %v, want one retry then none", got)
		}
	})
	for _, tt := range []struct {
		name    string
		used    int // shared failures before Redis goes away
		retries int
	}{{"saw it spent", 5, 0}, {"saw it full", 0, 1}} {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t)
			b := newTestBudget(t, BudgetConfig{Client: s.client(nil), Timeout: 200 * time.Millisecond, ConnectTimeout: 200 * time.Millisecond, FlushInterval: time.Hour, Logger: discard()})
			for range tt.used {
				b.Failure()
			}
			if tt.used == 0 {
				// The warm-up read the full level.
				if got, _ := b.SharedTokens(context.Background()); got != 10 {
					t.Fatalf("SharedTokens = %v, want 10", got)
				}
			}
			s.Kill()
			got := 0
			for range 5 {
				if b.Failure() {
					got++
				}
			}
			if b.Shared() || got != tt.retries {
				t.Errorf("with Redis killed: %d retries allowed (shared %v), want %d, local", got, b.Shared(), tt.retries)
			}
		})
	}
}

// discard is a logger that drops everything.
func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestFallbackSwitchIsCautious: a decision made the moment the Budget
// switches to its local bucket finds the cautious level, not the level it
// last saw in Redis (full here): the one retry of a process deciding
// alone stays one, however its decisions interleave with the switch. (A
// fleet of 30 on a loaded machine once made 31 retries with Redis silent:
// a decision came between the switch and the clamp.)
func TestFallbackSwitchIsCautious(t *testing.T) {
	s := startServer(t)
	b := newTestBudget(t, BudgetConfig{Client: s.client(nil), Timeout: 200 * time.Millisecond, FlushInterval: time.Hour, Logger: discard()})
	if got, _ := b.SharedTokens(context.Background()); got != 10 {
		t.Fatalf("SharedTokens = %v, want 10: a full bucket seen", got)
	}
	var during []bool
	b.switched = func() { during = append(during, b.Failure(), b.Failure()) }
	s.Kill()
	after := b.Failure()
	if !slices.Equal(during, []bool{true, false}) || after {
		t.Errorf("decisions during the switch %v, then %v; want one retry in all: [true false], then false", during, after)
	}
}
