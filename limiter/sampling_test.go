package limiter

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/breaker/breakertest"
)

// recorder is an Algorithm whose rule keeps its limit (1000) and keeps
// every sample it is fed, to see what sampling lets through.
type recorder struct {
	samples   *[]Sample
	clockless bool // as AIMD without a Timeout
}

func (recorder) validate() error { return nil }
func (r recorder) newRule() rule { return &recorderRule{r} }

type recorderRule struct{ recorder }

func (*recorderRule) bounds() (float64, float64, float64) { return 1000, 1, 1000 }
func (r *recorderRule) clocked() bool                     { return !r.clockless }
func (*recorderRule) idle(Sample, float64) bool           { return false }
func (r *recorderRule) update(limit float64, s Sample, _ backoff.Rand) float64 {
	*r.samples = append(*r.samples, s)
	return limit
}

// countingClock counts its reads.
type countingClock struct {
	*breakertest.Clock
	reads int
}

func (c *countingClock) Now() time.Time { c.reads++; return c.Clock.Now() }

// calls makes n calls one after the other, each taking every on the
// clock, ending with o.
func calls(t *testing.T, l *Limiter, clk *breakertest.Clock, n int, every time.Duration, o Outcome) {
	t.Helper()
	for range n {
		p, err := l.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		clk.Advance(every)
		p.Done(o)
	}
}

func TestSamplingRate(t *testing.T) {
	// At a million calls a second, once a window of 10 ms has measured the
	// rate, one call in N feeds the rule: N the largest power of two ≤
	// rate ÷ MinSampleRate (100), at most SampleEvery; each with its RTT.
	for _, c := range []struct{ every, want int }{{0, 16}, {1, 1}, {4, 4}, {64, 64}, {1024, 64}} {
		var got []Sample
		clk := breakertest.NewClock(time.Unix(0, 0))
		l := mustNew(t, Config{Algorithm: recorder{samples: &got}, Clock: clk, SampleEvery: c.every})
		calls(t, l, clk, 12_000, time.Microsecond, Success) // the first window
		got = got[:0]
		calls(t, l, clk, 64*100, time.Microsecond, Success)
		if len(got) != 64*100/c.want {
			t.Errorf("SampleEvery %d: 6400 calls at 1/µs fed %d samples, want 6400 / %d = %d", c.every, len(got), c.want, 6400/c.want)
		}
		for _, s := range got {
			if s.RTT != time.Microsecond || s.Dropped {
				t.Fatalf("SampleEvery %d: sample %+v, want an RTT of 1µs, not dropped", c.every, s)
			}
		}
	}
}

func TestSamplingLowRate(t *testing.T) {
	// At 1,000 calls a second every call is measured; after a burst, the
	// rate is measured again within 2N calls, and every call is measured
	// from then on.
	var got []Sample
	clk := breakertest.NewClock(time.Unix(0, 0))
	l := mustNew(t, Config{Algorithm: recorder{samples: &got}, Clock: clk})
	calls(t, l, clk, 100, time.Millisecond, Success)
	if len(got) != 100 {
		t.Errorf("100 calls at 1/ms fed %d samples, want 100", len(got))
	}
	calls(t, l, clk, 20_000, time.Microsecond, Success)
	if s := l.skip.Load() + 1; s != DefaultSampleEvery {
		t.Fatalf("after 20,000 calls at 1/µs: one call in %d measured, want %d", s, DefaultSampleEvery)
	}
	calls(t, l, clk, 2*DefaultSampleEvery, time.Millisecond, Success)
	got = got[:0]
	calls(t, l, clk, 100, time.Millisecond, Success)
	if len(got) != 100 {
		t.Errorf("back at 1 call/ms, after %d calls: 100 calls fed %d samples, want 100", 2*DefaultSampleEvery, len(got))
	}
}

