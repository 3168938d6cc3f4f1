package hedge_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/hedge"
	"github.com/again-go/again/retry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	errFlaky = errors.New("flaky")
	errFatal = errors.New("fatal")
)

// reply is what one copy of an attempt does: answer after took with err.
type reply struct {
	took time.Duration
	err  error
}

// server answers copy n of each attempt with replies[n] (the last reply for
// copies beyond), counting the copies started, canceled and running, on
// the synctest clock.
type server struct {
	replies  []reply
	started  atomic.Int32
	canceled atomic.Int32
	running  atomic.Int32
	at       []time.Duration // when each copy started, since begin
	begin    time.Time
	mu       sync.Mutex
}

func newServer(replies ...reply) *server { return &server{replies: replies, begin: time.Now()} }

func (s *server) op(ctx context.Context, n int) (int, error) {
	s.started.Add(1)
	s.running.Add(1)
	defer s.running.Add(-1)
	s.mu.Lock()
	s.at = append(s.at, time.Since(s.begin))
	s.mu.Unlock()
	r := s.replies[min(n, len(s.replies)-1)]
	select {
	case <-time.After(r.took):
		return n, r.err
	case <-ctx.Done():
		s.canceled.Add(1)
		return 0, ctx.Err()
	}
}

func (s *server) starts() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.at...)
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestAttempt(t *testing.T) {
	tests := []struct {
		name      string
		h         *hedge.Hedger
		replies   []reply
		winner    int
		err       error // matched with errors.Is
		hedges    int
		elapsed   time.Duration
		canceled  int32
		startedAt []time.Duration
	}{
		{
			name:    "first answers before the delay: no hedge",
			h:       &hedge.Hedger{After: ms(10)},
			replies: []reply{{took: ms(5)}},
			winner:  0, elapsed: ms(5), startedAt: []time.Duration{0},
		},
		{
			name:    "slow first: the hedge wins and the first is canceled",
			h:       &hedge.Hedger{After: ms(10)},
			replies: []reply{{took: time.Second}, {took: ms(5)}},
			winner:  1, hedges: 1, elapsed: ms(15), canceled: 1, startedAt: []time.Duration{0, ms(10)},
		},
		{
			name:    "the first wins after the hedge was sent: the hedge is canceled",
			h:       &hedge.Hedger{After: ms(10)},
			replies: []reply{{took: ms(12)}, {took: ms(50)}},
			winner:  0, hedges: 1, elapsed: ms(12), canceled: 1, startedAt: []time.Duration{0, ms(10)},
		},
		{
			name:    "hedges follow each other every delay up to MaxHedges",
			h:       &hedge.Hedger{After: ms(10), MaxHedges: 3},
			replies: []reply{{took: time.Second}, {took: time.Second}, {took: time.Second}, {took: ms(1)}},
			winner:  3, hedges: 3, elapsed: ms(31), canceled: 3, startedAt: []time.Duration{0, ms(10), ms(20), ms(30)},
		},
		{
			name:    "a fast retryable failure sends the next hedge at once",
			h:       &hedge.Hedger{After: ms(10), MaxHedges: 2},
			replies: []reply{{took: ms(1), err: errFlaky}, {took: ms(2)}},
			winner:  1, hedges: 1, elapsed: ms(3), startedAt: []time.Duration{0, ms(1)},
		},
		{
			name:    "a permanent failure ends the attempt and cancels the rest",
			h:       &hedge.Hedger{After: ms(10)},
			replies: []reply{{took: time.Second}, {took: ms(5), err: retry.Permanent(errFatal)}},
			winner:  -1, err: errFatal, hedges: 1, elapsed: ms(15), canceled: 1, startedAt: []time.Duration{0, ms(10)},
		},
		{
			name:    "every copy fails: the last error",
			h:       &hedge.Hedger{After: ms(10), MaxHedges: 2},
			replies: []reply{{took: ms(1), err: errFatal}, {took: ms(1), err: errFlaky}},
			winner:  -1, err: errFlaky, hedges: 2, elapsed: ms(3), startedAt: []time.Duration{0, ms(1), ms(2)},
		},
		{
			name:    "pushback stops hedging and is the attempt's error",
			h:       &hedge.Hedger{After: ms(10), MaxHedges: 3},
			replies: []reply{{took: ms(1), err: retry.After(time.Second, errFlaky)}, {took: ms(1), err: errFatal}},
			winner:  -1, err: errFlaky, elapsed: ms(1), startedAt: []time.Duration{0},
		},
		{
			name:    "pushback from a hedge stops the next hedges, the first runs on",
			h:       &hedge.Hedger{After: ms(10), MaxHedges: 3},
			replies: []reply{{took: ms(40)}, {took: ms(1), err: retry.After(time.Second, errFlaky)}},
			winner:  0, hedges: 1, elapsed: ms(40), startedAt: []time.Duration{0, ms(10)},
		},
		{
			// What retryhttp relies on to stop hedging the request's
			// retries: a failed attempt's error is its pushback.
			name:    "pushback from a hedge is the attempt's error, though the first copy fails later",
			h:       &hedge.Hedger{After: ms(10), MaxHedges: 3},
			replies: []reply{{took: ms(40), err: errFatal}, {took: ms(1), err: retry.After(time.Second, errFlaky)}},
			winner:  -1, err: errFlaky, hedges: 1, elapsed: ms(40), startedAt: []time.Duration{0, ms(10)},
		},
		{
			name:    "Allow refusing sends no hedge",
			h:       &hedge.Hedger{After: ms(10), Allow: func(string) bool { return false }},
			replies: []reply{{took: ms(40)}, {took: ms(1)}},
			winner:  0, elapsed: ms(40), startedAt: []time.Duration{0},
		},
		{
			name:    "an empty budget sends no hedge",
			h:       &hedge.Hedger{After: ms(10), Budget: emptyBudget{}},
			replies: []reply{{took: ms(40)}, {took: ms(1)}},
			winner:  0, elapsed: ms(40), startedAt: []time.Duration{0},
		},
		{
			name:    "negative After: never hedged",
			h:       &hedge.Hedger{After: -1},
			replies: []reply{{took: ms(40)}, {took: ms(1)}},
			winner:  0, elapsed: ms(40), startedAt: []time.Duration{0},
		},
		{
			name:    "quantile before the warm-up: not hedged",
			h:       &hedge.Hedger{},
			replies: []reply{{took: ms(40)}, {took: ms(1)}},
			winner:  0, elapsed: ms(40), startedAt: []time.Duration{0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newServer(tt.replies...)
				start := time.Now()
				r := hedge.Attempt(t.Context(), tt.h, hedge.Call[int]{Key: "k", Op: s.op})
				elapsed := time.Since(start)
				if s.running.Load() != 0 {
					t.Errorf("%d copies still running after Attempt returned", s.running.Load())
				}
				if r.Winner != tt.winner || r.Hedges != tt.hedges {
					t.Errorf("winner %d, hedges %d; want %d, %d", r.Winner, r.Hedges, tt.winner, tt.hedges)
				}
				if tt.winner >= 0 && (r.Err != nil || r.Value != tt.winner) {
					t.Errorf("value %d, err %v; want %d, nil", r.Value, r.Err, tt.winner)
				}
				if tt.err != nil && !errors.Is(r.Err, tt.err) {
					t.Errorf("err %v; want %v", r.Err, tt.err)
				}
				if elapsed != tt.elapsed {
					t.Errorf("elapsed %v; want %v", elapsed, tt.elapsed)
				}
				if got := s.canceled.Load(); got != tt.canceled {
					t.Errorf("%d copies canceled; want %d", got, tt.canceled)
				}
				if got := s.starts(); !equal(got, tt.startedAt) {
					t.Errorf("copies started at %v; want %v", got, tt.startedAt)
				}
			})
		})
	}
}

