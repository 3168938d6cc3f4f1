package retryhttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
	"github.com/again-go/again/hedge"
	"github.com/again-go/again/limiter"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
	"github.com/again-go/again/throttle"
)

// slowHost answers each request after its delay (virtual time, under
// synctest), with the next status of its script (then the last one) and a
// body of "ok"; it counts the requests that reached it, and gives up on a
// request whose context ends first.
type slowHost struct {
	mu     sync.Mutex
	delays []time.Duration
	codes  []int
	n      int
}

func (h *slowHost) RoundTrip(r *http.Request) (*http.Response, error) {
	h.mu.Lock()
	i := h.n
	h.n++
	d := h.delays[min(i, len(h.delays)-1)]
	code := h.codes[min(i, len(h.codes)-1)]
	h.mu.Unlock()
	select {
	case <-time.After(d):
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	return &http.Response{StatusCode: code, Status: http.StatusText(code), Header: http.Header{},
		Body: io.NopCloser(strings.NewReader("ok")), ContentLength: -1, Request: r}, nil
}

func (h *slowHost) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

// inFlight is the permits the host's Limiter has out.
func inFlight(t *testing.T, g *limiter.Group, host string) int {
	t.Helper()
	l, err := g.Get(host)
	if err != nil {
		t.Fatal(err)
	}
	return l.Snapshot().InFlight
}

func newGet(t *testing.T, ctx context.Context, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestLimitsRefuseAtOnceAndLocally(t *testing.T) {
	// A limit of 1 per host: while a response's body is open (an empty
	// one, http.NoBody, gives the permit back at once), the next
	// request to that host fails at once with the limiter's error, sent
	// nowhere; the budget, the throttle and the breaker do not count it;
	// another host is not limited by it.
	net := &slowHost{delays: []time.Duration{0}, codes: []int{200}} // every host
	budget := &retry.TokenBucket{}
	g := &limiter.Group{Config: limiter.Config{Limit: 1}}
	th := &throttle.Group{}
	br := &breaker.Group{}
	hooks := 0
	tr := &retryhttp.Transport{Base: net, Limits: g, Throttles: th, Breakers: br, Budget: budget,
		Policy:   backoff.Policy{Initial: -1, Retries: 3},
		OnGiveUp: func(retryhttp.Event) { hooks++ }, OnRetry: func(retryhttp.Event) { hooks++ }}
	first, err := tr.RoundTrip(newGet(t, t.Context(), "http://a.test/"))
	if err != nil {
		t.Fatal(err)
	}
	tokens := budget.Tokens()
	resp, err := tr.RoundTrip(newGet(t, t.Context(), "http://a.test/"))
	var re *retry.Error
	if resp != nil || !errors.Is(err, limiter.ErrLimited) || !errors.As(err, &re) ||
		re.Reason != retry.ErrPermanent || re.Attempts != 1 {
		t.Fatalf("RoundTrip over the limit = %v, %v; want a *retry.Error of 1 attempt, Reason ErrPermanent, matching limiter.ErrLimited", resp, err)
	}
	if got := strings.Count(err.Error(), "concurrency limit"); got != 1 {
		t.Errorf("error %q says %d times that the limit refused it, want once", err, got)
	}
	if net.count() != 1 || budget.Tokens() != tokens {
		t.Errorf("host got %d requests, budget %v → %v tokens; want 1, unchanged", net.count(), tokens, budget.Tokens())
	}
	a, _ := th.Get("a.test")
	if s := a.(*throttle.Throttler).Snapshot(); s.Requests != 1 || s.Rejected != 0 {
		t.Errorf("throttle saw %+v, want the 1 request sent, nothing else", s)
	}
	b, _ := br.Get("a.test")
	if c := b.Snapshot(); c.Calls != 1 || c.Failures != 0 {
		t.Errorf("breaker saw %+v, want the 1 request sent, no failure", c)
	}
	if hooks != 0 {
		t.Errorf("%d calls of OnRetry and OnGiveUp, want none: nothing was sent, nothing given up", hooks)
	}
	other, err := tr.RoundTrip(newGet(t, t.Context(), "http://b.test/"))
	if err != nil {
		t.Fatalf("RoundTrip to another host = %v, want its own limit", err)
	}
	other.Body.Close()
	first.Body.Close()
	if n := inFlight(t, g, "a.test"); n != 0 {
		t.Errorf("after the body was closed: %d permits out, want 0", n)
	}
	again, err := tr.RoundTrip(newGet(t, t.Context(), "http://a.test/"))
	if err != nil {
		t.Fatalf("RoundTrip after the body was closed = %v, want nil", err)
	}
	again.Body.Close()
}

func TestLimitsPermitFollowsTheBody(t *testing.T) {
	// The permit is held while the final response's body is open, and
	// given back at its EOF, at its Close, or, for a body never closed,
	// once it is garbage.
	for _, c := range []struct {
		name string
		end  func(*http.Response) *http.Response // returns what the caller still holds
	}{
		{"read to EOF", func(r *http.Response) *http.Response { io.ReadAll(r.Body); return r }},
		{"closed unread", func(r *http.Response) *http.Response { r.Body.Close(); return r }},
		{"never closed, garbage", func(*http.Response) *http.Response { return nil }},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := &limiter.Group{Config: limiter.Config{Limit: 4}}
			tr := &retryhttp.Transport{Base: &slowHost{delays: []time.Duration{0}, codes: []int{200}}, Limits: g}
			resp, err := tr.RoundTrip(newGet(t, t.Context(), "http://a.test/"))
			if err != nil {
				t.Fatal(err)
			}
			if n := inFlight(t, g, "a.test"); n != 1 {
				t.Fatalf("while the body is open: %d permits out, want 1", n)
			}
			held := c.end(resp)
			resp = nil
			for range 20 {
				if inFlight(t, g, "a.test") == 0 {
					break
				}
				runtime.GC() // a cleanup runs after the cycle that found the body garbage
				runtime.Gosched()
			}
			if n := inFlight(t, g, "a.test"); n != 0 {
				t.Errorf("after the body ended: %d permits out, want 0", n)
			}
			runtime.KeepAlive(held)
		})
	}
}

