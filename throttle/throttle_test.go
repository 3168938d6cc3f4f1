package throttle

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/again-go/again/retry"
)

// steady drives a Throttler with k at a demand of d requests per second
// against a backend that accepts capacity requests per second (the first
// ones of each second) and refuses the rest with an overload signal, for
// dur of virtual time, and returns the requests sent and accepted per
// second over the last window, once the counts have settled.
func steady(t *testing.T, k, d, capacity float64, dur time.Duration) (sent, accepted float64) {
	t.Helper()
	th, err := New(Config{K: k, Rand: seeded(1)})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1000, 0)
	step := time.Duration(float64(time.Second) / d)
	measureFrom := dur - DefaultWindow
	var nSent, nAcc int64
	var sec int64 = -1
	var inSec float64
	for at := time.Duration(0); at < dur; at += step {
		now := start.Add(at)
		if s := int64(at / time.Second); s != sec {
			sec, inSec = s, 0
		}
		if th.AdmitAt(now) != nil {
			continue
		}
		ok := inSec < capacity
		inSec++
		th.Done(!ok)
		if at >= measureFrom {
			nSent++
			if ok {
				nAcc++
			}
		}
	}
	w := DefaultWindow.Seconds()
	return float64(nSent) / w, float64(nAcc) / w
}

func TestSteadyState(t *testing.T) {
	const a = 100.0
	for _, tc := range []struct {
		k, demand float64
	}{
		{2, 3 * a}, {2, 10 * a}, {2, 30 * a},
		{1.1, 10 * a},
	} {
		sent, acc := steady(t, tc.k, tc.demand, a, 4*time.Minute)
		t.Logf("K=%v D=%v: sent %.1f/s, accepted %.1f/s", tc.k, tc.demand, sent, acc)
		// The backend accepts a per second; what reaches it stays near
		// K×a whatever the demand.
		if want := tc.k * a; math.Abs(sent-want) > 0.05*want {
			t.Errorf("K=%v D=%v: sent %.1f/s, want %.0f/s ± 5 %%", tc.k, tc.demand, sent, want)
		}
		if math.Abs(acc-a) > 0.02*a {
			t.Errorf("K=%v D=%v: accepted %.1f/s, want %.0f/s", tc.k, tc.demand, acc, a)
		}
	}
}

func TestHealthyNeverRejects(t *testing.T) {
	th, _ := New(Config{Rand: seeded(2)})
	now := time.Unix(0, 0)
	for i := range 10000 {
		if err := th.AdmitAt(now.Add(time.Duration(i) * time.Millisecond)); err != nil {
			t.Fatalf("request %d rejected with everything accepted: %v", i, err)
		}
		th.Done(false)
	}
	// Admissions on credit (without the lock) are all counted once
	// answered.
	if s := th.SnapshotAt(now.Add(10 * time.Second)); s.P != 0 || s.Rejected != 0 || s.Requests != 10000 || s.Accepts != 10000 {
		t.Errorf("Snapshot = %+v, want 10000 requests accepted, P 0 and no rejection", s)
	}
}

// TestCreditEndsWithOverload: requests admitted on credit cannot delay
// throttling by more than the credit allows: once the dependency refuses
// everything, rejections start within maxCredit + a few requests of the
// point where p turns positive.
func TestCreditEndsWithOverload(t *testing.T) {
	th, _ := New(Config{Rand: constRand(0)}) // rejects whenever p > 0
	now := time.Unix(0, 0)
	for range 1000 {
		th.AdmitAt(now)
		th.Done(false)
	}
	// 1000 accepted: p stays 0 until requests exceed 2000.
	first := 0
	for i := 1; i <= 2000; i++ {
		if th.AdmitAt(now) != nil {
			first = i
			break
		}
		th.Done(true)
	}
	if first == 0 || first > 1000+maxCredit+1 {
		t.Errorf("first rejection at overloaded request %d, want by %d", first, 1000+maxCredit+1)
	}
}

func TestP(t *testing.T) {
	for _, tc := range []struct {
		name               string
		cfg                Config
		requests, accepted int
		want               float64
	}{
		{"all overloaded", Config{}, 99, 0, 99.0 / 100},
		{"half accepted K=2", Config{}, 100, 50, 0},
		{"a quarter accepted K=2", Config{}, 100, 25, 50.0 / 101},
		{"a quarter accepted K=1", Config{K: 1}, 100, 25, 75.0 / 101},
		{"capped", Config{MaxP: 0.5}, 99, 0, 0.5},
		{"below the floor", Config{MinRequests: 200}, 100, 0, 0},
		{"at the floor", Config{MinRequests: 100}, 100, 0, 100.0 / 101},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Rand = constRand(1) // never rejects: counts only
			th, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			now := time.Unix(50, 0)
			for i := range tc.requests {
				if err := th.AdmitAt(now); err != nil {
					t.Fatal(err)
				}
				th.Done(i >= tc.accepted)
			}
			if got := th.SnapshotAt(now).P; math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("P = %v, want %v", got, tc.want)
			}
		})
	}
}

type constRand float64

func (r constRand) Float64() float64 { return float64(r) }

func TestWindowForgets(t *testing.T) {
	th, _ := New(Config{Rand: constRand(1)})
	now := time.Unix(0, 0)
	for range 100 {
		th.AdmitAt(now)
		th.Done(true)
	}
	if s := th.SnapshotAt(now.Add(DefaultWindow - DefaultWindow/DefaultBuckets)); s.Requests != 100 {
		t.Errorf("Requests just before the window ends = %d, want 100", s.Requests)
	}
	if s := th.SnapshotAt(now.Add(DefaultWindow)); s.Requests != 0 || s.P != 0 {
		t.Errorf("Snapshot a window later = %+v, want nothing counted", s)
	}
}

