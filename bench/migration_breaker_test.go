package bench

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker"
)

const fromGobreaker = "From sony/gobreaker (v2)"

// peerCall and ourCall are one call through each breaker, with err as the
// call's outcome; they report whether the breaker admitted the call.
func peerCall(cb *gobreaker.CircuitBreaker[int], err error) bool {
	ran := false
	cb.Execute(func() (int, error) { ran = true; return 0, err })
	return ran
}

func ourCall(b *breaker.Breaker, err error) bool {
	ran := false
	breaker.Call(context.Background(), b, func(context.Context) (int, error) { ran = true; return 0, err })
	return ran
}

func newOurs(t *testing.T, cfg breaker.Config) *breaker.Breaker {
	t.Helper()
	b, err := breaker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// failuresToTrip is how many failures in a row, with nothing else, open a
// breaker (0: not within limit).
func failuresToTrip(call func(error) bool, isOpen func() bool, err error, limit int) int {
	for n := 1; n <= limit; n++ {
		call(err)
		if isOpen() {
			return n
		}
	}
	return 0
}

var _ = row(fromGobreaker, "the defaults: trips after more than 5 consecutive failures; open 60 s each time", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		cb := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{})
		peerOpen := func() bool { return cb.State() == gobreaker.StateOpen }
		if n := failuresToTrip(func(err error) bool { return peerCall(cb, err) }, peerOpen, errMig, 100); n != 6 {
			t.Errorf("gobreaker: open after %d failures, want 6", n)
		}
		time.Sleep(60*time.Second - time.Millisecond)
		if !peerOpen() {
			t.Errorf("gobreaker: %v before 60 s, want open", cb.State())
		}
		time.Sleep(2 * time.Millisecond) // gobreaker half-opens just after its expiry, not at it
		if !peerCall(cb, errMig) {       // the probe fails: 60 s again
			t.Errorf("gobreaker: the probe after 60 s was rejected")
		}
		time.Sleep(60*time.Second - time.Millisecond)
		if !peerOpen() {
			t.Errorf("gobreaker: %v before 60 s after a failed probe, want open", cb.State())
		}

		var b breaker.Breaker
		ourOpen := func() bool { return b.State() == breaker.Open }
		if n := failuresToTrip(func(err error) bool { return ourCall(&b, err) }, ourOpen, errMig, 100); n != 20 {
			t.Errorf("again: open after %d failures, want 20 (50 %% of at least 20 calls)", n)
		}
		var b2 breaker.Breaker
		for i := range 20 {
			ourCall(&b2, map[bool]error{true: errMig}[i%2 == 1]) // 50 % of 20, the last a failure
		}
		if b2.State() != breaker.Open {
			t.Errorf("again: %v after 10 failures in 20 calls, want open", b2.State())
		}
	})
})

// The first probe of a default breaker comes after 2.5 s to 5 s (5 s with
// equal jitter), the next open periods grow to 1 min.
var _ = row(fromGobreaker, "`gobreaker.NewCircuitBreaker[T](settings)`", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		// The zero Breaker is ready, as a Settings{} breaker is.
		var b breaker.Breaker
		cb := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{})
		if !ourCall(&b, nil) || !peerCall(cb, nil) {
			t.Fatal("a new breaker rejected a call")
		}
		for range 20 {
			ourCall(&b, errMig)
		}
		opened := time.Now()
		for b.State() == breaker.Open {
			time.Sleep(10 * time.Millisecond)
		}
		if first := time.Since(opened); first < 2500*time.Millisecond || first > 5*time.Second {
			t.Errorf("again: first probe after %v, want 2.5 s to 5 s", first)
		}
		if _, err := breaker.New(breaker.Config{FailureRatio: 0.3, MinCalls: 5}); err != nil {
			t.Errorf("breaker.New: %v", err)
		}
	})
})

var _ = row(fromGobreaker, "`cb.Execute(f)`", func(t *testing.T) {
	cb := gobreaker.NewCircuitBreaker[string](gobreaker.Settings{})
	var b breaker.Breaker
	vp, errp := cb.Execute(func() (string, error) { return "v", nil })
	va, erra := breaker.Call(context.Background(), &b, func(context.Context) (string, error) { return "v", nil })
	if vp != "v" || va != "v" || errp != nil || erra != nil {
		t.Errorf("gobreaker %q, %v; again %q, %v; want the call's value", vp, errp, va, erra)
	}
	_, errp = cb.Execute(func() (string, error) { return "", errMig })
	_, erra = breaker.Call(context.Background(), &b, func(context.Context) (string, error) { return "", errMig })
	if errp != errMig || erra != errMig {
		t.Errorf("gobreaker %v, again %v; want the call's error as is", errp, erra)
	}
})

