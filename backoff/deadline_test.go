package backoff

import (
	"math"
	"testing"
	"time"
)

func TestFitDeadline(t *testing.T) {
	const s, ms = time.Second, time.Millisecond
	tests := []struct {
		name                string
		wait, left, reserve time.Duration
		hint                bool
		want                time.Duration
		ok                  bool
	}{
		{"a wait that leaves the reserve is kept", 2 * s, 10 * s, 0, false, 2 * s, true},
		{"a wait ending exactly at the reserve is kept", 9900 * ms, 10 * s, 0, false, 9900 * ms, true},
		{"a wait ending inside the reserve is shortened", 9950 * ms, 10 * s, 0, false, 9900 * ms, true},
		{"a wait past the deadline is shortened", 8 * s, 3 * s, 0, false, 2900 * ms, true},
		{"the attempt timeout takes the reserve's place", 8 * s, 3 * s, 2 * s, false, s, true},
		{"a negative reserve means the default", 8 * s, 3 * s, -1, false, 2900 * ms, true},
		{"no more than the reserve left stops", 0, 100 * ms, 0, false, 0, false},
		{"less than the attempt timeout left stops", ms, 2 * s, 3 * s, false, 0, false},
		{"a passed deadline stops", 0, -s, 0, false, 0, false},
		{"a zero wait is kept", 0, 10 * s, 0, false, 0, true},
		{"a hint within the deadline is kept, reserve or not", 9950 * ms, 10 * s, 0, true, 9950 * ms, true},
		{"a hint ending at the deadline stops", 10 * s, 10 * s, 0, true, 10 * s, false},
		{"a hint past the deadline is never shortened", 30 * s, 10 * s, 0, true, 30 * s, false},
		{"no overflow", math.MaxInt64, math.MaxInt64, math.MinInt64, false, math.MaxInt64 - DeadlineReserve, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := FitDeadline(tt.wait, tt.left, tt.reserve, tt.hint)
			if got != tt.want || ok != tt.ok {
				t.Errorf("FitDeadline(%v, %v, %v, %v) = %v, %v, want %v, %v", tt.wait, tt.left, tt.reserve, tt.hint, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// FuzzFitDeadline checks the rule's invariants for any input: a wait from
// the schedule never grows, never goes negative and, when the loop goes
// on, ends at least the reserve before the deadline, and it is shortened
// only when it would not; the loop stops exactly when no more than the
// reserve is left. A hint is returned as it is, and stops the loop exactly
// when it ends at or after the deadline.
func FuzzFitDeadline(f *testing.F) {
	f.Add(int64(2*time.Second), int64(10*time.Second), int64(0), false)
	f.Add(int64(30*time.Second), int64(10*time.Second), int64(0), true)
	f.Add(int64(math.MaxInt64), int64(math.MinInt64), int64(math.MaxInt64), false)
	f.Add(int64(-1), int64(math.MaxInt64), int64(1), false)
	f.Fuzz(func(t *testing.T, wait, left, reserve int64, hint bool) {
		w, l, r := time.Duration(wait), time.Duration(left), time.Duration(reserve)
		got, ok := FitDeadline(w, l, r, hint)
		if hint {
			if got != w || ok != (w < l) {
				t.Fatalf("FitDeadline(%v, %v, %v, hint) = %v, %v, want %v, %v", w, l, r, got, ok, w, w < l)
			}
			return
		}
		need := r
		if need <= 0 {
			need = DeadlineReserve
		}
		if ok != (l > need) {
			t.Fatalf("FitDeadline(%v, %v, %v) goes on = %v, want %v: %v left, %v needed", w, l, r, ok, l > need, l, need)
		}
		if !ok {
			return
		}
		if got < 0 || got > max(w, 0) {
			t.Fatalf("FitDeadline(%v, %v, %v) = %v, want within [0, %v]", w, l, r, got, max(w, 0))
		}
		if got > l-need {
			t.Fatalf("FitDeadline(%v, %v, %v) = %v ends %v before the deadline, want at least %v", w, l, r, got, l-got, need)
		}
		if w >= 0 && w <= l-need && got != w {
			t.Fatalf("FitDeadline(%v, %v, %v) = %v, want the wait unshortened: it leaves %v", w, l, r, got, l-w)
		}
	})
}
