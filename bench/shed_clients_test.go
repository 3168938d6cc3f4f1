package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
	"github.com/again-go/again/shed"
	"github.com/again-go/again/throttle"
)

// again's clients against again's server (issue 41), on loopback: the
// server of TestShedOverload behind shed (limit 4, the CoDel/LIFO queue),
// offered 4 × C of calls for shedClientRun, by plain clients (one
// attempt, a 1 s timeout) and by again's: retryhttp.Transport with its
// default Policy (3 retries), a retry.TokenBucket budget and the SRE
// throttle (throttle.Group), each attempt bounded by 1 s and the call by
// shedRetryDeadline, so that shed's Retry-After (1 s at rest, up to 5 s
// under a standing queue, jittered up to twice that) can be obeyed.
// Run it with
//
//	cd bench && go test -run TestShedRetryingClients -v -count 1 .
const (
	shedClientRun     = 2500 * time.Millisecond
	shedRetryDeadline = 12 * time.Second
	shedArrivalBin    = 100 * time.Millisecond
)

// clientRun is the figures of one kind of client.
type clientRun struct {
	calls, counted int
	// goodput is the successes that ended within the counted part of the
	// load, per second, ÷ C; succeeded the share of the calls sent then
	// that succeeded within their deadline, whenever they ended.
	goodput, succeeded float64
	p50, p99           time.Duration
	attempts           int // requests the server received
	held               int // attempts the client's throttle held back, never sent
	// waits are the waits after a Retry-After, rounded to the second;
	// holds the waits after the throttle held an attempt back.
	waits  map[time.Duration]int
	holds  []time.Duration
	gaveUp map[string]int // why calls that failed stopped retrying
	// firstPeak and retryPeak are the busiest shedArrivalBin of first
	// attempts and of retries at the server over their mean bin, while
	// the load is counted: retries in step would show a peak far above
	// the first attempts'.
	firstPeak, retryPeak float64
	retries              int
}

func runClients(t *testing.T, retrying bool) clientRun {
	stop := make(chan struct{})
	s, err := shed.New(shed.Config{Limit: shedWorkers})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu             sync.Mutex
		first, retries []time.Duration // arrivals at the server
		out            = clientRun{waits: map[time.Duration]int{}, gaveUp: map[string]int{}}
		lat            []time.Duration
		inWindow       int
		begin          = time.Now()
		shedHandler    = s.Wrap(workers(stop))
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Since(begin)
		mu.Lock()
		if shed.ParseAttempt(r.Header.Get(shed.HeaderAttempt)) > 1 {
			retries = append(retries, at)
		} else {
			first = append(first, at)
		}
		mu.Unlock()
		shedHandler.ServeHTTP(w, r)
	}))
	defer srv.Close()
	defer close(stop)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 2000
	defer tr.CloseIdleConnections()
	var rt http.RoundTripper = tr
	deadline := shedTimeout
	if retrying {
		deadline = shedRetryDeadline
		rt = &retryhttp.Transport{Base: tr, Budget: &retry.TokenBucket{}, Throttles: &throttle.Group{},
			AttemptTimeout: shedTimeout, ShedHeaders: true,
			OnGiveUp: func(e retryhttp.Event) {
				mu.Lock()
				defer mu.Unlock()
				out.held += b2i(errors.Is(e.Err, throttle.ErrRejected))
				why := "other"
				for _, r := range []error{retry.ErrBudget, retry.ErrRetryAfterTooLong, retry.ErrDeadline, retry.ErrExhausted} {
					if errors.Is(e.Reason, r) {
						why = r.Error()
					}
				}
				out.gaveUp[why]++
			},
			OnRetry: func(e retryhttp.Event) {
				mu.Lock()
				defer mu.Unlock()
				switch {
				case errors.Is(e.Err, throttle.ErrRejected):
					out.held++
					out.holds = append(out.holds, e.Delay)
				case e.HintHeader == retryhttp.HeaderRetryAfter:
					out.waits[e.Delay.Round(time.Second)]++
				}
			}}
	}
	c := &http.Client{Transport: rt}
	r := rand.New(rand.NewPCG(3, 4))
	var wg sync.WaitGroup
	// Arrivals at fixed times: a sleep that overran on the loaded machine
	// is made up at once, so that the load offered is the one named.
	for next := begin; ; {
		next = next.Add(time.Duration(r.ExpFloat64() / (4 * shedCapacity()) * float64(time.Second)))
		if next.Sub(begin) >= shedClientRun {
			break
		}
		time.Sleep(time.Until(next))
		counted := next.Sub(begin) >= shedWarmup
		out.calls++
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			sent := time.Now()
			status, err := shedGet(ctx, c, srv.URL)
			took := time.Since(sent)
			ok := err == nil && status == http.StatusOK && took <= deadline
			mu.Lock()
			defer mu.Unlock()
			if end := time.Since(begin); ok && end >= shedWarmup && end < shedClientRun {
				inWindow++
			}
			if !counted {
				return
			}
			out.counted++
			if ok {
				lat = append(lat, took)
			}
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	window := (shedClientRun - shedWarmup).Seconds()
	out.goodput = float64(inWindow) / window / shedCapacity()
	out.succeeded = float64(len(lat)) / float64(out.counted)
	out.p50, out.p99 = quantile(lat, 0.5), quantile(lat, 0.99)
	out.attempts = len(first) + len(retries)
	out.retries = len(retries)
	out.firstPeak, out.retryPeak = peakOverMean(first), peakOverMean(retries)
	return out
}