func TestLimitsNotHeldDuringBackoff(t *testing.T) {
	// A response to retry gives its permit back once drained, before the
	// backoff wait: a limit of 1 lets another request through during the
	// wait, and the retry takes a permit of its own.
	synctest.Test(t, func(t *testing.T) {
		host := &slowHost{delays: []time.Duration{10 * time.Millisecond}, codes: []int{503, 200}}
		g := &limiter.Group{Config: limiter.Config{Limit: 1}}
		tr := &retryhttp.Transport{Base: host, Limits: g,
			Policy: backoff.Policy{Initial: time.Second, Jitter: backoff.NoJitter, Retries: 1}}
		done := make(chan error)
		go func() {
			resp, err := tr.RoundTrip(newGet(t, t.Context(), "http://a.test/"))
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		time.Sleep(500 * time.Millisecond) // inside the 1 s wait
		if n := inFlight(t, g, "a.test"); n != 0 {
			t.Errorf("during the backoff wait: %d permits out, want 0", n)
		}
		if err := <-done; err != nil {
			t.Fatalf("RoundTrip = %v, want the retry's 200", err)
		}
		if host.count() != 2 || inFlight(t, g, "a.test") != 0 {
			t.Errorf("%d requests sent, %d permits out; want 2, 0", host.count(), inFlight(t, g, "a.test"))
		}
	})
}

func TestLimitsWait(t *testing.T) {
	// With MaxWait, a request over the limit waits for a permit before it
	// is sent, within its context's deadline.
	synctest.Test(t, func(t *testing.T) {
		host := &slowHost{delays: []time.Duration{100 * time.Millisecond}, codes: []int{200}}
		g := &limiter.Group{Config: limiter.Config{Limit: 1, MaxWait: time.Second}}
		tr := &retryhttp.Transport{Base: host, Limits: g, ReadBody: func(r *http.Response) error {
			_, err := io.ReadAll(r.Body)
			return err
		}}
		var wg sync.WaitGroup
		var took [2]time.Duration
		for i := range 2 {
			wg.Go(func() {
				start := time.Now()
				resp, err := tr.RoundTrip(newGet(t, t.Context(), "http://a.test/"))
				if err != nil {
					t.Errorf("request %d: %v", i, err)
					return
				}
				resp.Body.Close()
				took[i] = time.Since(start)
			})
			synctest.Wait()
		}
		wg.Wait()
		if took[0] != 100*time.Millisecond || took[1] != 200*time.Millisecond {
			t.Errorf("took %v and %v, want 100ms, then 200ms (waited for the first)", took[0], took[1])
		}
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		hold, _ := g.Get("a.test")
		p, _ := hold.Acquire(t.Context())
		start := time.Now()
		_, err := tr.RoundTrip(newGet(t, ctx, "http://a.test/"))
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 50*time.Millisecond {
			t.Errorf("RoundTrip waiting past its deadline = %v after %v, want the deadline's error after 50ms", err, time.Since(start))
		}
		p.Release()
	})
}

func TestLimitsHedges(t *testing.T) {
	// Each hedge takes a permit of its own: under a limit of 1 the hedge
	// finds none and is not sent, and the first copy goes on; under a
	// limit of 2 it is sent and wins, and the loser's permit comes back.
	for _, c := range []struct {
		limit, sent int
		took        time.Duration
	}{{1, 1, time.Second}, {2, 2, 60 * time.Millisecond}} {
		synctest.Test(t, func(t *testing.T) {
			host := &slowHost{delays: []time.Duration{time.Second, 10 * time.Millisecond}, codes: []int{200}}
			g := &limiter.Group{Config: limiter.Config{Limit: c.limit}}
			tr := &retryhttp.Transport{Base: host, Limits: g, Hedge: &hedge.Hedger{After: 50 * time.Millisecond}}
			start := time.Now()
			resp, err := tr.RoundTrip(newGet(t, t.Context(), "http://a.test/"))
			if err != nil {
				t.Fatalf("limit %d: RoundTrip = %v", c.limit, err)
			}
			if took := time.Since(start); host.count() != c.sent || took != c.took {
				t.Errorf("limit %d: %d copies sent, answered after %v; want %d, %v", c.limit, host.count(), took, c.sent, c.took)
			}
			if n := inFlight(t, g, "a.test"); n != 1 {
				t.Errorf("limit %d: %d permits out while the winner's body is open, want 1", c.limit, n)
			}
			resp.Body.Close()
			synctest.Wait()
			if n := inFlight(t, g, "a.test"); n != 0 {
				t.Errorf("limit %d: %d permits out after the body was closed, want 0", c.limit, n)
			}
		})
	}
}

func TestLimitsAdaptiveLearnsOverload(t *testing.T) {
	// A 503 is a loss: AIMD's limit falls by 10 %; a 200 at a busy limit
	// raises it.
	host := newHosts(map[string][]int{"a.test": {503, 200}})
	g := &limiter.Group{Config: limiter.Config{Algorithm: limiter.AIMD{Min: 1, Initial: 1}}}
	tr := &retryhttp.Transport{Base: host, Limits: g, Policy: backoff.Policy{Initial: -1, Retries: 1}}
	resp, err := tr.RoundTrip(newGet(t, t.Context(), "http://a.test/"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// 1 → ⌊0.9⌋, kept at Min 1, by the 503; then + 1 by the 200 (1 in
	// flight × 2 ≥ 1).
	if l, _ := g.Get("a.test"); l.Limit() != 2 {
		t.Errorf("limit after a 503 then a 200 from 1 = %d, want 2", l.Limit())
	}
}

func TestLimitsNeverLeak(t *testing.T) {
	// A real server, hedges that lose, retries of 503s, callers that
	// cancel, bodies closed late or read to EOF: the permits in use return
	// to zero (under -race, and goleak checks the package).
	var n atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		switch i % 4 {
		case 0:
			w.WriteHeader(http.StatusServiceUnavailable)
		case 1:
			select { // slow enough to be hedged, or canceled
			case <-time.After(30 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
		io.WriteString(w, strings.Repeat("x", 100))
	}))
	defer s.Close()
	g := &limiter.Group{Config: limiter.Config{Limit: 3, MaxWait: 20 * time.Millisecond}}
	tr := &retryhttp.Transport{Base: s.Client().Transport, Limits: g,
		Policy: backoff.Policy{Initial: time.Millisecond, Retries: 2},
		Hedge:  &hedge.Hedger{After: 5 * time.Millisecond}}
	defer tr.CloseIdleConnections()
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if i%5 == 0 {
				time.AfterFunc(10*time.Millisecond, cancel)
			}
			resp, err := tr.RoundTrip(newGet(t, ctx, s.URL))
			if err != nil {
				return
			}
			if i%2 == 0 {
				io.ReadAll(resp.Body)
			}
			resp.Body.Close()
		})
	}
	wg.Wait()
	if n := inFlight(t, g, strings.TrimPrefix(s.URL, "http://")); n != 0 {
		t.Errorf("after every request ended: %d permits out, want 0", n)
	}
}

