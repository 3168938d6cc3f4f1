package throttle

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// FuzzThrottler drives a Throttler through any sequence of requests,
// outcomes and pauses and checks what its users rely on after each step:
// p is a probability within the cap, it is the book's formula of the
// counts it reports, a rejection is counted, the counters only grow, and
// nothing is rejected before an overload, however many requests are in
// flight.
func FuzzThrottler(f *testing.F) {
	f.Add(uint8(2), uint8(0), uint8(0), []byte{0, 1, 0, 1, 2, 3, 0, 0, 0})
	f.Add(uint8(1), uint8(90), uint8(5), []byte{0xff, 0x10, 0x01, 0x02, 0x80})
	f.Add(uint8(2), uint8(0), uint8(0), []byte{0xf0, 0xf0, 0xf0, 0xf0, 0xf1, 0xf0, 0xf1, 0xf1, 0x00, 0xf0})
	f.Fuzz(func(t *testing.T, k, maxP, minReq uint8, ops []byte) {
		cfg := Config{
			K:           1 + float64(k%40)/10, // 1 to 4.9
			Window:      10 * time.Second,
			Buckets:     5,
			MaxP:        float64(maxP%101) / 100, // 0 (no cap) to 1
			MinRequests: int64(minReq % 20),
			Rand:        rand.New(rand.NewPCG(uint64(k), uint64(maxP))),
		}
		th, err := New(cfg)
		if err != nil {
			t.Fatalf("New(%+v): %v", cfg, err)
		}
		cap := cfg.MaxP
		if cap == 0 {
			cap = 1
		}
		now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
		var last Stats
		inFlight, overloads := 0, 0
		for i, op := range ops {
			switch op % 4 {
			case 0, 1:
				switch {
				case op >= 0xf0 && op%4 == 0: // a request kept in flight
					if th.AdmitAt(now) == nil {
						inFlight++
					}
				case op >= 0xf0: // the outcome of one in flight, an accept
					if inFlight > 0 {
						inFlight--
						th.Done(false)
					}
				default: // a request, and its outcome at once
					if err := th.AdmitAt(now); err == nil {
						th.Done(op%4 == 1)
						if op%4 == 1 {
							overloads++
						}
					}
				}
			case 2: // a pause, up to 2.55 s
				now = now.Add(time.Duration(op) * 10 * time.Millisecond)
			case 3: // a long pause: the window moves on
				now = now.Add(time.Duration(op) * 100 * time.Millisecond)
			}
			s := th.SnapshotAt(now)
			if math.IsNaN(s.P) || s.P < 0 || s.P > cap {
				t.Fatalf("op %d: p = %v, want in [0, %v]", i, s.P, cap)
			}
			if s.Requests < 0 || s.Accepts < 0 || s.Accepts > s.Requests {
				t.Fatalf("op %d: requests %d, accepts %d", i, s.Requests, s.Accepts)
			}
			if overloads == 0 && (s.Rejected != 0 || s.P != 0) {
				t.Fatalf("op %d: %d rejected, p = %v, with no overload ever reported (%d in flight)", i, s.Rejected, s.P, inFlight)
			}
			if s.Rejected < last.Rejected || s.Uncounted < last.Uncounted || s.Uncounted > s.Rejected {
				t.Fatalf("op %d: rejected %d then %d, uncounted %d then %d", i, last.Rejected, s.Rejected, last.Uncounted, s.Uncounted)
			}
			want := math.Max(0, (float64(s.Requests)-cfg.K*float64(s.Accepts))/(float64(s.Requests)+1))
			if s.Requests < cfg.MinRequests {
				want = 0
			}
			want = math.Min(want, cap)
			if math.Abs(s.P-want) > 1e-9 {
				t.Fatalf("op %d: p = %v for requests %d, accepts %d (K %v, cap %v, floor %d), want %v",
					i, s.P, s.Requests, s.Accepts, cfg.K, cap, cfg.MinRequests, want)
			}
			last = s
		}
	})
}

// FuzzRate drives a Rate through any sequence of responses, throttles and
// pauses, through AcquireAt and DoneAt or Admit and Done: the learned
// rate stays a finite rate no lower than the SDK's minimum once set, the
// measured rate finite and not negative, a token's wait positive, and the
// bucket never below 0 nor its credit above what it holds.
func FuzzRate(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 2, 0, 0, 3, 1, 0})
	f.Add([]byte{1, 1, 1, 1, 0xff, 0, 0xfe, 1})
	f.Add([]byte{0xfc, 0xfc, 0xfd, 0xfc, 0xfc, 0xfc, 0xfd, 0x7c, 3, 0xfc})
	f.Fuzz(func(t *testing.T, ops []byte) {
		now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
		r, err := NewRate(RateConfig{FailFast: true, Clock: fixedClock{&now}})
		if err != nil {
			t.Fatal(err)
		}
		for i, op := range ops {
			switch op % 4 {
			case 0, 1:
				if op/4%2 == 1 {
					// A burst through Admit and Done, 10 000 a second:
					// their credits, and a throttle at its end for op%4 1.
					n := int(op/8) + 1
					for j := range n {
						now = now.Add(100 * time.Microsecond)
						err := r.Admit(t.Context())
						if re := (*RateError)(nil); err != nil && (!errors.As(err, &re) || re.Wait <= 0) {
							t.Fatalf("op %d: Admit = %v, want nil or a *RateError with a wait", i, err)
						}
						if err == nil {
							r.Done(op%4 == 1 && j == n-1)
						}
					}
					break
				}
				wait, ok := r.AcquireAt(now)
				if wait < 0 || (!ok && wait == 0) {
					t.Fatalf("op %d: AcquireAt = %v, %v", i, wait, ok)
				}
				if ok {
					r.DoneAt(now, op%4 == 1)
				}
			case 2:
				now = now.Add(time.Duration(op) * time.Millisecond)
			case 3:
				now = now.Add(time.Duration(op) * 50 * time.Millisecond)
			}
			if r.tokens < 0 || r.tokenCredit.left.Load() > max(int64(r.tokens), 0) {
				t.Fatalf("op %d: %v tokens, %d of them on credit", i, r.tokens, r.tokenCredit.left.Load())
			}
			s := r.Stats()
			if math.IsNaN(s.FillRate) || math.IsInf(s.FillRate, 0) || (s.Enabled && s.FillRate < 0.5) {
				t.Fatalf("op %d: fill rate %v (enabled %v)", i, s.FillRate, s.Enabled)
			}
			if math.IsNaN(s.Measured) || math.IsInf(s.Measured, 0) || s.Measured < 0 {
				t.Fatalf("op %d: measured rate %v", i, s.Measured)
			}
		}
	})
}

// fixedClock is a Clock that reads the time a test sets.
type fixedClock struct{ t *time.Time }

func (c fixedClock) Now() time.Time { return *c.t }