func equal(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

type emptyBudget struct{}

func (emptyBudget) Success()      {}
func (emptyBudget) Failure() bool { return false }

func TestDoComposesWithRetries(t *testing.T) {
	tests := []struct {
		name     string
		p        backoff.Policy
		replies  []reply
		opts     []retry.Option
		reason   error
		attempts int
		started  int32
	}{
		{
			name:    "no retries: every copy failed gives one *retry.Error",
			p:       backoff.Policy{Retries: -1},
			replies: []reply{{took: ms(20), err: errFlaky}, {took: ms(1), err: errFlaky}},
			reason:  retry.ErrExhausted, attempts: 1, started: 2,
		},
		{
			name:    "a permanent failure is ErrPermanent, not retried",
			p:       backoff.Policy{Initial: ms(1), Retries: 3},
			replies: []reply{{took: ms(20)}, {took: ms(1), err: retry.Permanent(errFatal)}},
			reason:  retry.ErrPermanent, attempts: 1, started: 2,
		},
		{
			name:    "the classifier decides what is permanent",
			p:       backoff.Policy{Initial: ms(1), Retries: 3},
			replies: []reply{{took: ms(20)}, {took: ms(1), err: errFatal}},
			opts:    []retry.Option{retry.WithClassifier(func(err error) bool { return !errors.Is(err, errFatal) })},
			reason:  retry.ErrPermanent, attempts: 1, started: 2,
		},
		{
			name:    "retries: each attempt is hedged again",
			p:       backoff.Policy{Initial: ms(1), Retries: 2, Jitter: backoff.NoJitter},
			replies: []reply{{took: ms(1), err: errFlaky}},
			reason:  retry.ErrExhausted, attempts: 3, started: 6,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newServer(tt.replies...)
				h := &hedge.Hedger{After: ms(10)}
				_, err := hedge.Do(t.Context(), tt.p, h, "k", func(ctx context.Context) (int, error) {
					// Copy numbers restart at each attempt: count them here.
					return s.op(ctx, int(s.started.Load())%2)
				}, tt.opts...)
				var re *retry.Error
				if !errors.As(err, &re) || !errors.Is(err, tt.reason) {
					t.Fatalf("err %v; want a *retry.Error with reason %v", err, tt.reason)
				}
				if re.Attempts != tt.attempts || s.started.Load() != tt.started {
					t.Errorf("attempts %d, copies %d; want %d, %d", re.Attempts, s.started.Load(), tt.attempts, tt.started)
				}
			})
		})
	}
}

