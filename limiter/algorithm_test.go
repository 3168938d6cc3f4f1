package limiter

import (
	"math"
	"testing"
	"time"
)

// step is one sample fed to a rule, and the limit it must give.
type step struct {
	s    Sample
	want float64
}

const ms = time.Millisecond

// half is a source whose every draw is 0.5.
type half struct{}

func (half) Float64() float64 { return 0.5 }

// run feeds steps to r from limit, each with the draw u, and checks each
// limit against the published formula's, worked out by hand in the
// comments.
func run(t *testing.T, name string, r rule, limit float64, steps []step) {
	t.Helper()
	for i, st := range steps {
		got := r.update(limit, st.s, half{})
		if math.Abs(got-st.want) > 1e-9 {
			t.Fatalf("%s: step %d: update(%v, %+v) = %v, want %v", name, i+1, limit, st.s, got, st.want)
		}
		limit = got
	}
}

func TestAIMDRule(t *testing.T) {
	// limit ← ⌊limit × 0.9⌋ on a drop or an RTT over 5 s; limit + 1 if
	// InFlight × 2 ≥ limit; within [Min, Max].
	for _, c := range []struct {
		name  string
		alg   AIMD
		limit float64
		s     Sample
		want  float64
	}{
		{"grows when busy", AIMD{Initial: 30, Max: 40}, 30, Sample{RTT: ms, InFlight: 15}, 31},
		{"app-limited", AIMD{Initial: 30, Max: 40}, 30, Sample{RTT: ms, InFlight: 14}, 30},
		{"drop", AIMD{Initial: 30, Max: 40}, 30, Sample{RTT: ms, InFlight: 30, Dropped: true}, 27},
		{"timeout", AIMD{Initial: 30, Max: 40}, 30, Sample{RTT: 6 * time.Second, InFlight: 30}, 27},
		{"floor at Min 20", AIMD{}, 21, Sample{Dropped: true}, 20},
		{"cap at Max", AIMD{Initial: 30, Max: 40}, 40, Sample{RTT: ms, InFlight: 40}, 40},
		{"backoff 0.5", AIMD{Min: 1, Backoff: 0.5}, 30, Sample{Dropped: true}, 15},
		{"no timeout", AIMD{Timeout: -1}, 20, Sample{RTT: time.Hour, InFlight: 10}, 21},
	} {
		run(t, "AIMD "+c.name, c.alg.newRule(), c.limit, []step{{c.s, c.want}})
	}
	if i, lo, hi := (AIMD{}).newRule().bounds(); i != 20 || lo != 20 || hi != 200 {
		t.Errorf("AIMD{} bounds = %v, %v, %v, want Netflix's 20, 20, 200", i, lo, hi)
	}
}

func TestVegasRule(t *testing.T) {
	// queue = ⌈limit × (1 − noload/RTT)⌉; log10 L = 1 below 100, so
	// threshold 1, α 3, β 6.
	run(t, "Vegas", Vegas{}.newRule(), 20, []step{
		{Sample{RTT: 10 * ms, InFlight: 20}, 20},                  // the first RTT is RTTnoload
		{Sample{RTT: 10 * ms, InFlight: 20}, 26},                  // queue 0 ≤ 1: + β
		{Sample{RTT: 12500 * time.Microsecond, InFlight: 26}, 26}, // queue ⌈5.2⌉ = 6, within [α, β]
		{Sample{RTT: 10500 * time.Microsecond, InFlight: 26}, 27}, // queue ⌈1.24⌉ = 2 < α: + log10 L
		{Sample{RTT: 20 * ms, InFlight: 27}, 26},                  // queue 14 > β: − log10 L
		{Sample{RTT: 10 * ms, InFlight: 26, Dropped: true}, 25},   // a drop: − log10 L
		{Sample{RTT: 20 * ms, InFlight: 12}, 25},                  // 24 < 25: app-limited
		{Sample{RTT: 5 * ms, InFlight: 25}, 25},                   // a new RTTnoload
	})
	// With Smoothing 0.5 the step is halved; above 100, log10 L is 2 and
	// β 12.
	run(t, "Vegas smoothing", Vegas{Smoothing: 0.5}.newRule(), 20, []step{
		{Sample{RTT: 10 * ms, InFlight: 20}, 20},
		{Sample{RTT: 10 * ms, InFlight: 20}, 23},
	})
	run(t, "Vegas 150", Vegas{}.newRule(), 150, []step{
		{Sample{RTT: 10 * ms, InFlight: 150}, 150},
		{Sample{RTT: 10 * ms, InFlight: 150}, 162},
	})
}

