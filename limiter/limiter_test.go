package limiter

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker/breakertest"
	"github.com/again-go/again/retry"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// checkIdle fails t unless l holds no permit and no waiter: nothing leaked.
func checkIdle(t *testing.T, l *Limiter) {
	t.Helper()
	if s := l.Snapshot(); s.InFlight != 0 || s.Waiting != 0 {
		t.Errorf("after every call ended: %d in flight, %d waiting; want 0 and 0", s.InFlight, s.Waiting)
	}
}

func TestFixedRefusesBeyondLimit(t *testing.T) {
	ctx := context.Background()
	l := mustNew(t, Config{Limit: 2})
	p1, err1 := l.Acquire(ctx)
	p2, err2 := l.Acquire(ctx)
	if err1 != nil || err2 != nil {
		t.Fatalf("Acquire under the limit of 2 = %v, %v; want nil, nil", err1, err2)
	}
	_, err := l.Acquire(ctx)
	var le *LimitError
	if !errors.Is(err, ErrLimited) || !errors.As(err, &le) || le.Limit != 2 || le.InFlight != 2 || le.Waited != 0 {
		t.Fatalf("third Acquire = %v, want a *LimitError{Limit: 2, InFlight: 2} matching ErrLimited", err)
	}
	if got, want := err.Error(), "limiter: concurrency limit reached (2 of 2 in flight)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !retry.IsRejected(err) || !retry.IsPermanent(err) || retry.IsOverload(err) {
		t.Errorf("IsRejected, IsPermanent, IsOverload = %v, %v, %v; want true, true, false (a local refusal)",
			retry.IsRejected(err), retry.IsPermanent(err), retry.IsOverload(err))
	}
	p1.Done(Success)
	p1.Done(Success) // a second Done gives nothing back
	p3, err := l.Acquire(ctx)
	if err != nil {
		t.Fatalf("Acquire after a Done = %v, want nil", err)
	}
	if _, err := l.Acquire(ctx); err == nil {
		t.Fatal("Acquire with 2 permits out after a double Done = nil, want a refusal: Done gave back twice")
	}
	p2.Release()
	p3.Release()
	checkIdle(t, l)
	if s := l.Snapshot(); s.Refused != 2 || s.Limit != 2 {
		t.Errorf("Snapshot() = %+v, want Limit 2, Refused 2", s)
	}
}

func TestZeroLimiter(t *testing.T) {
	var l Limiter
	var ps []Permit
	for range DefaultLimit {
		p, err := l.Acquire(context.Background())
		if err != nil {
			t.Fatalf("zero Limiter: Acquire = %v, want nil for the first %d", err, DefaultLimit)
		}
		ps = append(ps, p)
	}
	if _, err := l.Acquire(context.Background()); !errors.Is(err, ErrLimited) {
		t.Errorf("zero Limiter: Acquire number %d = %v, want ErrLimited", DefaultLimit+1, err)
	}
	for i := range ps {
		ps[i].Release()
	}
	checkIdle(t, &l)
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		cfg   Config
		field string
	}{
		{Config{Limit: -1}, "Config.Limit"},
		{Config{Limit: 3, Algorithm: AIMD{}}, "Config.Limit"},
		{Config{Algorithm: AIMD{Backoff: 1}}, "AIMD.Backoff"},
		{Config{Algorithm: AIMD{Min: 50, Max: 40}}, "AIMD.Max"},
		{Config{Algorithm: AIMD{Initial: 300}}, "AIMD.Initial"},
		{Config{Algorithm: Vegas{Smoothing: 2}}, "Vegas.Smoothing"},
		{Config{Algorithm: Vegas{MaxDrift: 0.5}}, "Vegas.MaxDrift"},
		{Config{Algorithm: Gradient2{Tolerance: 0.9}}, "Gradient2.Tolerance"},
		{Config{Algorithm: Gradient2{LongWindow: -1}}, "Gradient2.LongWindow"},
		{Config{Algorithm: Gradient2{Min: 1, Initial: 0, Max: 10}}, ""}, // Initial 20 is capped at Max
		{Config{Algorithm: Gradient2{ProbeSamples: -1}}, "Gradient2.ProbeSamples"},
		{Config{Algorithm: Vegas{}, SampleEvery: 12}, "Config.SampleEvery"},
		{Config{Algorithm: Vegas{}, SampleEvery: -1}, "Config.SampleEvery"},
		{Config{Algorithm: Vegas{}, SampleEvery: 2048}, "Config.SampleEvery"},
		{Config{Algorithm: Vegas{}, SampleEvery: 1024}, ""},
		{Config{Algorithm: Vegas{}, SampleEvery: 1}, ""},
	} {
		err := c.cfg.Validate()
		var fe *FieldError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("Validate(%+v) = %v, want nil", c.cfg, err)
		case c.field != "" && (!errors.Is(err, ErrInvalid) || !errors.As(err, &fe) || fe.Field != c.field):
			t.Errorf("Validate(%+v) = %v, want a *FieldError for %s matching ErrInvalid", c.cfg, err, c.field)
		}
		if _, nerr := New(c.cfg); (nerr == nil) != (err == nil) {
			t.Errorf("New(%+v) = %v, want Validate's %v", c.cfg, nerr, err)
		}
	}
}

