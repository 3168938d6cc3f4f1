package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/again-go/again/hedge"
	"github.com/redis/go-redis/v9"
)

// TestConfigRejected: NewBudget and NewBreakerStore reject each bad field
// with an ErrInvalid naming it and what is accepted.
func TestConfigRejected(t *testing.T) {
	good := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer good.Close()
	noCtx := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer noCtx.Close()
	budget := func(cfg BudgetConfig) func() error {
		return func() error {
			b, err := NewBudget(cfg)
			if err == nil {
				b.Close()
			}
			return err
		}
	}
	store := func(cfg BreakerStoreConfig) func() error {
		return func() error {
			_, err := NewBreakerStore(cfg)
			return err
		}
	}
	tests := []struct {
		name string
		new  func() error
		want string
	}{
		{"no client", budget(BudgetConfig{Key: "k"}), "BudgetConfig.Client must be a Redis client, got nil"},
		{"no context timeouts", budget(BudgetConfig{Client: noCtx, Key: "k"}), "ContextTimeoutEnabled"},
		{"empty key", budget(BudgetConfig{Client: good}), `BudgetConfig.Key must be a non-empty name without '{' or '}', got ""`},
		{"brace in key", budget(BudgetConfig{Client: good, Key: "a{b"}), `got "a{b"`},
		{"negative MaxTokens", budget(BudgetConfig{Client: good, Key: "k", MaxTokens: -1}), "BudgetConfig.MaxTokens must be a finite number > 0, or 0 for the default 10, got -1"},
		{"NaN TokenRatio", budget(BudgetConfig{Client: good, Key: "k", TokenRatio: nan()}), "BudgetConfig.TokenRatio must be a finite number > 0"},
		{"negative Timeout", budget(BudgetConfig{Client: good, Key: "k", Timeout: -time.Second}), "BudgetConfig.Timeout must be > 0, or 0 for the default 50ms, got -1s"},
		{"negative FlushInterval", budget(BudgetConfig{Client: good, Key: "k", FlushInterval: -1}), "BudgetConfig.FlushInterval must be > 0"},
		{"store without client", store(BreakerStoreConfig{Key: "k"}), "BreakerStoreConfig.Client must be a Redis client, got nil"},
		{"store without context timeouts", store(BreakerStoreConfig{Client: noCtx, Key: "k"}), "ContextTimeoutEnabled"},
		{"store with empty key", store(BreakerStoreConfig{Client: good}), `BreakerStoreConfig.Key must be a non-empty name without '{' or '}', got ""`},
		{"store with negative Timeout", store(BreakerStoreConfig{Client: good, Key: "k", Timeout: -1}), "BreakerStoreConfig.Timeout must be > 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.new()
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want ErrInvalid containing %q", err, tt.want)
			}
		})
	}
}

func nan() float64 { var z float64; return z / z }

