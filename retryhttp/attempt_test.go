package retryhttp

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/again-go/again/breaker"
)

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Attempts of one request keep their outcomes in values of their own: two
// attempts that run at once, each with its breaker ticket and timeout, get
// their own response and verdict, and the race detector sees no shared
// write. Hedged requests rely on it.
func TestAttemptsRunAtOnce(t *testing.T) {
	var calls atomic.Int32
	var arrived sync.WaitGroup
	arrived.Add(2)
	release := make(chan struct{})
	base := rtFunc(func(r *http.Request) (*http.Response, error) {
		code := http.StatusOK
		if calls.Add(1) == 1 {
			code = http.StatusServiceUnavailable
		}
		arrived.Done()
		<-release // both attempts are in flight together
		return &http.Response{StatusCode: code, Status: http.StatusText(code), Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	tr := &Transport{Base: base, AttemptTimeout: time.Hour, Breakers: &breaker.Group{}}
	req, _ := http.NewRequest(http.MethodPut, "http://h.example/", strings.NewReader("body"))
	c := call{t: tr, req: req, base: base, header: req.Header, max: 4, replayable: true}
	var err error
	if c.body, err = newBody(req, DefaultMaxBufferedBody, true); err != nil {
		t.Fatal(err)
	}
	defer c.body.close()
	if c.br, err = tr.breakerFor(req); err != nil {
		t.Fatal(err)
	}
	var as [2]attempt
	var wg sync.WaitGroup
	for i := range as {
		wg.Go(func() { c.try(context.Background(), i+2, &as[i]) })
	}
	arrived.Wait()
	close(release)
	wg.Wait()
	kinds := map[attemptKind]*attempt{}
	for i := range as {
		kinds[as[i].kind] = &as[i]
		as[i].ticket.Record(outcome(&as[i]))
	}
	final, bad := kinds[final], kinds[badStatus]
	if final == nil || bad == nil {
		t.Fatalf("attempts ended %v and %v, want one final and one with a status to retry", as[0].kind, as[1].kind)
	}
	if final.resp.StatusCode != http.StatusOK || c.verdict(final) != nil {
		t.Errorf("final attempt: status %d, verdict %v; want 200 and nil", final.resp.StatusCode, c.verdict(final))
	}
	if bad.resp.StatusCode != http.StatusServiceUnavailable || c.verdict(bad) == nil || bad.lim == nil {
		t.Errorf("failed attempt: status %d, verdict %v, timeout %v; want 503, an error, its own running timeout", bad.resp.StatusCode, c.verdict(bad), bad.lim)
	}
	bad.release()
	final.resp.Body.Close()
	if s := c.br.Snapshot(); s.Calls != 2 || s.Failures != 1 {
		t.Errorf("breaker counted %d calls, %d failures; want 2 and 1, one per attempt", s.Calls, s.Failures)
	}
}