func TestWaitGranted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := mustNew(t, Config{Limit: 1, MaxWait: time.Second})
		p, _ := l.Acquire(t.Context())
		done := make(chan error)
		go func() {
			q, err := l.Acquire(t.Context())
			q.Release()
			done <- err
		}()
		synctest.Wait()
		if s := l.Snapshot(); s.Waiting != 1 {
			t.Fatalf("Snapshot().Waiting with one call blocked = %d, want 1", s.Waiting)
		}
		time.Sleep(300 * time.Millisecond)
		p.Done(Success)
		if err := <-done; err != nil {
			t.Fatalf("waiting Acquire after a Done within MaxWait = %v, want nil", err)
		}
		checkIdle(t, l)
		if s := l.Snapshot(); s.Queued != 1 || s.Refused != 0 {
			t.Errorf("Snapshot() = %+v, want Queued 1, Refused 0", s)
		}
	})
}

func TestWaitBounds(t *testing.T) {
	for _, c := range []struct {
		name     string
		cfg      Config
		deadline time.Duration // 0: none
		cancel   time.Duration // 0: never
		waited   time.Duration
		ctxErr   bool
	}{
		{"MaxWait", Config{Limit: 1, MaxWait: time.Second}, 0, 0, time.Second, false},
		{"deadline before MaxWait", Config{Limit: 1, MaxWait: time.Second}, 400 * time.Millisecond, 0, 400 * time.Millisecond, true},
		{"canceled", Config{Limit: 1, MaxWait: time.Second}, 0, 200 * time.Millisecond, 200 * time.Millisecond, true},
		{"no wait", Config{Limit: 1}, 0, 0, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := mustNew(t, c.cfg)
				p, _ := l.Acquire(t.Context())
				defer p.Release()
				ctx := t.Context()
				if c.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, c.deadline)
					defer cancel()
				}
				if c.cancel > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithCancel(ctx)
					time.AfterFunc(c.cancel, cancel)
				}
				start := time.Now()
				_, err := l.Acquire(ctx)
				if took := time.Since(start); took != c.waited {
					t.Errorf("Acquire waited %v, want %v", took, c.waited)
				}
				switch {
				case c.ctxErr && !errors.Is(err, ctx.Err()):
					t.Errorf("Acquire = %v, want the context's error", err)
				case !c.ctxErr && !errors.Is(err, ErrLimited):
					t.Errorf("Acquire = %v, want ErrLimited", err)
				}
				if s := l.Snapshot(); s.Waiting != 0 {
					t.Errorf("Waiting after the wait ended = %d, want 0", s.Waiting)
				}
			})
		})
	}
}

func TestMaxWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := mustNew(t, Config{Limit: 1, MaxWait: time.Second, MaxWaiting: 2})
		p, _ := l.Acquire(t.Context())
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range 2 {
			wg.Go(func() {
				q, err := l.Acquire(t.Context())
				errs[i] = err
				q.Done(Success)
			})
		}
		synctest.Wait()
		start := time.Now()
		_, err := l.Acquire(t.Context())
		if !errors.Is(err, ErrLimited) || time.Since(start) != 0 {
			t.Errorf("Acquire with MaxWaiting 2 calls waiting = %v after %v, want ErrLimited at once", err, time.Since(start))
		}
		p.Done(Success)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("waiting call %d: Acquire = %v, want nil (handed on)", i, err)
			}
		}
		checkIdle(t, l)
	})
}

func TestPermitNeverLeaked(t *testing.T) {
	// Panicking callers, canceled waiters and many goroutines: the permits
	// in use return to zero.
	synctest.Test(t, func(t *testing.T) {
		l := mustNew(t, Config{Limit: 3, MaxWait: 50 * time.Millisecond})
		var wg sync.WaitGroup
		for i := range 40 {
			wg.Go(func() {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if i%5 == 0 {
					time.AfterFunc(10*time.Millisecond, cancel)
				}
				defer func() { _ = recover() }()
				p, err := l.Acquire(ctx)
				if err != nil {
					return
				}
				defer p.Release()
				time.Sleep(time.Duration(i%7) * 10 * time.Millisecond)
				if i%3 == 0 {
					panic("caller panics holding a permit")
				}
				p.Done(Success)
			})
		}
		wg.Wait()
		checkIdle(t, l)
	})
}