func TestDoSucceedsWithHedge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newServer(reply{took: time.Second}, reply{took: ms(5)})
		var events []hedge.Event
		h := &hedge.Hedger{After: ms(10), OnHedge: func(e hedge.Event) { events = append(events, e) }}
		v, err := hedge.Do(t.Context(), backoff.Policy{Retries: -1}, h, "db", func(ctx context.Context) (int, error) {
			return s.op(ctx, int(s.started.Load()))
		})
		if err != nil || v != 1 {
			t.Fatalf("Do = %d, %v; want 1, nil (the hedge's)", v, err)
		}
		want := []hedge.Event{
			{Key: "db", Attempt: 1, Hedge: 1, Delay: ms(10)},
			{Key: "db", Attempt: 1, Hedge: 1, Delay: ms(15), Won: true},
		}
		if len(events) != len(want) || events[0] != want[0] || events[1] != want[1] {
			t.Errorf("events %+v; want %+v", events, want)
		}
	})
}

func TestCanceledContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), ms(15))
		defer cancel()
		s := newServer(reply{took: time.Second})
		h := &hedge.Hedger{After: ms(10)}
		_, err := hedge.Do(ctx, backoff.Policy{Retries: 3}, h, "k", func(ctx context.Context) (int, error) {
			return s.op(ctx, 0)
		})
		if !errors.Is(err, retry.ErrCanceled) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err %v; want ErrCanceled and DeadlineExceeded", err)
		}
		if s.started.Load() != 2 || s.canceled.Load() != 2 || s.running.Load() != 0 {
			t.Errorf("started %d canceled %d running %d; want 2, 2, 0", s.started.Load(), s.canceled.Load(), s.running.Load())
		}
	})
}

// A copy that succeeds after another won is discarded, exactly once: a
// response to close must never be lost.
func TestDiscard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var discarded []int
		h := &hedge.Hedger{After: ms(10), MaxHedges: 2}
		r := hedge.Attempt(t.Context(), h, hedge.Call[int]{
			Op: func(ctx context.Context, n int) (int, error) {
				// Every copy ignores cancellation and answers at 25 ms.
				time.Sleep(ms(25) - ms(10*n))
				return n, nil
			},
			Discard: func(v int) { discarded = append(discarded, v) },
		})
		if r.Err != nil || len(discarded) != 2 || discarded[0]+discarded[1]+r.Value != 3 {
			t.Errorf("winner %d, discarded %v; want every other value discarded once", r.Value, discarded)
		}
	})
}