var _ = row(fromGobreaker, "`ErrOpenState`, `ErrTooManyRequests`", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		cb := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{Timeout: time.Second})
		b := newOurs(t, breaker.Config{ConsecutiveFailures: 6, FailureRatio: -1, Open: fixedOpen(time.Second)})
		for range 6 {
			peerCall(cb, errMig)
			ourCall(b, errMig)
		}
		_, errp := cb.Execute(func() (int, error) { return 0, nil })
		_, erra := breaker.Call(context.Background(), b, func(context.Context) (int, error) { return 0, nil })
		var oe *breaker.OpenError
		if !errors.Is(errp, gobreaker.ErrOpenState) || !errors.Is(erra, breaker.ErrOpen) || !errors.As(erra, &oe) {
			t.Errorf("open: gobreaker %v, again %v; want ErrOpenState and ErrOpen (an *OpenError)", errp, erra)
		}
		// Half-open, a second call while the probe runs.
		time.Sleep(time.Second + time.Millisecond) // gobreaker half-opens just after its expiry
		probe := make(chan struct{})
		done := make(chan struct{}, 2)
		go func() {
			cb.Execute(func() (int, error) { <-probe; return 0, nil })
			done <- struct{}{}
		}()
		go func() {
			breaker.Call(context.Background(), b, func(context.Context) (int, error) { <-probe; return 0, nil })
			done <- struct{}{}
		}()
		synctestWait()
		_, errp = cb.Execute(func() (int, error) { return 0, nil })
		_, erra = breaker.Call(context.Background(), b, func(context.Context) (int, error) { return 0, nil })
		close(probe)
		<-done
		<-done
		if !errors.Is(errp, gobreaker.ErrTooManyRequests) || !errors.Is(erra, breaker.ErrOpen) {
			t.Errorf("half-open, probe in flight: gobreaker %v, again %v; want ErrTooManyRequests and ErrOpen", errp, erra)
		}
	})
})

func fixedOpen(d time.Duration) backoff.Policy {
	return backoff.Policy{Initial: d, Multiplier: 1, Max: d, Jitter: backoff.NoJitter}
}

var _ = row(fromGobreaker, "`ReadyToTrip`", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		cb := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{}) // the default ReadyToTrip
		b := newOurs(t, breaker.Config{ConsecutiveFailures: 6, FailureRatio: -1})
		pn := failuresToTrip(func(err error) bool { return peerCall(cb, err) }, func() bool { return cb.State() == gobreaker.StateOpen }, errMig, 100)
		an := failuresToTrip(func(err error) bool { return ourCall(b, err) }, func() bool { return b.State() == breaker.Open }, errMig, 100)
		if pn != 6 || an != 6 {
			t.Errorf("failures to trip: gobreaker %d, again %d; want 6", pn, an)
		}
		// A success resets both runs.
		cb2 := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{})
		b2 := newOurs(t, breaker.Config{ConsecutiveFailures: 6, FailureRatio: -1})
		for i := range 11 {
			err := errMig
			if i == 5 {
				err = nil
			}
			peerCall(cb2, err)
			ourCall(b2, err)
		}
		if cb2.State() != gobreaker.StateClosed || b2.State() != breaker.Closed {
			t.Errorf("5 failures, a success, 5 failures: gobreaker %v, again %v; want closed", cb2.State(), b2.State())
		}
	})
})

var _ = row(fromGobreaker, "`Interval`, `BucketPeriod`", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		// Both: open on 5 failures within 10 s, in a rolling window of 1 s buckets.
		cb := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{Interval: 10 * time.Second, BucketPeriod: time.Second,
			ReadyToTrip: func(c gobreaker.Counts) bool { return c.TotalFailures >= 5 }})
		b := newOurs(t, breaker.Config{Window: 10 * time.Second, Buckets: 10, FailureRatio: 1, MinCalls: 5})
		for range 4 {
			peerCall(cb, errMig)
			ourCall(b, errMig)
		}
		time.Sleep(11 * time.Second) // the 4 failures leave the window
		for range 4 {
			peerCall(cb, errMig)
			ourCall(b, errMig)
		}
		if cb.State() != gobreaker.StateClosed || b.State() != breaker.Closed {
			t.Errorf("4 failures, 11 s, 4 failures: gobreaker %v, again %v; want closed", cb.State(), b.State())
		}
		peerCall(cb, errMig)
		ourCall(b, errMig)
		if cb.State() != gobreaker.StateOpen || b.State() != breaker.Open {
			t.Errorf("a 5th failure within 10 s: gobreaker %v, again %v; want open", cb.State(), b.State())
		}
		// Without Interval, gobreaker never forgets a failure while closed.
		forever := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{ReadyToTrip: func(c gobreaker.Counts) bool { return c.TotalFailures >= 5 }})
		for range 4 {
			peerCall(forever, errMig)
		}
		time.Sleep(time.Hour)
		peerCall(forever, errMig)
		if forever.State() != gobreaker.StateOpen {
			t.Errorf("gobreaker without Interval: %v after 4 failures, an hour and 1 failure; want open", forever.State())
		}
	})
})