func TestAdaptiveLimitMoves(t *testing.T) {
	// A Limiter feeds each Done to its rule: AIMD's drops cut the limit,
	// and waiters are woken when it grows.
	clk := breakertest.NewClock(time.Unix(0, 0))
	l := mustNew(t, Config{Algorithm: AIMD{Min: 1, Initial: 10}, Clock: clk})
	p, _ := l.Acquire(context.Background())
	clk.Advance(10 * time.Millisecond)
	p.Done(Dropped)
	if got := l.Limit(); got != 9 {
		t.Errorf("Limit() after a drop from 10 = %d, want ⌊10 × 0.9⌋ = 9", got)
	}
	var ps []Permit
	for range 9 {
		p, err := l.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	ps[8].Done(Success) // taken with 9 in flight: 9 × 2 ≥ 9, + 1
	if got := l.Limit(); got != 10 {
		t.Errorf("Limit() after a success at 9 of 9 = %d, want 10", got)
	}
	for i := range ps {
		ps[i].Done(Ignored)
	}
	checkIdle(t, l)
}

func TestAdmitter(t *testing.T) {
	// Through retry.Do, each attempt holds a permit, given back even when
	// the attempt panics; a refusal ends the call at once.
	l := mustNew(t, Config{Limit: 1})
	ctx := context.Background()
	policy := backoff.Policy{Initial: time.Nanosecond, Retries: 2}
	inside := 0
	_, err := retry.Do(ctx, policy, func(context.Context) (int, error) {
		inside = l.Snapshot().InFlight
		return 0, errors.New("fails")
	}, retry.WithAdmitter(l, nil))
	if inside != 1 || err == nil {
		t.Errorf("in flight during an attempt = %d (err %v), want 1", inside, err)
	}
	checkIdle(t, l)
	func() {
		defer func() { _ = recover() }()
		_, _ = retry.Do(ctx, policy, func(context.Context) (int, error) { panic("op panics") }, retry.WithAdmitter(l, nil))
	}()
	checkIdle(t, l)
	p, _ := l.Acquire(ctx)
	calls := 0
	_, err = retry.Do(ctx, policy, func(context.Context) (int, error) { calls++; return 1, nil }, retry.WithAdmitter(l, nil))
	var re *retry.Error
	if !errors.Is(err, ErrLimited) || !errors.As(err, &re) || re.Attempts != 1 || calls != 0 {
		t.Errorf("retry.Do into a full limit = %v (%d calls), want a *retry.Error of 1 attempt matching ErrLimited, no call", err, calls)
	}
	p.Release()
	checkIdle(t, l)
}

func TestGroup(t *testing.T) {
	g := &Group{Config: Config{Limit: 1}, MaxKeys: 2}
	a, _ := g.Get("a")
	a2, _ := g.Get("a")
	b, _ := g.Get("b")
	c, _ := g.Get("c")
	d, _ := g.Get("d")
	o, _ := g.Get(OverflowKey)
	if a != a2 || a == b || c != d || c != o || g.Len() != 2 {
		t.Errorf("Group with MaxKeys 2: same key same Limiter %v, keys apart %v, overflow shared %v, Len %d; want true, true, true, 2",
			a == a2, a != b, c == d && c == o, g.Len())
	}
	g = &Group{Config: Config{Limit: -1}}
	if _, err := g.Get("a"); !errors.Is(err, ErrInvalid) {
		t.Errorf("Group.Get with an invalid Config = %v, want ErrInvalid", err)
	}
	g = &Group{Configure: func(key string, cfg *Config) { cfg.Limit = len(key) }}
	if l, _ := g.Get("abc"); l.Limit() != 3 {
		t.Errorf("Configure setting the limit to len(key): Get(\"abc\").Limit() = %d, want 3", l.Limit())
	}
}

func TestConcurrentNeverOverLimit(t *testing.T) {
	l := mustNew(t, Config{Limit: 3, MaxWait: time.Minute, MaxWaiting: -1})
	var mu sync.Mutex
	in, most := 0, 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 500 {
				p, err := l.Acquire(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				in++
				most = max(most, in)
				mu.Unlock()
				mu.Lock()
				in--
				mu.Unlock()
				p.Done(Success)
			}
		})
	}
	wg.Wait()
	if most > 3 {
		t.Errorf("most calls holding a permit at once = %d, want ≤ 3", most)
	}
	checkIdle(t, l)
}

func TestTryAcquire(t *testing.T) {
	var l Limiter // the zero Limiter: TryAcquire makes it ready
	var ps []Permit
	for {
		p, ok := l.TryAcquire()
		if !ok {
			break
		}
		ps = append(ps, p)
	}
	if len(ps) != DefaultLimit || l.Snapshot().Refused != 0 {
		t.Errorf("TryAcquire until false: %d permits, %d refused; want %d, 0", len(ps), l.Snapshot().Refused, DefaultLimit)
	}
	for i := range ps {
		ps[i].Release()
	}
	checkIdle(t, &l)
}