func TestKeepWinner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var winnerCtx context.Context
		h := &hedge.Hedger{After: ms(10)}
		r := hedge.Attempt(t.Context(), h, hedge.Call[int]{
			KeepWinner: true,
			Op: func(ctx context.Context, n int) (int, error) {
				if n == 0 {
					<-ctx.Done()
					return 0, ctx.Err()
				}
				winnerCtx = ctx
				return n, nil
			},
		})
		if r.Winner != 1 || winnerCtx.Err() != nil {
			t.Fatalf("winner %d, its context %v; want 1, alive", r.Winner, winnerCtx.Err())
		}
		r.Release()
		if winnerCtx.Err() == nil {
			t.Error("the winner's context is alive after Release")
		}
	})
}

// The quantile delay waits for the warm-up, is the key's p95, and failures
// do not move it.
func TestQuantileDelay(t *testing.T) {
	// A window of 20 recomputes its quantile at each sample.
	h := &hedge.Hedger{Window: 20, Warmup: 10}
	for i := range 9 {
		h.Observe("a", ms(i+1))
	}
	if _, ok := h.Delay("a"); ok {
		t.Fatal("hedged after 9 samples, before the warm-up of 10")
	}
	h.Observe("a", ms(10))
	if d, ok := h.Delay("a"); !ok || d != ms(10) {
		t.Fatalf("delay after 1..10 ms = %v, %v; want 10ms (p95 of 10 samples)", d, ok)
	}
	for i := range 20 {
		h.Observe("a", ms(i+1))
	}
	if d, _ := h.Delay("a"); d != ms(19) {
		t.Errorf("delay over 1..20 ms = %v; want 19ms", d)
	}
	if _, ok := h.Delay("b"); ok {
		t.Error("key b is hedged on key a's samples")
	}
	synctest.Test(t, func(t *testing.T) {
		// Fast failures through Attempt are not observed.
		for range 50 {
			hedge.Attempt(t.Context(), h, hedge.Call[int]{Key: "a", Op: func(context.Context, int) (int, error) { return 0, retry.Permanent(errFatal) }})
		}
	})
	if d, _ := h.Delay("a"); d != ms(19) {
		t.Errorf("delay after 50 failures = %v; want 19ms still", d)
	}
}

func TestMaxKeys(t *testing.T) {
	h := &hedge.Hedger{Warmup: 1, Window: 10, MaxKeys: 1}
	h.Observe("a", ms(1))
	h.Observe("b", ms(7))
	h.Observe("c", ms(9))
	if d, _ := h.Delay("a"); d != ms(1) {
		t.Errorf("delay of a = %v; want 1ms, its own", d)
	}
	if d, _ := h.Delay("z"); d != ms(9) {
		t.Errorf("delay of an unseen key beyond MaxKeys = %v; want 9ms, the shared window's", d)
	}
}

