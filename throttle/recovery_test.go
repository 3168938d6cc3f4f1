package throttle

import (
	"math"
	"testing"
	"time"
)

// recovery drives a Throttler with cfg at a demand of d requests per
// second, without retries, against a backend that refuses everything with
// an overload signal for outage (it starts empty) and then accepts
// capacity requests per second (the first ones of each second). It returns
// how long after the outage the backend first accepted at least 90 % of
// its capacity in one second of virtual time, or limit if it never did.
func recovery(t *testing.T, cfg Config, d, capacity float64, outage, limit time.Duration) time.Duration {
	t.Helper()
	th, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1000, 0)
	step := time.Duration(float64(time.Second) / d)
	var sec int64 = -1
	var inSec, accepted float64
	for at := time.Duration(0); at < outage+limit; at += step {
		if s := int64(at / time.Second); s != sec {
			if accepted >= 0.9*capacity {
				return time.Duration(s)*time.Second - outage
			}
			sec, inSec, accepted = s, 0, 0
		}
		if th.AdmitAt(start.Add(at)) != nil {
			continue
		}
		ok := at >= outage && inSec < capacity
		inSec++
		if ok {
			accepted++
		}
		th.Done(!ok)
	}
	return limit
}

// TestRecovery checks that a Throttler whose first answers are all
// overload signals (a backend that starts empty, a restart) lets the
// demand through again within seconds of the backend's recovery, where the
// book's counting, with its own rejections counted through the outage,
// stays shut for minutes (about 1 % of the capacity through for three
// minutes after a 1 s outage at 10a). No retries; times are virtual, the
// draws fixed.
func TestRecovery(t *testing.T) {
	const a = 100.0
	for _, tc := range []struct {
		name   string
		cfg    Config
		demand float64
		outage time.Duration
		within time.Duration // back at 90 % of the capacity by then
	}{
		{"1 s outage at 10a", Config{}, 10 * a, time.Second, 3 * time.Second},
		{"1 s outage at 3a", Config{}, 3 * a, time.Second, 3 * time.Second},
		{"5 s outage at 10a", Config{}, 10 * a, 5 * time.Second, 10 * time.Second},
		{"5 s outage at 30a", Config{}, 30 * a, 5 * time.Second, 3 * time.Second},
		{"30 s outage at 3a", Config{}, 3 * a, 30 * time.Second, 15 * time.Second},
		{"30 s outage at 10a", Config{}, 10 * a, 30 * time.Second, 15 * time.Second},
		{"2 min outage at 10a", Config{}, 10 * a, 2 * time.Minute, time.Minute},
		{"2 min outage at 10a, MaxP 0.95", Config{MaxP: 0.95}, 10 * a, 2 * time.Minute, 15 * time.Second},
		// K near 1 recovers slowly (a sent rate that grows as t^(K−1)):
		// a cap makes it probe.
		{"K 1.1, 5 s outage at 10a, MaxP 0.9", Config{K: 1.1, MaxP: 0.9}, 10 * a, 5 * time.Second, 15 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Rand = seeded(4)
			got := recovery(t, tc.cfg, tc.demand, a, tc.outage, 3*time.Minute)
			t.Logf("back at 90 %% of the capacity %v after the outage", got)
			if got > tc.within {
				t.Errorf("back at 90 %% of the capacity %v after the outage, want within %v", got, tc.within)
			}
		})
	}
}

// TestOutageProbes checks what a dead dependency sees: a trickle of
// probes, still throttled hard (p near 1 on the overloads sent), none of
// the Throttler's rejections counted.
func TestOutageProbes(t *testing.T) {
	th, _ := New(Config{Rand: seeded(5)})
	start := time.Unix(1000, 0)
	const d = 1000 // per second, for 60 s
	var sent, rejected int
	for i := range 60 * d {
		if th.AdmitAt(start.Add(time.Duration(i)*time.Second/d)) != nil {
			rejected++
			continue
		}
		sent++
		th.Done(true)
	}
	s := th.SnapshotAt(start.Add(time.Minute))
	// About √(2·d·60) ≈ 346 probes.
	if sent < 200 || sent > 600 {
		t.Errorf("%d requests sent to a dead dependency in a minute at %d/s, want about 350", sent, d)
	}
	if s.Requests != int64(sent) || s.Accepts != 0 || s.Rejected != int64(rejected) {
		t.Errorf("Snapshot = %+v, want %d requests (the sent ones), none accepted, %d rejected", s, sent, rejected)
	}
	if want := float64(sent) / float64(sent+1); math.Abs(s.P-want) > 1e-12 {
		t.Errorf("P = %v, want %v", s.P, want)
	}
}

// TestRejectionsCountOnceAccepted: as soon as the window holds an
// accept, the Throttler's own rejections count again, as in the book.
func TestRejectionsCountOnceAccepted(t *testing.T) {
	th, _ := New(Config{Rand: constRand(0)}) // rejects whenever p > 0
	now := time.Unix(50, 0)
	for _, overloaded := range []bool{false, true, true} {
		if err := th.AdmitAt(now); err != nil {
			t.Fatal(err)
		}
		th.Done(overloaded)
	}
	s0 := th.SnapshotAt(now) // 1 accept of 3: p = (3 − 2)/4
	for range 3 {
		if th.AdmitAt(now) == nil {
			t.Fatal("admitted at p > 0 with a draw of 0")
		}
	}
	if s := th.SnapshotAt(now); s0.Accepts != 1 || s.Requests != s0.Requests+3 || s.Accepts != 1 || s.Rejected != 3 {
		t.Errorf("Snapshot = %+v after %+v and 3 rejections, want the 3 rejections counted as requests", s, s0)
	}
}
