package throttle

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestInFlightNotThrottled: requests in flight count for nothing, so a
// dependency that has never signalled overload is never throttled, however
// many requests are sent to it at once: 20 rounds of 64 requests all
// admitted before any answer, then all accepted. Counted when admitted,
// the first round's second request saw p = 1/2.
func TestInFlightNotThrottled(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	th, _ := New(Config{Clock: clock, Rand: constRand(0)}) // rejects whenever p > 0
	rejected := 0
	for round := range 20 {
		clock.Set(time.Unix(0, 0).Add(time.Duration(round) * 50 * time.Millisecond))
		admitted := 0
		for range 64 {
			if th.Admit(t.Context()) != nil {
				rejected++
				continue
			}
			admitted++
		}
		for range admitted {
			th.Done(false)
		}
	}
	if rejected != 0 {
		t.Errorf("%d of 1280 requests to a healthy dependency rejected, want 0", rejected)
	}
	if s := th.Snapshot(); s.Requests != 1280 || s.Accepts != 1280 || s.P != 0 {
		t.Errorf("Snapshot = %+v, want 1280 requests, all accepted, P 0", s)
	}
}

// TestConcurrentFirstRequests is TestInFlightNotThrottled from 64
// goroutines at once on the real clock: none is rejected.
func TestConcurrentFirstRequests(t *testing.T) {
	th, _ := New(Config{})
	var rejected atomic.Int64
	var admitted, answer sync.WaitGroup
	var wg sync.WaitGroup
	admitted.Add(64)
	answer.Add(1)
	for range 64 {
		wg.Go(func() {
			err := th.Admit(t.Context())
			admitted.Done()
			answer.Wait() // every request in flight before any answer
			if err != nil {
				rejected.Add(1)
				return
			}
			th.Done(false)
		})
	}
	admitted.Wait()
	answer.Done()
	wg.Wait()
	if n := rejected.Load(); n != 0 {
		t.Errorf("%d of the first 64 concurrent requests to a healthy dependency rejected, want 0", n)
	}
}

// TestInFlightThenOverload: once the answers come back as overloads, they
// count, and the next requests are throttled at once.
func TestInFlightThenOverload(t *testing.T) {
	th, _ := New(Config{Rand: constRand(0)})
	now := time.Unix(0, 0)
	for range 64 {
		if err := th.AdmitAt(now); err != nil {
			t.Fatalf("AdmitAt before any answer = %v", err)
		}
	}
	for range 64 {
		th.Done(true)
	}
	if th.AdmitAt(now) == nil {
		t.Error("AdmitAt after 64 overloads admitted, want a rejection")
	}
	if s := th.SnapshotAt(now); s.Requests != 64 || s.Accepts != 0 || s.P != 64.0/65 {
		t.Errorf("Snapshot = %+v, want 64 requests, no accept, P 64/65 (the cold-start rejection not counted)", s)
	}
}

// TestLockFreeCountsDated: accepts reported without the clock count at
// the decision they followed, not when the window next moves: after 8
// accepts and 5 idle minutes the window holds nothing. Counted when the
// window next rolled, it still held 7 requests and 8 accepts.
func TestLockFreeCountsDated(t *testing.T) {
	t0 := time.Unix(1000, 0)
	clock := &fakeClock{t: t0}
	th, _ := New(Config{Clock: clock})
	for range 8 {
		if err := th.Admit(t.Context()); err != nil {
			t.Fatal(err)
		}
		th.Done(false)
	}
	for _, tc := range []struct {
		after              time.Duration
		requests, accepted int64
	}{
		{time.Minute, 8, 8},
		// A read does not move them: still dated at t0 after it.
		{DefaultWindow - DefaultWindow/DefaultBuckets, 8, 8},
		{DefaultWindow + time.Second, 0, 0},
		{5 * time.Minute, 0, 0},
	} {
		clock.Set(t0.Add(tc.after))
		if s := th.Snapshot(); s.Requests != tc.requests || s.Accepts != tc.accepted {
			t.Errorf("Snapshot %v after 8 accepts = %d requests, %d accepts, want %d, %d",
				tc.after, s.Requests, s.Accepts, tc.requests, tc.accepted)
		}
	}
}

// TestSnapshotMovesNothing: a Snapshot between the outcomes and the next
// decision leaves the counts as they would be without it.
func TestSnapshotMovesNothing(t *testing.T) {
	run := func(read bool) Stats {
		t0 := time.Unix(1000, 0)
		th, _ := New(Config{Rand: constRand(1)})
		for range 10 {
			th.AdmitAt(t0)
			th.Done(false)
		}
		if read {
			th.SnapshotAt(t0.Add(100 * time.Second))
		}
		later := t0.Add(DefaultWindow + 110*time.Second)
		th.AdmitAt(later)
		th.Done(true)
		return th.SnapshotAt(later)
	}
	if with, without := run(true), run(false); with != without {
		t.Errorf("Snapshot after a read = %+v, without it %+v, want the same", with, without)
	}
}

// TestDoneAtDates: DoneAt counts an outcome at the time given, in the
// window or not at all.
func TestDoneAtDates(t *testing.T) {
	t0 := time.Unix(1000, 0)
	th, _ := New(Config{})
	th.AdmitAt(t0)
	th.AdmitAt(t0)
	th.AdmitAt(t0)
	th.DoneAt(t0.Add(100*time.Second), false)
	th.DoneAt(t0.Add(time.Second), true)
	th.DoneAt(t0.Add(-DefaultWindow), false) // older than the window: dropped
	for _, tc := range []struct {
		at                 time.Duration
		requests, accepted int64
	}{
		{100 * time.Second, 2, 1},
		{DefaultWindow + 5*time.Second, 1, 1}, // the overload at 1 s left
		{DefaultWindow + 100*time.Second, 0, 0},
	} {
		if s := th.SnapshotAt(t0.Add(tc.at)); s.Requests != tc.requests || s.Accepts != tc.accepted {
			t.Errorf("SnapshotAt(%v) = %d requests, %d accepts, want %d, %d", tc.at, s.Requests, s.Accepts, tc.requests, tc.accepted)
		}
	}
}