// However many calls race for the budget, hedges sent never exceed what it
// grants.
func TestBudgetUnderConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &retry.TokenBucket{MaxTokens: 20}
		var sent atomic.Int32
		h := &hedge.Hedger{After: ms(1), Budget: b, OnHedge: func(e hedge.Event) {
			if !e.Won {
				sent.Add(1)
			}
		}}
		var wg sync.WaitGroup
		for range 100 {
			wg.Go(func() {
				hedge.Attempt(t.Context(), h, hedge.Call[int]{Op: func(ctx context.Context, n int) (int, error) {
					select {
					case <-time.After(ms(5)):
						return n, nil
					case <-ctx.Done():
						return 0, ctx.Err()
					}
				}})
			})
		}
		wg.Wait()
		// A full bucket of 20 allows a hedge while more than 10 tokens
		// remain after it: 9, and then what the refunds of 0.1 per success
		// (100 at most) give back.
		if got := sent.Load(); got < 9 || got > 19 {
			t.Errorf("%d hedges sent; want 9..19 from a bucket of 20 tokens", got)
		}
	})
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		h    *hedge.Hedger
		ok   bool
	}{
		{"zero", &hedge.Hedger{}, true},
		{"quantile 1", &hedge.Hedger{Quantile: 1}, false},
		{"negative quantile", &hedge.Hedger{Quantile: -0.5}, false},
		{"warm-up beyond the window", &hedge.Hedger{Window: 10, Warmup: 11}, false},
		{"negative window", &hedge.Hedger{Window: -1}, false},
		{"negative max keys", &hedge.Hedger{MaxKeys: -1}, false},
		{"invalid budget", &hedge.Hedger{Budget: &retry.TokenBucket{MaxTokens: -1}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.h.Validate()
			if (err == nil) != tt.ok {
				t.Fatalf("Validate = %v; want ok %v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, hedge.ErrInvalid) && !errors.Is(err, retry.ErrInvalid) {
				t.Errorf("error %v matches neither hedge.ErrInvalid nor retry.ErrInvalid", err)
			}
			_, derr := hedge.Do(context.Background(), backoff.Policy{}, tt.h, "k", func(context.Context) (int, error) { return 1, nil })
			if (derr == nil) != tt.ok {
				t.Errorf("Do = %v; want ok %v", derr, tt.ok)
			}
		})
	}
}

// Every copy's context is done when Attempt returns, whatever the outcome,
// except the one whose answer is returned under KeepWinner; Failed says
// which copy's error Err is.
func TestContextsEndWithTheAttempt(t *testing.T) {
	for _, keep := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			var mu sync.Mutex
			ctxs := map[int]context.Context{}
			h := &hedge.Hedger{After: ms(10), MaxHedges: 2}
			r := hedge.Attempt(t.Context(), h, hedge.Call[int]{
				KeepWinner: keep,
				Op: func(ctx context.Context, n int) (int, error) {
					mu.Lock()
					ctxs[n] = ctx
					mu.Unlock()
					time.Sleep(ms(1))
					if n == 1 {
						return 0, retry.After(time.Second, errFlaky) // pushback: no third copy
					}
					return 0, errFlaky
				},
			})
			if r.Err == nil || r.Failed != 1 || r.Hedges != 1 || !errors.Is(r.Err, errFlaky) {
				t.Fatalf("keep %v: err %v, failed %d, hedges %d; want the hinted error of copy 1, one hedge", keep, r.Err, r.Failed, r.Hedges)
			}
			for n, ctx := range ctxs {
				if alive := ctx.Err() == nil; alive != (keep && n == r.Failed) {
					t.Errorf("keep %v: copy %d's context alive %v after Attempt", keep, n, alive)
				}
			}
			r.Release()
			if ctxs[1].Err() == nil {
				t.Errorf("keep %v: the kept context is alive after Release", keep)
			}
		})
	}
}

func TestCallAllowAndPushback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &hedge.Hedger{After: ms(10), MaxHedges: 3}
		s := newServer(reply{took: ms(1), err: errFatal}, reply{took: ms(1), err: errFlaky})
		r := hedge.Attempt(t.Context(), h, hedge.Call[int]{Op: s.op, Pushback: func(err error) bool { return errors.Is(err, errFatal) }})
		if r.Hedges != 0 || !errors.Is(r.Err, errFatal) {
			t.Errorf("a custom pushback: %d hedges, err %v; want none after the first copy's pushback", r.Hedges, r.Err)
		}
		s = newServer(reply{took: ms(30)}, reply{took: ms(1)})
		r = hedge.Attempt(t.Context(), h, hedge.Call[int]{Op: s.op, Allow: func() bool { return false }})
		if r.Hedges != 0 || r.Winner != 0 {
			t.Errorf("Call.Allow false: %d hedges, winner %d; want none, the first", r.Hedges, r.Winner)
		}
	})
}