var _ = row(fromGobreaker, "`Timeout`", func(t *testing.T) {
	const period = 90 * time.Second
	bubble(t, func(t *testing.T) {
		cb := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{Timeout: period, ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 1 }})
		b := newOurs(t, breaker.Config{ConsecutiveFailures: 1, FailureRatio: -1, Open: fixedOpen(period)})
		peerCall(cb, errMig)
		ourCall(b, errMig)
		for trip := 1; trip <= 3; trip++ {
			time.Sleep(period - 2*time.Millisecond)
			if cb.State() != gobreaker.StateOpen || b.State() != breaker.Open {
				t.Fatalf("trip %d, just before %v: gobreaker %v, again %v; want open", trip, period, cb.State(), b.State())
			}
			time.Sleep(3 * time.Millisecond) // gobreaker half-opens just after its expiry, again at it
			if cb.State() != gobreaker.StateHalfOpen || b.State() != breaker.HalfOpen {
				t.Fatalf("trip %d, just after %v: gobreaker %v, again %v; want half-open", trip, period, cb.State(), b.State())
			}
			peerCall(cb, errMig) // the probe fails
			ourCall(b, errMig)
		}
		// Open{Initial: T} alone grows: the second open period is longer.
		var periods []time.Duration
		g := newOurs(t, breaker.Config{ConsecutiveFailures: 1, FailureRatio: -1, Open: backoff.Policy{Initial: 10 * time.Second},
			OnStateChange: func(c breaker.Change) {
				if c.To == breaker.Open {
					periods = append(periods, c.Wait)
				}
			}})
		ourCall(g, errMig)
		time.Sleep(10 * time.Second)
		ourCall(g, errMig)
		if len(periods) != 2 || periods[0] > 10*time.Second || periods[1] < 10*time.Second {
			t.Errorf("again Open{Initial: 10s}: open periods %v, want a first of at most 10 s and a longer second", periods)
		}
		if err := (breaker.Config{Open: backoff.Policy{Initial: period}}).Validate(); !errors.Is(err, breaker.ErrInvalid) {
			t.Errorf("Config{Open: {Initial: 90s}}.Validate() = %v, want ErrInvalid: it would be capped at 1 min", err)
		}
	})
})

var _ = row(fromGobreaker, "`MaxRequests`", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		cb := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{MaxRequests: 2, Timeout: time.Second, ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 1 }})
		b := newOurs(t, breaker.Config{Probes: 2, ConsecutiveFailures: 1, FailureRatio: -1, Open: fixedOpen(time.Second)})
		peerCall(cb, errMig)
		ourCall(b, errMig)
		time.Sleep(time.Second + time.Millisecond) // gobreaker half-opens just after its expiry
		release := make(chan struct{})
		done := make(chan struct{}, 4)
		for range 2 {
			go func() { cb.Execute(func() (int, error) { <-release; return 0, nil }); done <- struct{}{} }()
			go func() {
				breaker.Call(context.Background(), b, func(context.Context) (int, error) { <-release; return 0, nil })
				done <- struct{}{}
			}()
		}
		synctestWait()
		pThird, aThird := peerCall(cb, nil), ourCall(b, nil)
		close(release)
		for range 4 {
			<-done
		}
		if pThird || aThird {
			t.Errorf("a third call with 2 probes in flight admitted: gobreaker %v, again %v; want rejected", pThird, aThird)
		}
		if cb.State() != gobreaker.StateClosed || b.State() != breaker.Closed {
			t.Errorf("after 2 successful probes: gobreaker %v, again %v; want closed", cb.State(), b.State())
		}
	})
})

var _ = row(fromGobreaker, "`IsSuccessful`", func(t *testing.T) {
	errNotFound := errors.New("not found")
	ok := func(err error) bool { return err == nil || errors.Is(err, errNotFound) }
	bubble(t, func(t *testing.T) {
		cb := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{IsSuccessful: ok})
		b := newOurs(t, breaker.Config{ConsecutiveFailures: 6, FailureRatio: -1, Classify: func(err error) breaker.Outcome {
			if ok(err) {
				return breaker.Success
			}
			return breaker.Failure
		}})
		// CallJudged: the same from the value.
		j := newOurs(t, breaker.Config{ConsecutiveFailures: 6, FailureRatio: -1})
		for range 10 {
			peerCall(cb, errNotFound)
			ourCall(b, errNotFound)
			breaker.CallJudged(context.Background(), j, func(context.Context) (int, error) { return 0, errNotFound },
				func(_ int, err error) breaker.Outcome {
					if ok(err) {
						return breaker.Success
					}
					return breaker.Failure
				})
		}
		if cb.State() != gobreaker.StateClosed || b.State() != breaker.Closed || j.State() != breaker.Closed {
			t.Errorf("10 successful errors: gobreaker %v, again %v (CallJudged %v); want closed", cb.State(), b.State(), j.State())
		}
		if s := b.Snapshot(); s.Failures != 0 || s.Calls != 10 {
			t.Errorf("again: %+v, want 10 calls and no failure", s)
		}
	})
})