func TestSamplingKeepsDrops(t *testing.T) {
	// However sparse the sampling, every drop reaches the rule: through
	// Done, Record then Release, and the retry.Admitter's Done and Release;
	// measured or not, at the time it came.
	var got []Sample
	clk := breakertest.NewClock(time.Unix(0, 0))
	l := mustNew(t, Config{Algorithm: recorder{samples: &got}, Clock: clk})
	calls(t, l, clk, 20_000, time.Microsecond, Success)
	if l.skip.Load() == 0 {
		t.Fatal("after 20,000 calls at 1/µs every call is still measured; the test needs sampling")
	}
	ways := []struct {
		name string
		drop func()
	}{
		{"Permit.Done", func() { p, _ := l.Acquire(context.Background()); clk.Advance(time.Microsecond); p.Done(Dropped) }},
		{"Permit.Record", func() {
			p, _ := l.Acquire(context.Background())
			clk.Advance(time.Microsecond)
			p.Record(Dropped)
			p.Release()
		}},
		{"Limiter.Done", func() { _ = l.Admit(context.Background()); clk.Advance(time.Microsecond); l.Done(true) }},
		{"Limiter.Release", func() {
			_ = l.Admit(context.Background())
			clk.Advance(time.Microsecond)
			l.Release(true, time.Microsecond)
		}},
	}
	for _, w := range ways {
		got = got[:0]
		start := clk.Now().Sub(epoch0)
		for range 100 {
			w.drop()
		}
		if len(got) != 100 {
			t.Errorf("%s: 100 drops fed %d samples, want 100", w.name, len(got))
		}
		for i, s := range got {
			if want := start + time.Duration(i+1)*time.Microsecond; !s.Dropped || s.Now != want {
				t.Fatalf("%s: drop %d fed %+v, want Dropped at %v", w.name, i+1, s, want)
			}
		}
	}
	checkIdle(t, l)
}

func TestClocklessRuleNeverReadsTheClock(t *testing.T) {
	// A rule that needs no RTT (AIMD without a Timeout) is fed every call,
	// and the clock is never read.
	var got []Sample
	clk := &countingClock{Clock: breakertest.NewClock(time.Unix(0, 0))}
	l := mustNew(t, Config{Algorithm: recorder{samples: &got, clockless: true}, Clock: clk})
	calls(t, l, clk.Clock, 1000, time.Microsecond, Success)
	calls(t, l, clk.Clock, 10, time.Microsecond, Dropped)
	_ = l.Admit(context.Background())
	l.Release(false, time.Microsecond)
	if len(got) != 1011 || clk.reads != 0 {
		t.Errorf("1,011 calls: %d samples, %d clock reads; want 1,011 and 0", len(got), clk.reads)
	}
	a := AIMD{Timeout: -1}.newRule()
	if a.clocked() || !(AIMD{}).newRule().clocked() {
		t.Errorf("AIMD clocked: %v without a Timeout, want false; %v with the default, want true", a.clocked(), (AIMD{}).newRule().clocked())
	}
}

// settle runs a closed loop on a virtual clock against a dependency with
// 8 workers and a service time of 100 µs: rounds of as many calls at once
// as the limit lets in, each taking 100 µs × max(1, calls ÷ 8) (they
// queue beyond 8), dropped if more than 24 were sent at once. At the
// settled limit calls come about 80,000 a second, so that sampling
// measures one in 8. It returns the mean limit over the last quarter of
// the rounds, and one in how many calls was measured at the end.
func settle(t *testing.T, cfg Config) (float64, int) {
	t.Helper()
	clk := breakertest.NewClock(time.Unix(0, 0))
	cfg.Clock = clk
	l := mustNew(t, cfg)
	const rounds = 20_000
	sum := 0.0
	ps := make([]Permit, 0, 1024)
	for r := range rounds {
		ps = ps[:0]
		for {
			p, ok := l.TryAcquire()
			if !ok {
				break
			}
			ps = append(ps, p)
		}
		n := len(ps)
		clk.Advance(100 * time.Microsecond * time.Duration(max(n, 8)) / 8)
		o := Success
		if n > 24 {
			o = Dropped
		}
		for i := range ps {
			ps[i].Done(o)
		}
		if r >= rounds*3/4 {
			sum += float64(n)
		}
	}
	checkIdle(t, l)
	return sum / (rounds / 4), int(l.skip.Load()) + 1
}

func TestSamplingConverges(t *testing.T) {
	// Each algorithm settles, sampled, where it settles measuring every
	// call (within 25 %), on the closed loop of settle.
	for _, alg := range []Algorithm{AIMD{Min: 1}, Vegas{}, Gradient2{Min: 1}} {
		t.Run(fmt.Sprintf("%T", alg), func(t *testing.T) {
			exact, _ := settle(t, Config{Algorithm: alg, SampleEvery: 1})
			sampled, every := settle(t, Config{Algorithm: alg})
			if every < 4 {
				t.Errorf("one call in %d measured at the end, want sampling (≥ 4)", every)
			}
			if sampled < exact*0.75 || sampled > exact*1.25 {
				t.Errorf("settled at %.1f sampled (one in %d), %.1f measuring every call; want within 25 %%", sampled, every, exact)
			}
			t.Logf("settled at %.1f sampled (one in %d), %.1f measuring every call", sampled, every, exact)
		})
	}
}