// newTestBudget makes a Budget on c, closed at the end of the test.
func newTestBudget(t *testing.T, cfg BudgetConfig) *Budget {
	t.Helper()
	if cfg.Key == "" {
		cfg.Key = t.Name()
	}
	b, err := NewBudget(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	<-b.warm // so that round trips are counted from a known state
	return b
}

// TestSharedMatchesLocal checks the shared bucket decides exactly as the
// local one (gRPC A6, and retry.TokenBucket.Take for takes) on the same
// sequence of successes (S), failures (F) and takes (T), in one process.
func TestSharedMatchesLocal(t *testing.T) {
	s := startServer(t)
	seqs := map[string]string{
		// 12 failures drain it, then successes and failures interleave.
		"failures": strings.Repeat("F", 12) + strings.Repeat("S", 7) + "FFSFSSSSSSFFFSSSSSSSSSSSSSSSSSSSSSFFFFF",
		// Takes stop at half the tokens and refused ones cost nothing:
		// the successes after them refill the bucket.
		"takes":     strings.Repeat("T", 12) + strings.Repeat("S", 7) + "TTSTSSSSSSTTTSSSSSSSSSSSSSSSSSSSSSTTTTT",
		"both":      "TTFTFTTFFFFTTSSSSSSSSSSTFTFSSSSSSSSSSSSSSSSSSSSTTTTFFFFTTTT",
		"refills":   "FFFFFFTTTT" + strings.Repeat("S", 30) + "TTTT",
		"takesOnly": strings.Repeat("T", 40),
	}
	for name, seq := range seqs {
		for _, ratio := range []float64{0, 0.5, 1} {
			c := s.client(nil)
			b := newTestBudget(t, BudgetConfig{Client: c, Key: "match", MaxTokens: 6, TokenRatio: ratio, Timeout: time.Second, FlushInterval: time.Hour})
			ref := newLocal(6, ratio)
			for i, o := range seq {
				var got, want bool
				switch o {
				case 'S':
					b.Success()
					ref.Success()
					continue
				case 'F':
					got, want = b.Failure(), ref.Failure()
				case 'T':
					got, want = b.Take(), ref.Take()
				}
				if got != want {
					t.Fatalf("%s, ratio %v: outcome %d (%s): %c = %v, want %v as retry.TokenBucket", name, ratio, i, seq[:i+1], o, got, want)
				}
			}
			if !b.Shared() {
				t.Fatalf("%s, ratio %v: Shared() = false: decisions fell back to the local bucket", name, ratio)
			}
			c.Del(context.Background(), "again:{match}:budget")
		}
	}
}

// TestRoundTrips checks the costs a caller relies on: successes cost no
// round trip at call time and one per flush; a decision costs one.
func TestRoundTrips(t *testing.T) {
	s := startServer(t)
	var rt atomic.Int64
	b := newTestBudget(t, BudgetConfig{Client: s.client(&rt), FlushInterval: time.Hour, Timeout: time.Second})
	rt.Store(0) // the warm-up's
	for range 1000 {
		b.Success()
	}
	if n := rt.Load(); n != 0 {
		t.Errorf("1000 Success calls made %d round trips, want 0", n)
	}
	// The warm-up connected and loaded the script: the first decision is
	// one round trip, as the others.
	rt.Store(0)
	for i := range 5 {
		b.Failure()
		if n := rt.Load(); n != int64(i+1) {
			t.Fatalf("after %d Failure calls: %d round trips, want %d", i+1, n, i+1)
		}
	}
	rt.Store(0)
	for range 10 {
		b.Success()
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if n := rt.Load(); n != 1 {
		t.Errorf("Close with 10 pending successes made %d round trips, want 1", n)
	}
}

// TestFlushesPeriodically checks successes reach Redis without any
// Failure or Close, on the flushing goroutine.
func TestFlushesPeriodically(t *testing.T) {
	s := startServer(t)
	c := s.client(nil)
	b := newTestBudget(t, BudgetConfig{Client: c, FlushInterval: 10 * time.Millisecond, Timeout: time.Second})
	for range 6 {
		b.Failure()
	}
	tok := func() float64 {
		v, err := b.SharedTokens(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if got := tok(); got != 4 {
		t.Fatalf("after 6 failures SharedTokens = %v, want 4", got)
	}
	for range 10 {
		b.Success()
	}
	eventually(t, "5 tokens after 10 successes are flushed", func() bool { return tok() == 5 })
	for range 100 {
		b.Success()
	}
	eventually(t, "the key deleted once the bucket is full", func() bool {
		return c.Exists(context.Background(), "again:{"+t.Name()+"}:budget").Val() == 0
	})
}

// TestTinyRatioRefunds checks a TokenRatio below the bucket's precision
// refunds a thousandth per success, as the local bucket does, not nothing.
func TestTinyRatioRefunds(t *testing.T) {
	s := startServer(t)
	c := s.client(nil)
	b := newTestBudget(t, BudgetConfig{Client: c, TokenRatio: 0.0001, FlushInterval: 10 * time.Millisecond, Timeout: time.Second})
	ref := newLocal(0, 0.0001)
	for range 6 {
		b.Failure()
		ref.Failure()
	}
	for range 500 {
		b.Success()
		ref.Success()
	}
	want := ref.Tokens() // 4.5
	eventually(t, fmt.Sprintf("%v tokens, as the local bucket, after 500 successes", want), func() bool {
		v, err := b.SharedTokens(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return v == want
	})
}

// TestScriptReloaded checks a script missing after a failover (SCRIPT
// FLUSH) is loaded again without falling back.
func TestScriptReloaded(t *testing.T) {
	s := startServer(t)
	var rt atomic.Int64
	c := s.client(&rt)
	b := newTestBudget(t, BudgetConfig{Client: c, Timeout: time.Second, FlushInterval: time.Hour})
	b.Failure()
	if err := c.ScriptFlush(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	rt.Store(0)
	if !b.Failure() {
		t.Error("second failure of 10 tokens: Failure() = false, want true")
	}
	if !b.Shared() {
		t.Error("after SCRIPT FLUSH the Budget fell back to the local bucket, want the script reloaded")
	}
	if n := rt.Load(); n != 2 {
		t.Errorf("a decision after SCRIPT FLUSH made %d round trips, want 2 (EVALSHA, EVAL)", n)
	}
	if got, _ := b.SharedTokens(context.Background()); got != 8 {
		t.Errorf("SharedTokens = %v, want 8", got)
	}
}

// TestConcurrentDecisions: decisions that share round trips allow exactly
// what one-by-one decisions allow, for failures of one token (Failure) and
// of a class's cost (FailureCost).
func TestConcurrentDecisions(t *testing.T) {
	s := startServer(t)
	for _, tt := range []struct {
		name    string
		cost    float64
		allowed int64 // on 100 tokens: down to more than 50 left
	}{{"Failure", 1, 49}, {"FailureCost(2.5)", 2.5, 19}} {
		var rt atomic.Int64
		b := newTestBudget(t, BudgetConfig{Client: s.client(&rt), Key: tt.name, MaxTokens: 100, Timeout: 5 * time.Second, FlushInterval: time.Hour})
		fail := b.Failure
		if tt.cost != 1 {
			fail = func() bool { return b.FailureCost(tt.cost) }
		}
		const goroutines, each = 64, 20
		var allowed atomic.Int64
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				for range each {
					if fail() {
						allowed.Add(1)
					}
				}
			})
		}
		wg.Wait()
		if got := allowed.Load(); got != tt.allowed {
			t.Errorf("%d concurrent %s on 100 tokens: %d allowed, want %d", goroutines*each, tt.name, got, tt.allowed)
		}
		if !b.Shared() {
			t.Errorf("%s: Shared() = false: some decisions fell back", tt.name)
		}
		if got, _ := b.SharedTokens(context.Background()); got != 0 {
			t.Errorf("%s: SharedTokens = %v after %d failures, want 0", tt.name, got, goroutines*each)
		}
		t.Logf("%s: %d decisions in %d round trips", tt.name, goroutines*each, rt.Load())
	}
}

// TestConcurrentTakes: takes and failures that share round trips allow
// exactly what one-by-one decisions allow, and refused takes cost nothing.
func TestConcurrentTakes(t *testing.T) {
	s := startServer(t)
	var rt atomic.Int64
	b := newTestBudget(t, BudgetConfig{Client: s.client(&rt), MaxTokens: 100, Timeout: 5 * time.Second, FlushInterval: time.Hour})
	const goroutines, each = 64, 20
	var taken atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				if b.Take() {
					taken.Add(1)
				}
			}
		})
	}
	wg.Wait()
	// 100 tokens: a take is allowed while more than 50 remain after it.
	if got := taken.Load(); got != 49 {
		t.Errorf("%d concurrent takes on 100 tokens: %d taken, want 49", goroutines*each, got)
	}
	if got, _ := b.SharedTokens(context.Background()); got != 51 {
		t.Errorf("SharedTokens = %v after the takes, want 51: a refused take costs nothing", got)
	}
	// Failures and takes at once: the failures drain the bucket whatever
	// the takes get, and no take goes below half.
	taken.Store(0)
	for i := range goroutines {
		wg.Go(func() {
			for range each {
				if i%2 == 0 {
					b.Failure()
				} else if b.Take() {
					taken.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if got := taken.Load(); got != 0 {
		t.Errorf("%d takes from a bucket at 51 tokens while failures drain it: want 0 (none below half)", got)
	}
	if got, _ := b.SharedTokens(context.Background()); got != 0 {
		t.Errorf("SharedTokens = %v after %d failures, want 0", got, goroutines/2*each)
	}
	if !b.Shared() {
		t.Error("Shared() = false: some decisions fell back")
	}
	t.Logf("%d decisions in %d round trips", 2*goroutines*each, rt.Load())
}

// TestHedgesTakeSharedTokens: a Hedger whose Budget is a fleet Budget
// spends it with Take, as it spends a retry.TokenBucket: granted hedges
// take a token each, refused ones nothing, and the hedged attempts'
// successes refill it. Each attempt's first copy fails fast, which asks for
// a hedge at once (no timer involved); the hedge succeeds if sent.
func TestHedgesTakeSharedTokens(t *testing.T) {
	s := startServer(t)
	b := newTestBudget(t, BudgetConfig{Client: s.client(nil), Timeout: 5 * time.Second, FlushInterval: time.Hour})
	h := &hedge.Hedger{After: time.Hour, Budget: b}
	ref := newLocal(10, 0.1)
	errSlow := errors.New("first copy failed fast")
	sent := 0
	for i := range 30 {
		r := hedge.Attempt(context.Background(), h, hedge.Call[int]{Op: func(_ context.Context, n int) (int, error) {
			if n == 0 {
				return 0, errSlow
			}
			return n, nil
		}})
		want := ref.Take()
		if want {
			ref.Success()
		}
		if got := r.Hedges == 1; got != want {
			t.Fatalf("attempt %d: hedge sent = %v, want %v as with a retry.TokenBucket", i, got, want)
		}
		if want && (r.Err != nil || r.Winner != 1) {
			t.Fatalf("attempt %d: %+v; want the hedge to win", i, r)
		}
		sent += r.Hedges
	}
	if sent == 0 || sent == 30 {
		t.Fatalf("%d hedges of 30: the budget should grant some and refuse some", sent)
	}
	b.Failure() // sends the pending successes
	ref.Failure()
	if got, want := mustTokens(t, b), ref.Tokens(); got != want {
		t.Errorf("SharedTokens = %v, want %v as the reference bucket", got, want)
	}
}

func mustTokens(t *testing.T, b *Budget) float64 {
	t.Helper()
	v, err := b.SharedTokens(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v
}