var _ = row(fromGobreaker, "`IsExcluded`", func(t *testing.T) {
	errIgnored := errors.New("ignored")
	bubble(t, func(t *testing.T) {
		cb := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{IsExcluded: func(err error) bool { return errors.Is(err, errIgnored) }})
		b := newOurs(t, breaker.Config{ConsecutiveFailures: 6, FailureRatio: -1, Classify: func(err error) breaker.Outcome {
			if errors.Is(err, errIgnored) {
				return breaker.Neutral
			}
			return breaker.Classify(err)
		}})
		var nf breaker.Breaker // NotFault instead of a Classify
		for range 10 {
			peerCall(cb, errIgnored)
			ourCall(b, errIgnored)
			ourCall(&nf, breaker.NotFault(errIgnored))
		}
		if c := cb.Counts(); c.TotalFailures != 0 || c.TotalSuccesses != 0 || c.TotalExclusions != 10 || cb.State() != gobreaker.StateClosed {
			t.Errorf("gobreaker: %+v after 10 excluded calls, want 10 exclusions, no failure", c)
		}
		if s, s2 := b.Snapshot(), nf.Snapshot(); s.Calls != 0 || s2.Calls != 0 || s.Failures != 0 || s2.Failures != 0 {
			t.Errorf("again: %+v and (NotFault) %+v after 10 neutral calls, want nothing counted", s, s2)
		}
	})
})

var _ = row(fromGobreaker, "`cb.Counts()`", func(t *testing.T) {
	cb := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{})
	var b breaker.Breaker
	for _, err := range []error{errMig, nil, errMig, errMig} {
		peerCall(cb, err)
		ourCall(&b, err)
	}
	c, s := cb.Counts(), b.Snapshot()
	if c.Requests != 4 || c.TotalFailures != 3 || c.ConsecutiveFailures != 2 {
		t.Errorf("gobreaker Counts() = %+v, want 4 requests, 3 failures, 2 in a row", c)
	}
	if s.Calls != 4 || s.Failures != 3 || s.ConsecutiveFailures != 2 {
		t.Errorf("again Snapshot() = %+v, want 4 calls, 3 failures, 2 in a row", s)
	}
})

var _ = row(fromGobreaker, "`OnStateChange`", func(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var peer []string
		var ours []string
		cb := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{Timeout: time.Second,
			ReadyToTrip:   func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 1 },
			OnStateChange: func(_ string, from, to gobreaker.State) { peer = append(peer, from.String()+">"+to.String()) }})
		b := newOurs(t, breaker.Config{ConsecutiveFailures: 1, FailureRatio: -1, Open: fixedOpen(time.Second),
			OnStateChange: func(c breaker.Change) { ours = append(ours, c.From.String()+">"+c.To.String()) }})
		peerCall(cb, errMig)
		ourCall(b, errMig)
		time.Sleep(time.Second + time.Millisecond) // gobreaker half-opens just after its expiry
		peerCall(cb, nil)
		ourCall(b, nil)
		want := "closed>open open>half-open half-open>closed"
		if got := join(peer); got != want {
			t.Errorf("gobreaker: %s, want %s", got, want)
		}
		if got := join(ours); got != want {
			t.Errorf("again: %s, want %s", got, want)
		}
	})
})

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

var _ = row(fromGobreaker, "`context.Canceled` from the call: a failure, that trips", func(t *testing.T) {
	cb := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{})
	b := newOurs(t, breaker.Config{ConsecutiveFailures: 6, FailureRatio: -1}) // gobreaker's rule
	for range 10 {
		peerCall(cb, context.Canceled)
		ourCall(b, context.Canceled)
	}
	if cb.State() != gobreaker.StateOpen {
		t.Errorf("gobreaker: %v after 10 context.Canceled, want open", cb.State())
	}
	if s := b.Snapshot(); s.State != breaker.Closed || s.Calls != 0 || s.Failures != 0 {
		t.Errorf("again: %+v after 10 context.Canceled, want closed, nothing counted", s)
	}
})