// A hedge that Prepare cannot make is not sent, and it ends neither the
// attempt nor the copies in flight: their result is the attempt's, whether
// the first copy succeeds or fails.
func TestCallPrepareFails(t *testing.T) {
	errBody := errors.New("no body for the hedge")
	tests := []struct {
		name    string
		first   reply
		prepare []int // the hedges Prepare is asked for
		winner  int
		err     error
	}{
		{"the first copy succeeds after the delay", reply{took: ms(30)}, []int{1}, 0, nil},
		{"the first copy fails after the delay", reply{took: ms(30), err: errFatal}, []int{1}, -1, errFatal},
		// A retryable failure asks for a hedge at once: none can be made,
		// and the failure is the attempt's.
		{"the first copy fails before the delay", reply{took: ms(1), err: errFlaky}, []int{1}, -1, errFlaky},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := &hedge.Hedger{After: ms(10), MaxHedges: 3}
				s := newServer(tt.first, reply{took: ms(1)})
				var asked []int
				prepare := func(n int) error { asked = append(asked, n); return errBody }
				r := hedge.Attempt(t.Context(), h, hedge.Call[int]{Op: s.op, Prepare: prepare})
				if r.Winner != tt.winner || !errors.Is(r.Err, tt.err) || (tt.err == nil) != (r.Err == nil) {
					t.Errorf("winner %d, err %v; want winner %d, err %v", r.Winner, r.Err, tt.winner, tt.err)
				}
				if r.Hedges != 0 || s.started.Load() != 1 || s.canceled.Load() != 0 {
					t.Errorf("%d hedges, %d copies started, %d canceled; want the first copy alone, not canceled", r.Hedges, s.started.Load(), s.canceled.Load())
				}
				if !slices.Equal(asked, tt.prepare) {
					t.Errorf("Prepare asked for hedges %v; want %v (once: hedging stops)", asked, tt.prepare)
				}
			})
		})
	}
}

// Call.Postpone delays the next hedge after a failure that asks for it (a
// gRPC pushback), and hedging goes on: a delay apart again after that.
func TestCallPostpone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &hedge.Hedger{After: ms(10), MaxHedges: 3}
		s := newServer(reply{took: ms(100)}, reply{took: ms(1), err: errFlaky}, reply{took: ms(50)}, reply{took: ms(1)})
		postpone := func(err error) (time.Duration, bool) { return ms(30), errors.Is(err, errFlaky) }
		r := hedge.Attempt(t.Context(), h, hedge.Call[int]{Op: s.op, Postpone: postpone})
		// Copy 1 is sent at 10 ms and fails at 11; copy 2 follows 30 ms
		// later, copy 3 a delay after that, and wins.
		if want := []time.Duration{0, ms(10), ms(41), ms(51)}; !equal(s.starts(), want) || r.Winner != 3 || r.Hedges != 3 {
			t.Errorf("copies started at %v, winner %d after %d hedges; want %v, winner 3 after 3", s.starts(), r.Winner, r.Hedges, want)
		}
	})
}

// A context an Op derives from its copy's is canceled with it (through the
// copy context's AfterFunc, with no goroutine of its own), and the
// caller's cancellation reaches every copy, with the caller's error.
func TestDerivedContexts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &hedge.Hedger{After: ms(10)}
		var errs [2]error
		r := hedge.Attempt(t.Context(), h, hedge.Call[int]{Op: func(ctx context.Context, n int) (int, error) {
			if n == 1 {
				return n, nil
			}
			child, cancel := context.WithTimeout(ctx, time.Hour)
			defer cancel()
			<-child.Done()
			errs[n] = child.Err()
			return 0, ctx.Err()
		}})
		if r.Winner != 1 || !errors.Is(errs[0], context.Canceled) {
			t.Errorf("winner %d, the loser's derived context ended with %v; want 1, context.Canceled", r.Winner, errs[0])
		}

		ctx, cancel := context.WithTimeout(t.Context(), ms(15))
		defer cancel()
		var mu sync.Mutex
		var got []error
		r = hedge.Attempt(ctx, h, hedge.Call[int]{Op: func(ctx context.Context, n int) (int, error) {
			child, cancel := context.WithCancel(ctx)
			defer cancel()
			<-child.Done()
			mu.Lock()
			got = append(got, child.Err(), ctx.Err())
			mu.Unlock()
			return 0, ctx.Err()
		}})
		if len(got) != 4 {
			t.Fatalf("%d copies answered; want 2", len(got)/2)
		}
		for _, err := range got {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("a copy's context ended with %v; want the caller's DeadlineExceeded", err)
			}
		}
		if !errors.Is(r.Err, context.DeadlineExceeded) {
			t.Errorf("err %v; want DeadlineExceeded", r.Err)
		}
	})
}

