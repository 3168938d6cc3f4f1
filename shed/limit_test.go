package shed

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// recLimit is a Limit that records what a Shedder tells it, as an
// adaptive limit would learn from it, and whose limit the test moves.
type recLimit struct {
	mu       sync.Mutex
	limit    int
	inflight int
	admits   int
	took     []time.Duration
}

func (l *recLimit) Admit(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inflight >= l.limit {
		return ErrLimited
	}
	l.inflight++
	l.admits++
	return nil
}

func (l *recLimit) Release(overloaded bool, took time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inflight--
	l.took = append(l.took, took)
}

func TestAdaptiveLimitLearnsTheHandlersLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &recLimit{limit: 1}
		s, _ := newTest(t, Config{Adaptive: l})
		h := s.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/panic":
				panic("handler bug")
			case "/gone":
				<-r.Context().Done()
			}
			time.Sleep(10 * time.Millisecond)
		}))
		serve := func(path string, ctx context.Context) {
			defer func() { _ = recover() }()
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequestWithContext(ctx, "GET", path, nil))
		}
		bg := context.Background()
		// Two at once: the second waits 10ms in the queue, which is not
		// the handler's latency.
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); serve("/", bg) }()
		synctest.Wait()
		go func() { defer wg.Done(); serve("/", bg) }()
		wg.Wait()
		serve("/panic", bg)
		ctx, cancel := context.WithCancel(bg)
		go cancel()
		serve("/gone", ctx)
		want := []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, -1, -1}
		if !slices.Equal(l.took, want) {
			t.Errorf("latencies the limit learned = %v, want %v (a panic and a client gone: none)", l.took, want)
		}
		if l.inflight != 0 || l.admits != 4 {
			t.Errorf("limit after 4 requests: %d in flight, %d admitted; want 0, 4", l.inflight, l.admits)
		}
	})
}

func TestALimitThatGrowsServesTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &recLimit{limit: 1}
		s, _ := newTest(t, Config{Adaptive: l})
		a := &arrivals{s: s}
		hold := make(chan struct{})
		a.start(context.Background(), "first", Request{}, 0, hold)
		a.start(context.Background(), "queued", Request{}, 0, hold)
		l.mu.Lock()
		l.limit = 2
		l.mu.Unlock()
		// A grown limit is found by the next arrival.
		a.start(context.Background(), "next", Request{}, 0, hold)
		if got, want := names(a.results(), Admitted), []string{"first", "queued"}; !slices.Equal(got, want) {
			t.Errorf("admitted after the limit grew to 2 = %q, want %q", got, want)
		}
		close(hold)
		a.wg.Wait()
		if got := len(names(a.results(), Admitted)); got != 3 {
			t.Errorf("admitted at the end = %d, want 3", got)
		}
		if l.inflight != 0 {
			t.Errorf("permits out at the end = %d, want 0", l.inflight)
		}
	})
}