func TestVegasProbe(t *testing.T) {
	// ProbeMultiplier 1 and a draw of 0.5 (jitter 0.75): the probe comes at
	// the 15th sample (0.75 × 1 × 20 ≤ 15) and measures RTTnoload again,
	// raised at most MaxDrift times.
	for _, c := range []struct {
		name   string
		drift  float64
		noload time.Duration
	}{{"guarded", 0, 20 * ms}, {"unguarded", 1e6, 30 * ms}} {
		r := Vegas{ProbeMultiplier: 1, MaxDrift: c.drift}.newRule().(*vegas)
		for i := range 14 {
			r.update(20, Sample{RTT: 10 * ms, InFlight: 0}, half{})
			if r.noload != 10*ms {
				t.Fatalf("%s: sample %d: RTTnoload = %v, want 10ms", c.name, i+1, r.noload)
			}
		}
		r.update(20, Sample{RTT: 30 * ms}, half{})
		if r.noload != c.noload {
			t.Errorf("%s: RTTnoload after the probe of a 30ms RTT = %v, want %v", c.name, r.noload, c.noload)
		}
	}
}

func TestGradient2Rule(t *testing.T) {
	// gradient = max(0.5, min(1, 1.5 × long / RTT)); new = limit × gradient
	// + 4; limit ← 0.8 × limit + 0.2 × new. Min 1, so that the floor of
	// 20 hides nothing; no probes.
	g := Gradient2{Min: 1, ProbeInterval: -1}
	run(t, "Gradient2", g.newRule(), 20, []step{
		{Sample{RTT: 10 * ms, InFlight: 20}, 20.8}, // long 10ms, gradient 1
		{Sample{RTT: 30 * ms, InFlight: 20}, 21.6}, // long 20ms: 1.5 × 20/30 = 1
		// long (10+30+60)/3 = 33.3ms, kept at 2 × the 10ms minimum:
		// gradient 1.5 × 20/60 = 0.5, new 14.8
		{Sample{RTT: 60 * ms, InFlight: 21}, 20.24},
		{Sample{RTT: 10 * ms, InFlight: 10}, 20.24}, // 10 < 20.24/2: app-limited
		// A drop halves the limit, once per baseline RTT (at most 20ms
		// here): a burst of drops cuts it once.
		{Sample{Now: time.Second, RTT: 10 * ms, InFlight: 20, Dropped: true}, 10.12},
		{Sample{Now: time.Second + 5*ms, InFlight: 20, Dropped: true}, 10.12},
		{Sample{Now: time.Second + 10*ms, RTT: 10 * ms, InFlight: 20, Dropped: true}, 10.12},
		{Sample{Now: 2 * time.Second, InFlight: 20, Dropped: true}, 5.06},
		{Sample{Now: 3 * time.Second, InFlight: 20, Dropped: true}, 2.53},
	})
	// Without the drift guard the third step's gradient is 1.5 × 33.3/60.
	g.MaxDrift = 1e6
	run(t, "Gradient2 unguarded", g.newRule(), 20, []step{
		{Sample{RTT: 10 * ms, InFlight: 20}, 20.8},
		{Sample{RTT: 30 * ms, InFlight: 20}, 21.6},
		{Sample{RTT: 60 * ms, InFlight: 21}, 21.6*0.8 + (21.6*1.5*(100.0/3)/60+4)*0.2},
	})
	if i, lo, hi := (Gradient2{}).newRule().bounds(); i != 20 || lo != 20 || hi != 200 {
		t.Errorf("Gradient2{} bounds = %v, %v, %v, want Netflix's 20, 20, 200", i, lo, hi)
	}
}

