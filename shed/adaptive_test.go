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

	"github.com/again-go/again/limiter"
)

// package limiter's Limiter, with MaxWait zero, is the adaptive limit
// Config.Adaptive documents.
var _ Limit = (*limiter.Limiter)(nil)

// slowBeyond returns a handler whose own latency grows with its load: W
// workers of a fixed service time, the others waiting inside it, as a
// server's database pool makes them; it appends each request's latency,
// the time the limit learns from, to took. It panics on /panic and waits
// for its client to leave on /gone.
func slowBeyond(took *[]time.Duration) http.Handler {
	sem := make(chan struct{}, workers)
	var mu sync.Mutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/panic":
			panic("handler bug")
		case "/gone":
			<-r.Context().Done()
			return
		}
		t0 := time.Now()
		sem <- struct{}{}
		time.Sleep(service)
		<-sem
		mu.Lock()
		*took = append(*took, time.Since(t0))
		mu.Unlock()
	})
}

// through returns a client of h, for overload: a request answered 200
// within the client's timeout is a success.
func through(h http.Handler) func(ctx context.Context, c Criticality) bool {
	return func(ctx context.Context, c Criticality) bool {
		req := httptest.NewRequestWithContext(ctx, "GET", "/", nil)
		req.Header.Set(HeaderCriticality, c.String())
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code == http.StatusOK
	}
}

// p99 returns the 99th percentile of d, sorting a copy.
func p99(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)*99/100]
}

// TestGradient2LearnsTheHandlersLatency: a handler whose latency grows
// beyond its W workers, behind Handler's default limit (100 in flight),
// keeps about 100 requests inside it at four times its capacity, and each
// waits there 25 service times. Behind a Gradient2 limiter, starting at
// the same 100, the limit learns that latency and falls to a few times W,
// so that requests are served in a fraction of that time; goodput holds
// either way. Panics teach it nothing, a client that left while served
// is a drop, and neither leaks a permit.
func TestGradient2LearnsTheHandlersLatency(t *testing.T) {
	if testing.Short() {
		t.Skip("thousands of requests on the virtual clock: a few seconds under -race")
	}
	synctest.Test(t, func(t *testing.T) {
		var fixedTook, adaptiveTook []time.Duration

		fixed, err := New(Config{})
		if err != nil {
			t.Fatal(err)
		}
		gf, _, _ := overload(t, 4, 0, through(fixed.Wrap(slowBeyond(&fixedTook))))

		l, s := adaptive(t, DefaultLimit)
		h := s.Wrap(slowBeyond(&adaptiveTook))
		ga, _, _ := overload(t, 4, 0, through(h))

		// The latency of the last second's requests, once the limit
		// settled.
		pf, pa := p99(fixedTook[len(fixedTook)*2/3:]), p99(adaptiveTook[len(adaptiveTook)*2/3:])
		t.Logf("at 4x: fixed limit 100: goodput %.3f, handler's p99 %v; Gradient2: goodput %.3f, handler's p99 %v, limit %d",
			gf, pf, ga, pa, l.Limit())
		if got := l.Limit(); got > 6*workers {
			t.Errorf("Gradient2's limit after 4x capacity = %d, want at most %d (a few times the %d workers)", got, 6*workers, workers)
		}
		if pa*3 > pf {
			t.Errorf("handler's p99 over the last second: Gradient2 %v, fixed limit of 100 %v; want Gradient2's at most a third", pa, pf)
		}
		if ga < 0.9 {
			t.Errorf("Gradient2 at 4x capacity: goodput %.3f of capacity, want at least 0.9", ga)
		}

		// Panics: no sample, no permit kept.
		before := l.Limit()
		for range 3 * before {
			func() {
				defer func() { _ = recover() }()
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/panic", nil))
			}()
		}
		if got := l.Limit(); got != before {
			t.Errorf("limit after panics = %d, want %d unchanged (nothing measured)", got, before)
		}
		// A client that left while its request was served: work nobody
		// waited for, a drop that halves the limit.
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(time.Second); cancel() }()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequestWithContext(ctx, "GET", "/gone", nil))
		if got, want := l.Limit(), max(before/2, 1); got != want {
			t.Errorf("limit after a client gone = %d, want %d: halved from %d", got, want, before)
		}
		if ls, ss := l.Snapshot(), s.Snapshot(); ls.InFlight != 0 || ss.InFlight != 0 || ss.Queued != 0 {
			t.Errorf("at the end: limiter %d in flight, Shedder %d in flight and %d queued; want 0, 0, 0", ls.InFlight, ss.InFlight, ss.Queued)
		}
	})
}

// adaptive returns a Shedder whose limit is a Gradient2 starting at
// initial.
func adaptive(t *testing.T, initial int) (*limiter.Limiter, *Shedder) {
	t.Helper()
	l, err := limiter.New(limiter.Config{Algorithm: limiter.Gradient2{Initial: initial, Min: 1}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Adaptive: l})
	if err != nil {
		t.Fatal(err)
	}
	return l, s
}