func TestLimitsLearnTheDeadlineAsALoss(t *testing.T) {
	// A request whose context's deadline passes before the host answers is
	// a loss for an adaptive limit (the host did not answer in time); one
	// the caller cancels teaches it nothing.
	synctest.Test(t, func(t *testing.T) {
		host := &slowHost{delays: []time.Duration{2 * time.Second}, codes: []int{200}}
		g := &limiter.Group{Config: limiter.Config{Algorithm: limiter.AIMD{Min: 1, Initial: 10}}}
		tr := &retryhttp.Transport{Base: host, Limits: g, Policy: backoff.Policy{Retries: backoff.NoRetries}}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if _, err := tr.RoundTrip(newGet(t, ctx, "http://a.test/")); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("RoundTrip past its deadline = %v, want the deadline's error", err)
		}
		l, _ := g.Get("a.test")
		if got := l.Limit(); got != 9 {
			t.Errorf("limit after a request cut by its deadline = %d, want ⌊10 × 0.9⌋ = 9", got)
		}
		ctx, cancel = context.WithCancel(t.Context())
		time.AfterFunc(time.Second, cancel)
		tr.RoundTrip(newGet(t, ctx, "http://a.test/"))
		if got := l.Limit(); got != 9 {
			t.Errorf("limit after a request the caller canceled = %d, want 9 (unchanged)", got)
		}
	})
}
