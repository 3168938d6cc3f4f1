package retryhttp_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
	"github.com/again-go/again/hedge"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
)

// countingRT counts the response bodies its base opened and the ones
// closed.
type countingRT struct {
	base           http.RoundTripper
	opened, closed *atomic.Int32
}

func (c countingRT) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err == nil {
		c.opened.Add(1)
		resp.Body = &countedBody{resp.Body, c.closed, false}
	}
	return resp, err
}

type countedBody struct {
	rc interface {
		Read([]byte) (int, error)
		Close() error
	}
	closed *atomic.Int32
	done   bool
}

func (b *countedBody) Read(p []byte) (int, error) { return b.rc.Read(p) }
func (b *countedBody) Close() error {
	if !b.done {
		b.done = true
		b.closed.Add(1)
	}
	return b.rc.Close()
}

// FuzzHedgedTransport checks hedges × retries × budget × breaker ×
// cancellation through the Transport: whatever the answers and their
// timing, RoundTrip returns a response or an error, never more copies
// than the policy and MaxHedges allow, a POST without a key once, and
// every response body the base opened is closed once the caller closes
// the one it got (losers drained, failures released); synctest's bubble
// ends only if no goroutine is left.
func FuzzHedgedTransport(f *testing.F) {
	f.Add(uint8(2), uint8(1), "GET", false, []byte{0x45, 0x01, 0x02, 0x83}, uint16(0), uint8(5))
	f.Add(uint8(0), uint8(3), "PUT", false, []byte{0xff, 0x3f, 0x10, 0x50}, uint16(40), uint8(0))
	f.Add(uint8(1), uint8(2), "POST", true, []byte{0x30, 0x30, 0x30}, uint16(100), uint8(2))
	f.Add(uint8(3), uint8(1), "POST", false, []byte{0x90, 0x05}, uint16(15), uint8(1))
	f.Fuzz(func(t *testing.T, retries, maxHedges uint8, method string, key bool, script []byte, deadlineMs uint16, tokens uint8) {
		if len(script) > 16 || !validMethod(method) {
			return
		}
		// Each byte is an answer: its low 5 bits are the milliseconds
		// before it, the top 3 what it is.
		steps := make([]step, 0, len(script)+1)
		for _, b := range script {
			var s step
			switch b >> 5 {
			case 0, 1, 2:
				s = status(200)
			case 3:
				s = status(503)
			case 4:
				s = retryAfter(429, "0")
			case 5:
				s = step{reset: true}
			case 6:
				s = status(404)
			case 7:
				s = step{hang: true}
			}
			s.delay = time.Duration(b&0x1f) * time.Millisecond
			steps = append(steps, s)
		}
		steps = append(steps, status(200))
		synctest.Test(t, func(t *testing.T) {
			s := newScript(map[string][]step{"/": steps})
			var opened, closed atomic.Int32
			group := &breaker.Group{Config: breaker.Config{ConsecutiveFailures: 2}}
			tr := &retryhttp.Transport{
				Base:     countingRT{memRT{s}, &opened, &closed},
				Policy:   backoff.Policy{Initial: time.Millisecond, Retries: int(retries % 4), Jitter: backoff.NoJitter},
				Budget:   &retry.TokenBucket{MaxTokens: float64(tokens%8 + 1)},
				Breakers: group,
				Hedge: &hedge.Hedger{After: 5 * time.Millisecond, MaxHedges: int(maxHedges % 4),
					Budget: &retry.TokenBucket{MaxTokens: float64(tokens%4 + 1)}},
			}
			// Always a deadline: a copy that hangs may be the only one, when
			// the budget or the breaker refuses its hedges.
			deadline := time.Duration(deadlineMs%200) * time.Millisecond
			if deadline == 0 {
				deadline = time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, method, "http://example.test/", strings.NewReader("payload"))
			if err != nil {
				return
			}
			if key {
				req.Header.Set("Idempotency-Key", "k")
			}
			resp, err := tr.RoundTrip(req)
			if (resp == nil) == (err == nil) {
				t.Fatalf("RoundTrip = %v, %v: want exactly one", resp, err)
			}
			if err != nil {
				var re *retry.Error
				if !errors.As(err, &re) && !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("error %v: want a *retry.Error", err)
				}
			} else {
				resp.Body.Close()
			}
			sent := len(s.requests("/"))
			copies := 1 + max(int(maxHedges%4), 1)
			if most := tr.Policy.MaxAttempts() * copies; sent > most {
				t.Errorf("%d requests sent; want at most %d (%d attempts of %d copies)", sent, most, tr.Policy.MaxAttempts(), copies)
			}
			if (method == "POST" || method == "PATCH") && !key && sent > 1 {
				t.Errorf("%s without Idempotency-Key sent %d times", method, sent)
			}
			if o, c := opened.Load(), closed.Load(); o != c {
				t.Errorf("%d response bodies opened, %d closed", o, c)
			}
		})
	})
}