func TestGradient2Baseline(t *testing.T) {
	// The long RTT is a plain average over 10 samples, then exponential
	// with factor 2/(LongWindow+1); cut by 5 % when over twice the RTT.
	r := Gradient2{LongWindow: 9, MaxDrift: 1e6, ProbeInterval: -1}.newRule().(*gradient2)
	for range 10 {
		r.update(20, Sample{RTT: 10 * ms, InFlight: 20}, half{})
	}
	r.update(20, Sample{RTT: 20 * ms, InFlight: 20}, half{})
	if want := float64(12 * ms); math.Abs(r.long-want) > 1 {
		t.Errorf("long RTT after 10 × 10ms and 20ms = %v, want 0.8 × 10ms + 0.2 × 20ms = 12ms", time.Duration(r.long))
	}
	r = Gradient2{MaxDrift: 1e6, ProbeInterval: -1}.newRule().(*gradient2)
	r.update(20, Sample{RTT: 100 * ms, InFlight: 20}, half{})
	r.update(20, Sample{RTT: 10 * ms, InFlight: 20}, half{})
	if want := float64(55*ms) * 0.95; math.Abs(r.long-want) > 1 {
		t.Errorf("long RTT after 100ms and 10ms = %v, want (100+10)/2 × 0.95 = 52.25ms", time.Duration(r.long))
	}
}

func TestGradient2Probe(t *testing.T) {
	// Every minute (a draw of 0.5: no jitter) the limit drops to Min until
	// 2 calls started since have ended; their smallest RTT is the new
	// minimum, and the limit returns.
	r := Gradient2{Min: 1, ProbeInterval: time.Minute, ProbeSamples: 2}.newRule().(*gradient2)
	limit := r.update(20, Sample{Now: 0, RTT: 10 * ms, InFlight: 20}, half{})
	for _, st := range []struct {
		now, rtt time.Duration
		want     float64
	}{
		{61 * time.Second, 10 * ms, 1}, // the probe starts
		{61500 * ms, time.Second, 1},   // started before it: not counted
		{62 * time.Second, 40 * ms, 1}, // 1 of 2
		{62100 * ms, 50 * ms, limit},   // 2 of 2: the limit returns
	} {
		got := r.update(limit, Sample{Now: st.now, RTT: st.rtt, InFlight: 20}, half{})
		if got != st.want {
			t.Fatalf("update at %v (RTT %v) = %v, want %v", st.now, st.rtt, got, st.want)
		}
	}
	if r.minRTT != 40*ms || r.nextProbe != 62100*ms+time.Minute {
		t.Errorf("after the probe: minimum %v, next probe at %v; want 40ms, at 2m2.1s", r.minRTT, r.nextProbe)
	}
	// ±15 % jitter: a draw of 0 probes after 51 s, one near 1 after 69 s.
	if lo, hi := r.jittered(0), r.jittered(1); lo != 51*time.Second || hi != 69*time.Second {
		t.Errorf("jittered(0), jittered(1) = %v, %v, want 51s, 69s", lo, hi)
	}
}

