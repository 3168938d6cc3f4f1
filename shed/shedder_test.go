package shed

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func names(rs []result, want Reason) []string {
	var out []string
	for _, r := range rs {
		if r.reason == want {
			out = append(out, r.name)
		}
	}
	return out
}

func TestPriorityOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, f := newTest(t, Config{Limit: 1})
		a := &arrivals{s: s}
		ctx := context.Background()
		hold := make(chan struct{})
		a.start(ctx, "holder", Request{}, 0, hold)
		queued := []struct {
			name string
			req  Request
		}{
			{"sheddable", Request{Criticality: Sheddable}},
			{"sheddable retry", Request{Criticality: Sheddable, Attempt: 2}},
			{"critical retry", Request{Criticality: Critical, Attempt: 3}},
			{"critical", Request{Criticality: Critical, Attempt: 1}},
			{"sheddable_plus", Request{Criticality: SheddablePlus}},
			{"default (critical)", Request{}},
			{"critical_plus", Request{Criticality: CriticalPlus}},
		}
		for _, q := range queued {
			a.start(ctx, q.name, q.req, time.Millisecond, nil)
		}
		if got := s.Snapshot().Queued; got != len(queued) {
			t.Fatalf("Snapshot().Queued = %d with the permit held, want %d", got, len(queued))
		}
		close(hold)
		a.wg.Wait()
		want := []string{"holder", "critical_plus", "critical", "default (critical)", "critical retry",
			"sheddable_plus", "sheddable", "sheddable retry"}
		if got := names(a.results(), Admitted); !slices.Equal(got, want) {
			t.Errorf("admitted in order %q, want %q", got, want)
		}
		if n := f.InFlight(); n != 0 {
			t.Errorf("permits out at the end = %d, want 0", n)
		}
	})
}

func TestFullQueueEvictsLowerClassFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, f := newTest(t, Config{Limit: 1, MaxQueue: 2})
		a := &arrivals{s: s}
		ctx := context.Background()
		hold := make(chan struct{})
		a.start(ctx, "holder", Request{}, 0, hold)
		a.start(ctx, "sheddable", Request{Criticality: Sheddable}, time.Millisecond, nil)
		a.start(ctx, "critical retry", Request{Criticality: Critical, Attempt: 2}, time.Millisecond, nil)
		a.start(ctx, "critical", Request{Criticality: Critical}, time.Millisecond, nil)   // evicts sheddable
		a.start(ctx, "critical 2", Request{Criticality: Critical}, time.Millisecond, nil) // evicts the retry
		a.start(ctx, "sheddable 2", Request{Criticality: Sheddable}, time.Millisecond, nil)
		a.start(ctx, "unknown", Request{Criticality: Unknown}, time.Millisecond, nil)
		close(hold)
		a.wg.Wait()
		rs := a.results()
		for _, tc := range []struct {
			why  Reason
			want []string
		}{
			{Overload, []string{"sheddable", "critical retry"}},
			{QueueFull, []string{"sheddable 2", "unknown"}},
			{Admitted, []string{"holder", "critical", "critical 2"}},
		} {
			if got := names(rs, tc.why); !slices.Equal(got, tc.want) {
				t.Errorf("%v: %q, want %q", tc.why, got, tc.want)
			}
		}
		if n := f.InFlight(); n != 0 {
			t.Errorf("permits out at the end = %d, want 0", n)
		}
	})
}

func TestUnknownClassUsesSpareCapacityOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := newTest(t, Config{Limit: 2})
		a := &arrivals{s: s}
		ctx := context.Background()
		hold := make(chan struct{})
		a.start(ctx, "unknown while idle", Request{Criticality: Unknown}, 0, hold)
		a.start(ctx, "critical", Request{}, 0, hold)
		a.start(ctx, "unknown at the limit", Request{Criticality: Unknown}, 0, hold)
		close(hold)
		a.wg.Wait()
		if got, want := names(a.results(), Admitted), []string{"unknown while idle", "critical"}; !slices.Equal(got, want) {
			t.Errorf("admitted %q, want %q", got, want)
		}
		if got, want := names(a.results(), QueueFull), []string{"unknown at the limit"}; !slices.Equal(got, want) {
			t.Errorf("shed as queue_full %q, want %q", got, want)
		}
	})
}