// A kept context outlives the attempt, and so the end of the caller's
// context must still reach it; it is done after Release, and a second
// Release, after another attempt, leaves that attempt alone.
func TestKeptContextFollowsItsParent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &hedge.Hedger{After: ms(10)}
		ctx, cancel := context.WithCancel(t.Context())
		var kept context.Context
		r := hedge.Attempt(ctx, h, hedge.Call[int]{KeepWinner: true, Op: func(ctx context.Context, n int) (int, error) {
			kept = ctx
			return n, nil
		}})
		if kept.Err() != nil {
			t.Fatalf("the kept context ended with the attempt: %v", kept.Err())
		}
		cancel()
		synctest.Wait()
		if !errors.Is(kept.Err(), context.Canceled) {
			t.Errorf("the kept context's Err after its parent was canceled = %v; want context.Canceled", kept.Err())
		}
		r.Release()

		var next context.Context
		r2 := hedge.Attempt(t.Context(), h, hedge.Call[int]{KeepWinner: true, Op: func(ctx context.Context, n int) (int, error) {
			next = ctx
			return n, nil
		}})
		r.Release() // stale: must not end the next attempt's context
		if next.Err() != nil {
			t.Errorf("a second Release ended another attempt's context: %v", next.Err())
		}
		r2.Release()
		if next.Err() == nil {
			t.Error("the kept context is alive after its Release")
		}
	})
}

// A copy that has Answered is not canceled when another wins (it finishes
// what it was reading, as an HTTP loser drains its body), though the end
// of the caller's context still reaches it; outside a copy Answered does
// nothing.
func TestAnswered(t *testing.T) {
	hedge.Answered(context.Background())
	synctest.Test(t, func(t *testing.T) {
		h := &hedge.Hedger{After: ms(10)}
		var loserErr error
		var discarded []int
		r := hedge.Attempt(t.Context(), h, hedge.Call[int]{
			Op: func(ctx context.Context, n int) (int, error) {
				if n == 1 {
					return n, nil // wins at 10 ms
				}
				time.Sleep(ms(5))
				child, cancel := context.WithCancel(ctx)
				defer cancel()
				hedge.Answered(child) // found through a derived context
				time.Sleep(ms(20))    // "drains" past the hedge's win
				loserErr = ctx.Err()
				return n, nil
			},
			Discard: func(v int) { discarded = append(discarded, v) },
		})
		if r.Winner != 1 || loserErr != nil || len(discarded) != 1 {
			t.Errorf("winner %d, the answered loser's ctx.Err %v, discarded %v; want 1, nil, [0]", r.Winner, loserErr, discarded)
		}

		ctx, cancel := context.WithTimeout(t.Context(), ms(15))
		defer cancel()
		r = hedge.Attempt(ctx, h, hedge.Call[int]{Op: func(ctx context.Context, n int) (int, error) {
			hedge.Answered(ctx)
			<-ctx.Done()
			return 0, ctx.Err()
		}})
		if !errors.Is(r.Err, context.DeadlineExceeded) {
			t.Errorf("answered copies after the caller's deadline: err %v; want DeadlineExceeded", r.Err)
		}
	})
}

// Under KeepWinner a loser that has Answered keeps its context past the
// attempt, for the caller to finish with its answer, until Release.
func TestAnsweredKeptUntilRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &hedge.Hedger{After: ms(10)}
		var loser context.Context
		r := hedge.Attempt(t.Context(), h, hedge.Call[int]{
			KeepWinner: true,
			Op: func(ctx context.Context, n int) (int, error) {
				if n == 1 {
					return n, nil
				}
				loser = ctx
				hedge.Answered(ctx)
				time.Sleep(ms(20))
				return 0, errFlaky
			},
		})
		if r.Winner != 1 || loser.Err() != nil {
			t.Fatalf("winner %d, the answered loser's context %v after Attempt; want 1, alive", r.Winner, loser.Err())
		}
		r.Release()
		if loser.Err() == nil {
			t.Error("the answered loser's context is alive after Release")
		}
	})
}