// peakOverMean returns the busiest shedArrivalBin of the arrivals in the
// counted part of the load over their mean bin; 0 without arrivals.
func peakOverMean(arrivals []time.Duration) float64 {
	bins := make([]int, (shedClientRun-shedWarmup)/shedArrivalBin)
	n := 0
	for _, a := range arrivals {
		if b := (a - shedWarmup) / shedArrivalBin; a >= shedWarmup && int(b) < len(bins) {
			bins[b]++
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return float64(slices.Max(bins)) / (float64(n) / float64(len(bins)))
}

func TestShedRetryingClients(t *testing.T) {
	if testing.Short() {
		t.Skip("a real load of 4 × C for 2.5 s, twice")
	}
	plain, again := runClients(t, false), runClients(t, true)
	for _, k := range []struct {
		name string
		r    clientRun
	}{{"plain clients, no retry, 1s", plain}, {"again's: retry, budget, throttle, 1s × 12s", again}} {
		r := k.r
		t.Logf("%-42s goodput %.2f  calls succeeded %.3f  p50 %6.1fms  p99 %7.1fms  requests sent %d for %d calls (%.2f a call; retries %d)  held back by the throttle %d",
			k.name, r.goodput, r.succeeded, ms(r.p50), ms(r.p99), r.attempts, r.calls, float64(r.attempts)/float64(r.calls), r.retries, r.held)
		t.Logf("%-42s busiest 100ms over the mean: first attempts %.1f, retries %.1f; waits after a Retry-After %v, after the throttle p10 %v p50 %v p90 %v; gave up: %v",
			k.name, r.firstPeak, r.retryPeak, fmt.Sprint(r.waits), quantile(r.holds, 0.1).Round(time.Millisecond),
			quantile(r.holds, 0.5).Round(time.Millisecond), quantile(r.holds, 0.9).Round(time.Millisecond), fmt.Sprint(r.gaveUp))
	}
	// again's clients: the budget and the throttle bound what the retries
	// cost, they obey Retry-After (a wait of at least 1s after every 503),
	// and retries do not come back in step.
	if extra := float64(again.attempts)/float64(again.calls) - 1; extra > 0.5 {
		t.Errorf("again's clients sent %.2f requests a call at 4 × C; want at most 1.5 (the budget and the throttle bound retries)", extra+1)
	}
	for w := range again.waits {
		if w < time.Second {
			t.Errorf("again's clients waited %v after a Retry-After; want at least 1s", w)
		}
	}
	if p10, p90 := quantile(again.holds, 0.1), quantile(again.holds, 0.9); len(again.holds) > 20 && p90 < 2*p10 {
		t.Errorf("again's clients waited from %v (p10) to %v (p90) after the throttle held them back; want a spread of at least 2 ×, not a step", p10, p90)
	}
}