func TestGradient2ProbeEndsEarly(t *testing.T) {
	// A probe of 50 calls ends at its first call no slower than the
	// minimum (the minimum cannot have risen), or, with one call measured,
	// after ProbeInterval / 20 (3 s): at Min 1, 50 calls of a service that
	// takes 1 s held the limit at 1 for 50 s of each minute.
	for _, c := range []struct {
		name  string
		rtts  []time.Duration // one a second from 62 s, the probe from 61 s
		calls int             // the call the probe ends with
		min   time.Duration   // the minimum then
	}{
		{"as fast as the minimum", []time.Duration{time.Second}, 1, time.Second},
		// The first call started before the probe: not counted.
		{"slower, until 3 s", []time.Duration{1500 * ms, 1200 * ms, 1300 * ms, 1100 * ms}, 3, 1200 * ms},
	} {
		r := Gradient2{Min: 1, ProbeInterval: time.Minute}.newRule().(*gradient2)
		limit := r.update(100, Sample{Now: 0, RTT: time.Second, InFlight: 100}, half{})
		if got := r.update(limit, Sample{Now: 61 * time.Second, RTT: time.Second, InFlight: 100}, half{}); got != 1 {
			t.Fatalf("%s: update at 61s = %v, want 1 (the probe starts)", c.name, got)
		}
		for i, rtt := range c.rtts {
			now := 62*time.Second + time.Duration(i)*time.Second
			got := r.update(1, Sample{Now: now, RTT: rtt, InFlight: 1}, half{})
			if want := map[bool]float64{true: limit, false: 1}[i+1 == c.calls]; got != want {
				t.Fatalf("%s: call %d (RTT %v at %v) = %v, want %v", c.name, i+1, rtt, now, got, want)
			}
			if i+1 == c.calls {
				break
			}
		}
		if r.probing || r.minRTT != c.min {
			t.Errorf("%s: after the probe: probing %v, minimum %v; want false, %v", c.name, r.probing, r.minRTT, c.min)
		}
	}
}

func TestGradient2DriftGuard(t *testing.T) {
	// A 19-minute incident that makes every RTT 5 times longer: unguarded, the baseline
	// drifts up to the incident's RTT and the limit climbs back to its
	// maximum; guarded, it stays down. On a virtual clock, one call per
	// 10 ms, the client always busy.
	final := func(g Gradient2) float64 {
		r := g.newRule()
		limit, _, _ := r.bounds()
		now := time.Duration(0)
		for i := range 120_000 {
			rtt := 10 * ms
			if i >= 6000 {
				rtt = 50 * ms
			}
			now += 10 * ms
			limit = r.update(limit, Sample{Now: now, RTT: rtt, InFlight: int(limit)}, half{})
		}
		return limit
	}
	guarded := final(Gradient2{Min: 1, Max: 100, ProbeInterval: -1})
	unguarded := final(Gradient2{Min: 1, Max: 100, ProbeInterval: -1, MaxDrift: 1e6})
	if !(guarded < 20 && unguarded > 90) {
		t.Errorf("limit after a 19-minute incident: guarded %.1f, unguarded %.1f; want < 20 and > 90", guarded, unguarded)
	}
}

func TestLog10i(t *testing.T) {
	for _, c := range []struct{ n, want float64 }{{0, 1}, {1, 1}, {9.9, 1}, {10, 1}, {99, 1}, {100, 2}, {999.5, 2}, {1000, 3}, {12345, 4}, {1e6, 6}} {
		if got := log10i(c.n); got != c.want {
			t.Errorf("log10i(%v) = %v, want %v (Netflix's Log10RootIntFunction)", c.n, got, c.want)
		}
	}
}

func TestAIMDIdle(t *testing.T) {
	// Without a Timeout, AIMD says a sample is idle (so the Limiter skips
	// its lock) only if its update would leave the limit as it is, and
	// never for a drop.
	r := AIMD{Min: 1, Max: 10, Timeout: -1}.newRule()
	for limit := 1.0; limit <= 10; limit++ {
		for inflight := range 12 {
			for _, dropped := range []bool{false, true} {
				s := Sample{InFlight: inflight, Dropped: dropped}
				idle := r.idle(s, limit)
				if same := r.update(limit, s, half{}) == limit; idle && !same || !idle && !dropped && same && limit < 10 {
					t.Errorf("limit %v, %+v: idle = %v, but update moves the limit: %v", limit, s, idle, !same)
				}
			}
		}
	}
	if (AIMD{}).newRule().idle(Sample{InFlight: 1}, 20) {
		t.Error("AIMD with a Timeout: idle = true, want false (its samples carry RTTs)")
	}
}