// goroutineID returns the calling goroutine's number, from its stack
// trace's first line ("goroutine 7 [running]:").
func goroutineID() string {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	return strings.Fields(string(b))[1]
}

// The first copy runs on the calling goroutine, whether it answers before
// the delay (no goroutine is started at all) or after it (the hedge timer's
// goroutine then coordinates while it runs on); hedges run on goroutines of
// their own.
func TestFirstCopyOnCallingGoroutine(t *testing.T) {
	for _, took := range []time.Duration{ms(5), ms(50)} {
		t.Run(fmt.Sprintf("first copy answers after %v, delay 20ms", took), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				caller := goroutineID()
				var mu sync.Mutex
				ran := map[int]string{}
				op := func(ctx context.Context, n int) (int, error) {
					mu.Lock()
					ran[n] = goroutineID()
					mu.Unlock()
					if n == 0 {
						select {
						case <-time.After(took):
						case <-ctx.Done():
							return 0, ctx.Err()
						}
					} else {
						<-ctx.Done() // the first copy wins
						return 0, ctx.Err()
					}
					return n, nil
				}
				before := runtime.NumGoroutine()
				var during int
				h := &hedge.Hedger{After: ms(20)}
				r := hedge.Attempt(t.Context(), h, hedge.Call[int]{Op: func(ctx context.Context, n int) (int, error) {
					if n == 0 && took < ms(20) {
						during = runtime.NumGoroutine()
					}
					return op(ctx, n)
				}})
				if r.Winner != 0 || ran[0] != caller {
					t.Errorf("winner %d, first copy on goroutine %s; want the first, on the caller's (%s)", r.Winner, ran[0], caller)
				}
				if took < ms(20) && (during != before || len(ran) != 1) {
					t.Errorf("%d goroutines while the first copy ran, %d before, %d copies; want no goroutine started, one copy", during, before, len(ran))
				}
				if took > ms(20) && (len(ran) != 2 || ran[1] == caller) {
					t.Errorf("copies ran on %v; want the hedge on a goroutine of its own", ran)
				}
			})
		})
	}
}

// The first copy's context follows the caller's before the delay, while
// nothing else watches it: through Done and through Err alike.
func TestFirstCopyFollowsParent(t *testing.T) {
	ops := map[string]func(ctx context.Context, n int) (int, error){
		"Done": func(ctx context.Context, n int) (int, error) {
			<-ctx.Done()
			return 0, ctx.Err()
		},
		"Err": func(ctx context.Context, n int) (int, error) {
			for ctx.Err() == nil {
				time.Sleep(time.Millisecond)
			}
			return 0, ctx.Err()
		},
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				time.AfterFunc(ms(10), cancel)
				start := time.Now()
				r := hedge.Attempt(ctx, &hedge.Hedger{After: time.Hour}, hedge.Call[int]{Op: op})
				if !errors.Is(r.Err, context.Canceled) || r.Failed != 0 || time.Since(start) > ms(11) {
					t.Errorf("Err %v of copy %d after %v; want context.Canceled of the first, after 10ms", r.Err, r.Failed, time.Since(start))
				}
			})
		})
	}
}

// Do meets a deadline as retry's loop does: a wait that would end past it
// is shortened so that one more attempt starts backoff.DeadlineReserve
// before it, rather than the call giving up a whole wait early.
func TestDoRetriesUntilTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		h := &hedge.Hedger{After: ms(10)}
		// The first wait, 5 s, ends long after the deadline.
		p := backoff.Policy{Initial: 5 * time.Second, Retries: backoff.UntilDeadline, Jitter: backoff.NoJitter}
		v, err := hedge.Do(ctx, p, h, "k", func(ctx context.Context) (int, error) {
			if time.Since(start) < 500*time.Millisecond {
				return 0, errFlaky
			}
			return 1, nil
		})
		if err != nil || v != 1 {
			t.Fatalf("Do = %d, %v; want 1, nil: the dependency is back before the deadline", v, err)
		}
		if got, want := time.Since(start), time.Second-backoff.DeadlineReserve; got != want {
			t.Errorf("Do returned after %v, want %v: one wait, shortened to leave the reserve", got, want)
		}
	})
}