func TestRejection(t *testing.T) {
	th, _ := New(Config{Rand: constRand(0)})
	now := time.Unix(0, 0)
	th.AdmitAt(now)
	th.Done(true)
	err := th.AdmitAt(now)
	if !errors.Is(err, ErrRejected) || !retry.IsRejected(err) {
		t.Fatalf("AdmitAt = %v, want a rejection matching ErrRejected", err)
	}
	var re *RejectedError
	if !errors.As(err, &re) || re.P != 0.5 || re.Requests != 1 || re.Accepts != 0 {
		t.Errorf("rejection = %+v, want P 0.5 over 1 request, 0 accepted", re)
	}
	if _, hinted := retry.RetryAfter(err); hinted {
		t.Error("a Throttler's rejection has a wait hint; it must be retried on the policy's schedule")
	}
	if got := th.SnapshotAt(now).Rejected; got != 1 {
		t.Errorf("Rejected = %d, want 1", got)
	}
	// With no accept in the window, the rejected request does not count
	// (cold start; TestRejectionsCountOnceAccepted has the book's case).
	if got := th.SnapshotAt(now).Requests; got != 1 {
		t.Errorf("Requests = %d, want 1 (the rejection not counted: no accept in the window)", got)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg   Config
		field string
	}{
		{Config{K: 0.5}, "Config.K"},
		{Config{K: math.Inf(1)}, "Config.K"},
		{Config{K: math.NaN()}, "Config.K"},
		{Config{Window: -1}, "Config.Window"},
		{Config{Buckets: 1001}, "Config.Buckets"},
		{Config{Buckets: -1}, "Config.Buckets"},
		{Config{Window: 5, Buckets: 10}, "Config.Buckets"},
		{Config{MaxP: 1.5}, "Config.MaxP"},
		{Config{MaxP: -0.1}, "Config.MaxP"},
	} {
		_, err := New(tc.cfg)
		var fe *FieldError
		if !errors.Is(err, ErrInvalid) || !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("New(%+v) = %v, want a *FieldError for %s", tc.cfg, err, tc.field)
		}
	}
	if _, err := New(Config{K: 1, Window: time.Second, Buckets: 1000, MaxP: 1, MinRequests: 5}); err != nil {
		t.Errorf("New of a valid Config = %v", err)
	}
}

func TestZeroThrottler(t *testing.T) {
	var th Throttler
	if err := th.Admit(t.Context()); err != nil {
		t.Fatalf("zero Throttler rejected its first request: %v", err)
	}
	th.Done(false)
	if s := th.Snapshot(); s.Requests != 1 || s.Accepts != 1 {
		t.Errorf("Snapshot = %+v, want 1 request, 1 accept", s)
	}
}

func TestAdmitFloor(t *testing.T) {
	for _, tc := range []struct {
		draw, floor float64
		rejected    bool
	}{{0.4, 0.5, true}, {0.6, 0.5, false}, {0, 0, false}, {0.99, 2, true}} {
		th, _ := New(Config{Rand: constRand(tc.draw)})
		now := time.Unix(0, 0)
		// A healthy window: the Throttler's own p is 0.
		for range 10 {
			th.AdmitAt(now)
			th.Done(false)
		}
		err := th.AdmitFloor(now, tc.floor)
		if got := err != nil; got != tc.rejected {
			t.Errorf("AdmitFloor(floor %v) with a draw of %v = %v, want rejected %v", tc.floor, tc.draw, err, tc.rejected)
		}
		if err == nil {
			th.Done(false)
		}
		if s := th.SnapshotAt(now); s.Requests != 11 {
			t.Errorf("Requests = %d, want 11: the floored request counts, rejected or answered", s.Requests)
		}
	}
}

// TestBucketEdgesInUnixTime checks that a bucket's edges are multiples of
// its width in Unix time, whatever the process's start: a model on a
// virtual clock (again sim throttle, the page) then gives the same counts
// on every run. An accept at an edge leaves the window exactly one window
// later.
func TestBucketEdgesInUnixTime(t *testing.T) {
	const width = DefaultWindow / DefaultBuckets
	for _, edge := range []time.Time{time.Unix(1_700_000_000, 0), time.Unix(1_800_000_010, 0), time.Unix(-30, 0)} {
		if edge.UnixNano()%int64(width) != 0 {
			t.Fatalf("%v is not an edge of a %v bucket", edge, width)
		}
		var th Throttler
		if err := th.AdmitAt(edge); err != nil {
			t.Fatalf("AdmitAt(%v) = %v, want nil", edge, err)
		}
		th.DoneAt(edge, false)
		if s := th.SnapshotAt(edge.Add(DefaultWindow - 1)); s.Requests != 1 || s.Accepts != 1 {
			t.Errorf("SnapshotAt(edge + window - 1ns) = %d requests, %d accepts; want 1, 1 (still in the window)", s.Requests, s.Accepts)
		}
		if s := th.SnapshotAt(edge.Add(DefaultWindow)); s.Requests != 0 || s.Accepts != 0 {
			t.Errorf("SnapshotAt(edge + window) = %d requests, %d accepts; want 0, 0 (the edge's bucket left the window)", s.Requests, s.Accepts)
		}
	}
}