// TestStandingQueueTurnsLIFOAndSloughs offers a server of one permit and
// 10ms of service a request every 2ms (five times its capacity) for two
// seconds: once CoDel judges the queue overloaded, the requests served
// are the newest, none waited more than twice the target, and the rest
// are shed at once rather than after waiting their MaxWait.
func TestStandingQueueTurnsLIFOAndSloughs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, f := newTest(t, Config{Limit: 1, MaxQueue: 1000})
		a := &arrivals{s: s}
		ctx := context.Background()
		start := time.Now()
		sawOverload := false
		for range 1000 {
			a.wg.Add(1)
			go func() {
				defer a.wg.Done()
				t0 := time.Now()
				p, why := s.admit(ctx, Request{})
				a.mu.Lock()
				a.out = append(a.out, result{t0.Sub(start).String(), why, time.Since(t0)})
				a.mu.Unlock()
				if why == Admitted {
					time.Sleep(10 * time.Millisecond)
					p.Done()
				}
			}()
			time.Sleep(2 * time.Millisecond)
			sawOverload = sawOverload || s.Snapshot().Overloaded
		}
		a.wg.Wait()
		if !sawOverload {
			t.Fatalf("Snapshot().Overloaded never true at 5x capacity")
		}
		var served, shed, late, fresh int
		var maxShedWait time.Duration
		for _, r := range a.results()[100:] { // after the first 200ms
			switch r.reason {
			case Admitted:
				served++
				if r.waited > 10*time.Millisecond {
					late++
				}
				if r.waited <= 2*time.Millisecond {
					fresh++
				}
			case Overload:
				shed++
				maxShedWait = max(maxShedWait, r.waited)
			default:
				t.Errorf("request at %s: %v, want admitted or overload", r.name, r.reason)
			}
		}
		// 1800ms of 10ms service: about 180 served.
		if served < 170 {
			t.Errorf("served %d of 900 after 200ms, want at least 170 (the capacity)", served)
		}
		// The first request of each 100ms interval is never dropped.
		if late > 18 {
			t.Errorf("%d requests served after waiting over 10ms (2x target) under overload, want at most 18 (one per interval)", late)
		}
		// LIFO: the request served is the newest, which arrived less than
		// one arrival period (2ms) ago.
		if fresh < served*9/10 {
			t.Errorf("%d of %d requests served had waited at most 2ms, want at least 90%% (newest first)", fresh, served)
		}
		t.Logf("served %d (%d within 2ms, %d over 10ms), shed %d, longest wait before a shed %v", served, fresh, late, shed, maxShedWait)
		if maxShedWait > 100*time.Millisecond {
			t.Errorf("longest wait before a shed = %v, want at most 100ms", maxShedWait)
		}
		if n := f.InFlight(); n != 0 {
			t.Errorf("permits out at the end = %d, want 0", n)
		}
	})
}

func TestDeadlineDropsAreCapped(t *testing.T) {
	for _, tt := range []struct {
		name      string
		cfg       Config
		wantDrops int
	}{
		// 1 holder + 69 earlier arrivals + 30 queued = 100 arrivals: 20 drops.
		{"at most 20% of arrivals", Config{Limit: 1}, 20},
		{"none when the header is not trusted", Config{Limit: 1, IgnoreTimeout: true}, 0},
		{"a custom fraction", Config{Limit: 1, DropFraction: 0.1}, 10},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, _ := newTest(t, tt.cfg)
				a := &arrivals{s: s}
				ctx := context.Background()
				for range 69 {
					p, why := s.admit(ctx, Request{})
					if why != Admitted {
						t.Fatalf("admit while idle = %v, want admitted", why)
					}
					p.Done()
				}
				hold := make(chan struct{})
				a.start(ctx, "holder", Request{}, 0, hold)
				past := time.Now().Add(time.Millisecond)
				for i := range 30 {
					req := Request{Deadline: past}
					if i%2 == 1 {
						req = Request{Timeout: time.Millisecond} // the same, relative
					}
					a.start(ctx, "expired", req, time.Microsecond, nil)
				}
				time.Sleep(2 * time.Millisecond)
				close(hold)
				a.wg.Wait()
				if got := len(names(a.results(), Deadline)); got != tt.wantDrops {
					t.Errorf("dropped for their deadline %d of 30, want %d", got, tt.wantDrops)
				}
				if got := len(names(a.results(), Admitted)); got != 31-tt.wantDrops {
					t.Errorf("admitted %d, want %d", got, 31-tt.wantDrops)
				}
			})
		})
	}
}

func TestWaitEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var queued []string
		s, f := newTest(t, Config{Limit: 1, MaxWait: 50 * time.Millisecond,
			OnQueued: func(c Criticality, waited time.Duration, r Reason) {
				mu.Lock()
				queued = append(queued, r.String()+" after "+waited.String())
				mu.Unlock()
			}})
		a := &arrivals{s: s}
		hold := make(chan struct{})
		a.start(context.Background(), "holder", Request{}, 0, hold)
		ctx, cancel := context.WithCancel(context.Background())
		a.start(ctx, "canceled", Request{}, 0, nil)
		a.start(context.Background(), "timeout", Request{}, 0, nil)
		cancel()
		synctest.Wait()
		if got := s.Snapshot(); got.Queued != 1 || got.InFlight != 1 {
			t.Errorf("Snapshot() after one waiter's context ended = %+v, want 1 queued, 1 in flight", got)
		}
		time.Sleep(50 * time.Millisecond)
		synctest.Wait()
		close(hold)
		a.wg.Wait()
		for _, tc := range []struct {
			why  Reason
			want []string
		}{{Canceled, []string{"canceled"}}, {Timeout, []string{"timeout"}}} {
			if got := names(a.results(), tc.why); !slices.Equal(got, tc.want) {
				t.Errorf("%v: %q, want %q", tc.why, got, tc.want)
			}
		}
		if got := s.Snapshot(); got.Queued != 0 || got.InFlight != 0 {
			t.Errorf("Snapshot() at the end = %+v, want none queued or in flight", got)
		}
		if want := []string{"canceled after 0s", "timeout after 50ms"}; !slices.Equal(queued, want) {
			t.Errorf("OnQueued calls %q, want %q", queued, want)
		}
		if n := f.InFlight(); n != 0 {
			t.Errorf("permits out at the end = %d, want 0", n)
		}
	})
}

func TestAdmitError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var shed []string
		s, _ := newTest(t, Config{Limit: 1, MaxQueue: -1, Rand: fixedRand(0.5),
			OnShed: func(c Criticality, r Reason) { shed = append(shed, c.String()+" "+r.String()) }})
		p, err := s.Admit(context.Background(), Request{})
		if err != nil {
			t.Fatalf("Admit while idle = %v, want nil", err)
		}
		defer p.Done()
		_, err = s.Admit(context.Background(), Request{Criticality: Sheddable})
		var se *ShedError
		if !errors.Is(err, ErrShed) || !errors.As(err, &se) {
			t.Fatalf("Admit at the limit without a queue = %v, want a *ShedError matching ErrShed", err)
		}
		want := ShedError{Reason: QueueFull, Criticality: Sheddable, RetryAfter: 1500 * time.Millisecond}
		if *se != want {
			t.Errorf("Admit at the limit = %+v, want %+v", *se, want)
		}
		if got := se.Error(); got != "shed: request shed (queue_full, class SHEDDABLE, retry after 1.5s)" {
			t.Errorf("Error() = %q", got)
		}
		if len(shed) != 1 || shed[0] != "SHEDDABLE queue_full" {
			t.Errorf("OnShed calls %q, want [\"SHEDDABLE queue_full\"]", shed)
		}
	})
}

func TestRetryAfterGrowsWithLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, tt := range []struct {
			draw     float64
			minDelay time.Duration
			want     time.Duration
		}{
			{0, 0, time.Second},
			{0.999, 0, 1999 * time.Millisecond},
			{0, 5 * time.Millisecond, 3 * time.Second}, // load 0.5
			{0, time.Second, 5 * time.Second},          // load capped at 1
			{0.5, time.Second, 7500 * time.Millisecond},
		} {
			s, _ := newTest(t, Config{Limit: 1, MaxWait: 2 * time.Second, Rand: fixedRand(tt.draw)})
			p, _ := s.Admit(t.Context(), Request{})
			var queued Permit
			done := make(chan struct{})
			if tt.minDelay > 0 {
				// A request waits minDelay: CoDel's first observation of
				// the interval, its minimum delay.
				go func() {
					defer close(done)
					queued, _ = s.Admit(t.Context(), Request{})
				}()
				time.Sleep(tt.minDelay)
			} else {
				close(done)
			}
			p.Done()
			<-done
			if got := s.RetryAfter(); got != tt.want {
				t.Errorf("RetryAfter() with draw %v and minimum delay %v = %v, want %v", tt.draw, tt.minDelay, got, tt.want)
			}
			queued.Done()
		}
	})
}
