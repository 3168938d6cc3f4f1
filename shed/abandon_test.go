package shed

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// hedged runs 10 clients of 40 requests each through a Shedder with a
// Gradient2 limit (starting at 20) in front of a handler of 10ms that
// stops when its client leaves; each client gives up its 1 in 10
// requests after 5ms (a hedge's losing copy), and sends its 1s deadline
// in HeaderTimeout if withTimeout. It returns the limit at the end.
func hedged(t *testing.T, withTimeout bool) int {
	var limit int
	synctest.Test(t, func(t *testing.T) {
		l, s := adaptive(t, 20)
		h := s.Wrap(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(10 * time.Millisecond):
			case <-r.Context().Done():
			}
		}))
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				for i := range 40 {
					ctx, cancel := context.WithTimeout(context.Background(), time.Second)
					if i%10 == 9 {
						time.AfterFunc(5*time.Millisecond, cancel) // the other copy answered
					}
					r := httptest.NewRequestWithContext(ctx, "GET", "/", nil)
					if withTimeout {
						r.Header.Set(HeaderTimeout, strconv.Itoa(1000))
					}
					h.ServeHTTP(httptest.NewRecorder(), r)
					cancel()
				}
			})
		}
		wg.Wait()
		limit = l.Limit()
		if st := s.Snapshot(); st.InFlight != 0 {
			t.Errorf("%d in flight at the end, want 0", st.InFlight)
		}
	})
	return limit
}

// A hedging client's losing copies, canceled long before their deadline,
// say nothing of the server: with the deadline sent (HeaderTimeout, as
// retryhttp.Transport's ShedHeaders sends it), the limit does not fall;
// without it, each is a drop, and the limit halves once per round trip
// of them (here the successes between the rounds make it up).
func TestAbandonedByChoiceIsNoDrop(t *testing.T) {
	got := hedged(t, true)
	t.Logf("with a deadline: %d", got)
	if got < 20 {
		t.Errorf("limit after 1 in 10 requests canceled at 5ms of 1s = %d, want at least the 20 it started at", got)
	}
	got = hedged(t, false)
	t.Logf("without: %d", got)
	if got > 10 {
		t.Errorf("limit after 1 in 10 requests canceled without a deadline = %d, want at most 10 (halved)", got)
	}
}

// A client that times out at its deadline, sent in HeaderTimeout, is a
// drop as a client without a deadline is: the limit halves.
func TestAbandonedAtTheDeadlineIsADrop(t *testing.T) {
	for _, header := range []string{"100", ""} {
		synctest.Test(t, func(t *testing.T) {
			l, s := adaptive(t, 8)
			h := s.Wrap(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			r := httptest.NewRequestWithContext(ctx, "GET", "/", nil)
			if header != "" {
				r.Header.Set(HeaderTimeout, header)
			}
			h.ServeHTTP(httptest.NewRecorder(), r)
			if got := l.Limit(); got != 4 {
				t.Errorf("%s %q: limit after the client timed out = %d, want 4 (halved)", HeaderTimeout, header, got)
			}
		})
	}
}

// A request that waited in the queue counts its deadline from its
// arrival, not from its admission: with 1s, its client leaving at 50ms,
// after 40ms in the queue, canceled by choice (no drop); with 65ms, of
// which a quarter is the margin, at its deadline (a drop: the limit
// halves), though only 10ms after its admission.
func TestAbandonedAfterTheQueue(t *testing.T) {
	for _, tt := range []struct {
		timeout string
		halved  bool
	}{{"1000", false}, {"65", true}} {
		synctest.Test(t, func(t *testing.T) {
			l, s := adaptive(t, 2)
			hold := make(chan struct{})
			var before int
			h := s.Wrap(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/hold" {
					<-hold
					return
				}
				<-r.Context().Done()
				before = l.Limit()
			}))
			// Two requests hold the limit of 2 for 40ms.
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(func() { h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/hold", nil)) })
			}
			synctest.Wait()
			time.AfterFunc(40*time.Millisecond, func() { close(hold) })
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			r := httptest.NewRequestWithContext(ctx, "GET", "/", nil)
			r.Header.Set(HeaderTimeout, tt.timeout)
			h.ServeHTTP(httptest.NewRecorder(), r)
			wg.Wait()
			want := before
			if tt.halved {
				want = before / 2
			}
			if got := l.Limit(); before == 0 || got != want {
				t.Errorf("%s %s, queued 40ms, its client gone at 50ms: limit %d, then %d; want %d", HeaderTimeout, tt.timeout, before, got, want)
			}
		})
	}
}
