package limiter

import (
	"fmt"
	"math"
	"time"

	"github.com/again-go/again/backoff"
)

// Sample is what an adaptive limit learns from one call that ended: the
// input of its update rule.
type Sample struct {
	// Now is when the call ended, on the Limiter's clock (a duration from
	// an arbitrary origin).
	Now time.Duration
	// RTT is how long the call took, from its permit to its outcome; zero
	// when it was not measured (the call dropped without a measure).
	RTT time.Duration
	// InFlight is how many calls were in flight as it ended, itself
	// included.
	InFlight int
	// Dropped is a loss signal: the call timed out, or the dependency
	// refused it for overload (HTTP 429 or 503, gRPC RESOURCE_EXHAUSTED or
	// UNAVAILABLE).
	Dropped bool
}

// Algorithm is the rule that moves an adaptive limit: AIMD, Vegas or
// Gradient2, whose zero values are Netflix concurrency-limits' published
// defaults. An Algorithm is a configuration value, safe to copy and to
// share: each Limiter made with it (each key of a Group) keeps the rule's
// state of its own.
type Algorithm interface {
	validate() error
	newRule() rule
}

// rule is an Algorithm's state: a pure update rule, samples in, a new
// limit out, on the time the samples carry (so that a virtual clock drives
// it). The Limiter calls it under its lock, one sample at a time.
type rule interface {
	// bounds returns the initial limit and the range it stays in.
	bounds() (initial, lo, hi float64)
	// update returns the limit after sample s, from limit; rnd gives the
	// uniform draws in [0, 1) of the jitter, drawn only when needed.
	update(limit float64, s Sample, rnd backoff.Rand) float64
	// clocked reports whether the rule learns from RTTs or times: if not,
	// its samples carry neither, and the Limiter never reads its clock.
	clocked() bool
	// idle reports that s would leave the rule's state and limit as they
	// are, so that the Limiter need not take its lock to feed it. Only a
	// rule whose whole state is its limit (one not clocked) may say so;
	// limit is the Limiter's, read without the lock.
	idle(s Sample, limit float64) bool
}

// log10i is Netflix's Log10RootIntFunction: ⌊log10 n⌋, at least 1 below
// 1000 (so that a small limit still moves).
func log10i(n float64) float64 {
	if n < 100 {
		return 1 // ⌊log10 n⌋ is 0 or 1 here: at least 1
	}
	// Comparisons, not math.Log10: this runs on every call's sample.
	v := 2.0
	for p := 1000.0; n >= p; p *= 10 {
		v++
	}
	return v
}

func clamp(v, lo, hi float64) float64 { return min(max(v, lo), hi) }

// orDefault returns v, or d when v is zero.
func orDefault[T int | float64 | time.Duration](v, d T) T {
	if v == 0 {
		return d
	}
	return v
}

// checkLimits validates an algorithm's Initial (unless zero: the default
// is kept within range), Min and Max, with their defaults applied, naming
// the fields after the type.
func checkLimits(typ string, initial, lo, hi int) error {
	switch {
	case lo < 1:
		return &FieldError{typ + ".Min", fmt.Sprint(lo), "≥ 1 (0 means the default)"}
	case hi < lo:
		return &FieldError{typ + ".Max", fmt.Sprint(hi), fmt.Sprintf("≥ Min (%d)", lo)}
	case initial != 0 && (initial < lo || initial > hi):
		return &FieldError{typ + ".Initial", fmt.Sprint(initial), fmt.Sprintf("in [Min, Max] = [%d, %d]", lo, hi)}
	}
	return nil
}

// Defaults of AIMD, from Netflix concurrency-limits' AIMDLimit.
const (
	DefaultAIMDInitial = 20
	DefaultAIMDMin     = 20
	DefaultAIMDMax     = 200
	DefaultAIMDBackoff = 0.9
	DefaultAIMDTimeout = 5 * time.Second
)

// AIMD is additive increase, multiplicative decrease, as Netflix
// concurrency-limits' AIMDLimit: after each call,
//
//	limit = ⌊limit × Backoff⌋   if it dropped or took longer than Timeout
//	limit = limit + 1            else, if InFlight × 2 ≥ limit
//
// (a limit far above the calls in flight does not grow: the client, not
// the dependency, is what limits it), kept within [Min, Max]. It learns
// from losses alone, not latency. The zero AIMD is Netflix's: initial 20,
// min 20, max 200, backoff 0.9, timeout 5 s; set Min lower for a
// dependency that takes fewer than 20 calls at once.
type AIMD struct {
	Initial, Min, Max int // zero means 20, 20 and 200
	// Backoff is the factor of a decrease; zero means 0.9, otherwise it
	// must be in [0.5, 1).
	Backoff float64
	// Timeout is the RTT above which a call counts as dropped; zero means
	// 5 s, negative none. When calls are frequent only the measured ones
	// are compared with it (see the package doc's Sampling); a call that
	// ended Dropped (the integrations' timeouts) always counts. Without
	// it, AIMD learns from every call and never reads the clock.
	Timeout time.Duration
}

func (a AIMD) limits() (int, int, int) {
	lo := orDefault(a.Min, DefaultAIMDMin)
	return min(max(orDefault(a.Initial, DefaultAIMDInitial), lo), orDefault(a.Max, DefaultAIMDMax)),
		lo, orDefault(a.Max, DefaultAIMDMax)
}

func (a AIMD) validate() error {
	if a.Backoff != 0 && !(a.Backoff >= 0.5 && a.Backoff < 1) {
		return &FieldError{"AIMD.Backoff", fmt.Sprint(a.Backoff), "in [0.5, 1) (0 means 0.9)"}
	}
	_, lo, hi := a.limits()
	return checkLimits("AIMD", a.Initial, lo, hi)
}

func (a AIMD) newRule() rule {
	i, lo, hi := a.limits()
	return &aimd{init: float64(i), lo: float64(lo), hi: float64(hi),
		backoff: orDefault(a.Backoff, DefaultAIMDBackoff), timeout: orDefault(a.Timeout, DefaultAIMDTimeout)}
}

type aimd struct {
	init, lo, hi float64
	backoff      float64
	timeout      time.Duration
}

func (r *aimd) bounds() (float64, float64, float64) { return r.init, r.lo, r.hi }

// clocked: AIMD needs an RTT only to compare it with its Timeout.
func (r *aimd) clocked() bool { return r.timeout > 0 }

// idle: without a Timeout, a success leaves the limit where it is while
// fewer than half of it are in flight, or at Max (the limit is a whole
// number within [Min, Max], so the Limiter's is AIMD's own).
func (r *aimd) idle(s Sample, limit float64) bool {
	return r.timeout <= 0 && !s.Dropped && (float64(s.InFlight)*2 < limit || limit >= r.hi)
}

func (r *aimd) update(limit float64, s Sample, _ backoff.Rand) float64 {
	switch {
	case s.Dropped || r.timeout > 0 && s.RTT > r.timeout:
		limit = math.Floor(limit * r.backoff)
	case float64(s.InFlight)*2 >= limit:
		limit++
	}
	return clamp(limit, r.lo, r.hi)
}

// Defaults of Vegas, from Netflix concurrency-limits' VegasLimit, and of
// the drift guard.
const (
	DefaultVegasInitial         = 20
	DefaultVegasMax             = 1000
	DefaultVegasSmoothing       = 1.0
	DefaultVegasProbeMultiplier = 30
	DefaultMaxDrift             = 2.0
)

// Vegas is TCP Vegas's delay-based rule, as Netflix concurrency-limits'
// VegasLimit: with RTTnoload the smallest RTT seen, each call estimates
// the queue at the dependency as
//
//	queue = ⌈limit × (1 − RTTnoload / RTT)⌉
//
// and, with α = 3·log10 L, β = 6·log10 L and threshold log10 L (log10 L =
// ⌊log10 limit⌋, at least 1 below 1000), moves the limit to
//
//	limit − log10 L   if the call dropped
//	unchanged         else, if InFlight × 2 < limit (the client limits it)
//	limit + β         if queue ≤ threshold
//	limit + log10 L   if queue < α
//	limit − log10 L   if queue > β
//
// (unchanged between α and β), within [1, Max], then smoothed:
// limit + Smoothing × (new − limit).
//
// Re-probing: RTTnoload only falls, so after a jittered number of calls,
// Multiplier × limit × u with u uniform in [0.5, 1), it is measured again
// from the next call (Netflix's probe). The drift guard: a probe raises
// it at most MaxDrift times, so that a probe taken during a long incident,
// whose every RTT is high, does not make the incident the new normal.
//
// The zero Vegas is Netflix's: initial 20, max 1000, smoothing 1, probe
// multiplier 30, with a MaxDrift of 2.
type Vegas struct {
	Initial, Max int // zero means 20 and 1000
	// Smoothing weighs each new limit against the last; zero means 1 (no
	// smoothing), otherwise it must be in (0, 1].
	Smoothing float64
	// ProbeMultiplier sets how often RTTnoload is measured again; zero
	// means 30, negative never.
	ProbeMultiplier int
	// MaxDrift is the most a probe raises RTTnoload by, as a factor; zero
	// means 2, otherwise it must be ≥ 1.
	MaxDrift float64
}

func (v Vegas) limits() (int, int, int) {
	hi := orDefault(v.Max, DefaultVegasMax)
	return min(orDefault(v.Initial, DefaultVegasInitial), hi), 1, hi
}

func (v Vegas) validate() error {
	switch {
	case v.Smoothing != 0 && !(v.Smoothing > 0 && v.Smoothing <= 1):
		return &FieldError{"Vegas.Smoothing", fmt.Sprint(v.Smoothing), "in (0, 1] (0 means 1)"}
	case v.MaxDrift != 0 && !(v.MaxDrift >= 1 && !math.IsInf(v.MaxDrift, 1)):
		return &FieldError{"Vegas.MaxDrift", fmt.Sprint(v.MaxDrift), "a finite number ≥ 1 (0 means 2)"}
	}
	_, lo, hi := v.limits()
	return checkLimits("Vegas", v.Initial, lo, hi)
}

func (v Vegas) newRule() rule {
	i, _, hi := v.limits()
	return &vegas{init: float64(i), hi: float64(hi), smoothing: orDefault(v.Smoothing, DefaultVegasSmoothing),
		probe: float64(orDefault(v.ProbeMultiplier, DefaultVegasProbeMultiplier)), drift: orDefault(v.MaxDrift, DefaultMaxDrift)}
}

type vegas struct {
	init, hi   float64
	smoothing  float64
	probe      float64 // the probe multiplier; ≤ 0: never
	drift      float64
	noload     time.Duration // RTTnoload; 0 before the first sample
	probeCount float64
	jitter     float64 // in [0.5, 1); 0 until the first sample draws it
}

func (r *vegas) bounds() (float64, float64, float64) { return r.init, 1, r.hi }

func (r *vegas) clocked() bool             { return true }
func (r *vegas) idle(Sample, float64) bool { return false }

func (r *vegas) update(limit float64, s Sample, rnd backoff.Rand) float64 {
	if s.RTT <= 0 {
		if s.Dropped {
			return r.smooth(limit, limit-log10i(limit))
		}
		return limit
	}
	if r.jitter == 0 {
		r.jitter = 0.5 + rnd.Float64()/2
	}
	r.probeCount++
	if r.probe > 0 && r.jitter*r.probe*limit <= r.probeCount {
		r.jitter, r.probeCount = 0.5+rnd.Float64()/2, 0
		if r.noload > 0 {
			r.noload = min(s.RTT, time.Duration(float64(r.noload)*r.drift))
		} else {
			r.noload = s.RTT
		}
		return limit
	}
	if r.noload == 0 || s.RTT < r.noload {
		r.noload = s.RTT
		return limit
	}
	queue := math.Ceil(limit * (1 - float64(r.noload)/float64(s.RTT)))
	l := log10i(limit)
	var next float64
	switch {
	case s.Dropped:
		next = limit - l
	case float64(s.InFlight)*2 < limit:
		return limit
	case queue <= l:
		next = limit + 6*l
	case queue < 3*l:
		next = limit + l
	case queue > 6*l:
		next = limit - l
	default:
		return limit
	}
	return r.smooth(limit, next)
}

func (r *vegas) smooth(limit, next float64) float64 {
	next = clamp(next, 1, r.hi)
	return (1-r.smoothing)*limit + r.smoothing*next
}

// Defaults of Gradient2, from Netflix concurrency-limits' Gradient2Limit,
// and of its re-probed minimum RTT (Envoy's adaptive concurrency filter's
// interval, jitter and request count).
const (
	DefaultGradientInitial    = 20
	DefaultGradientMin        = 20
	DefaultGradientMax        = 200
	DefaultGradientSmoothing  = 0.2
	DefaultGradientTolerance  = 1.5
	DefaultGradientQueueSize  = 4
	DefaultGradientLongWindow = 600
	DefaultProbeInterval      = time.Minute
	DefaultProbeSamples       = 50
	// ProbeJitter is the jitter of a probe interval: ±15 %, so that the
	// hosts of a fleet do not measure their minimum at the same moment.
	ProbeJitter = 0.15
)

// gradientWarmup is how many first samples the long RTT averages plainly
// before it turns exponential (Netflix's ExpAvgMeasurement(600, 10)).
const gradientWarmup = 10

// Gradient2 is Netflix concurrency-limits' Gradient2Limit: the limit
// follows the ratio of a long-term average RTT (the baseline: an
// exponential average over LongWindow calls) to each call's RTT,
//
//	gradient = max(0.5, min(1, Tolerance × long / RTT))
//	new      = limit × gradient + QueueSize
//	limit    = limit × (1 − Smoothing) + new × Smoothing
//
// within [Min, Max], unchanged while InFlight < limit / 2 (the client
// limits it). When the long RTT is more than twice the call's, it is cut
// by 5 % each call (Netflix's recovery after an incident).
//
// Drops: Netflix's rule ignores them; here a dropped call halves the
// limit, at most once per baseline RTT (the long average), as TCP cuts
// its window once per round trip of losses. Once, because the calls that
// end within that time were mostly admitted under the limit before the
// cut, so their drops say nothing of the new one: when a server's latency
// crosses its clients' timeout, every call in flight is dropped within a
// moment, and cutting for each (by the smoothed gradient's floor of 0.5,
// about 10 % each) took a limit of 200 down to 8 (in again sim
// outage --shed adaptive). Halving, because a latency within Tolerance ×
// the baseline never moves the gradient, however close to the timeout:
// the drops are then the only signal, and a smoothed cut of 10 % is
// undone by the next dozen successes.
//
// The drift guard: in a long incident the long average drifts up to the
// incident's RTT, the gradient returns to 1 and the limit grows back while
// the dependency is still overloaded (failsafe-go #127). The long RTT is
// therefore kept at most MaxDrift times the minimum RTT, and that minimum
// is measured again as Envoy's adaptive concurrency filter does: every
// ProbeInterval (±15 % jitter, so that the hosts of a fleet do not probe
// in step) the limit drops to Min until ProbeSamples calls started since
// have ended, and the smallest of their RTTs, measured without the
// client's own queueing, is the new minimum; the limit then returns to
// where it was. A dependency that really became slower is so followed
// at the next probe, and one slowed by load is not. A probe ends sooner
// once it measured one call no slower than the minimum (which it was to
// let rise: every other sample lowers it already), or once it lasted
// ProbeInterval / 20 (3 s by default) and measured a call, so that it
// holds the limit at Min for about 5 % of the time, not 50 calls: at
// Min 1, 50 calls of a dependency that takes 1 s held the limit at 1 for
// 50 s in each minute.
//
// The zero Gradient2 is Netflix's: initial 20, min 20, max 200, smoothing
// 0.2, tolerance 1.5, queue size 4, long window 600, with a MaxDrift of 2,
// and probes every minute of 50 calls. Set Min lower for a dependency that
// takes fewer than 20 calls at once.
type Gradient2 struct {
	Initial, Min, Max int // zero means 20, 20 and 200
	// Smoothing weighs each new limit against the last; zero means 0.2,
	// otherwise it must be in (0, 1].
	Smoothing float64
	// Tolerance is how much above the baseline an RTT may be before the
	// limit falls; zero means 1.5, otherwise it must be ≥ 1.
	Tolerance float64
	// QueueSize is added at each update, so that the limit probes upward;
	// zero means 4, negative 0.
	QueueSize int
	// LongWindow is the number of calls the baseline averages over; zero
	// means 600.
	LongWindow int
	// MaxDrift bounds the baseline to this many times the minimum RTT;
	// zero means 2, otherwise it must be ≥ 1.
	MaxDrift float64
	// ProbeInterval is how often the minimum RTT is measured again; zero
	// means 1 minute, negative never (the smallest RTT ever seen is kept).
	ProbeInterval time.Duration
	// ProbeSamples is how many calls a probe measures at most; zero
	// means 50.
	ProbeSamples int
}

func (g Gradient2) limits() (int, int, int) {
	lo, hi := orDefault(g.Min, DefaultGradientMin), orDefault(g.Max, DefaultGradientMax)
	return min(max(orDefault(g.Initial, DefaultGradientInitial), lo), hi), lo, hi
}

func (g Gradient2) validate() error {
	switch {
	case g.Smoothing != 0 && !(g.Smoothing > 0 && g.Smoothing <= 1):
		return &FieldError{"Gradient2.Smoothing", fmt.Sprint(g.Smoothing), "in (0, 1] (0 means 0.2)"}
	case g.Tolerance != 0 && !(g.Tolerance >= 1 && !math.IsInf(g.Tolerance, 1)):
		return &FieldError{"Gradient2.Tolerance", fmt.Sprint(g.Tolerance), "a finite number ≥ 1 (0 means 1.5)"}
	case g.LongWindow < 0:
		return &FieldError{"Gradient2.LongWindow", fmt.Sprint(g.LongWindow), "≥ 0 (0 means 600)"}
	case g.MaxDrift != 0 && !(g.MaxDrift >= 1 && !math.IsInf(g.MaxDrift, 1)):
		return &FieldError{"Gradient2.MaxDrift", fmt.Sprint(g.MaxDrift), "a finite number ≥ 1 (0 means 2)"}
	case g.ProbeSamples < 0:
		return &FieldError{"Gradient2.ProbeSamples", fmt.Sprint(g.ProbeSamples), "≥ 0 (0 means 50)"}
	}
	_, lo, hi := g.limits()
	return checkLimits("Gradient2", g.Initial, lo, hi)
}

func (g Gradient2) newRule() rule {
	i, lo, hi := g.limits()
	window := orDefault(g.LongWindow, DefaultGradientLongWindow)
	return &gradient2{init: float64(i), lo: float64(lo), hi: float64(hi),
		smoothing: orDefault(g.Smoothing, DefaultGradientSmoothing),
		tolerance: orDefault(g.Tolerance, DefaultGradientTolerance),
		queue:     float64(max(orDefault(g.QueueSize, DefaultGradientQueueSize), 0)),
		factor:    2 / (float64(window) + 1),
		drift:     orDefault(g.MaxDrift, DefaultMaxDrift),
		interval:  orDefault(g.ProbeInterval, DefaultProbeInterval),
		samples:   orDefault(g.ProbeSamples, DefaultProbeSamples)}
}

type gradient2 struct {
	init, lo, hi float64
	smoothing    float64
	tolerance    float64
	queue        float64
	factor       float64 // of the exponential average: 2 / (LongWindow + 1)
	drift        float64
	interval     time.Duration // ≤ 0: no probes
	samples      int

	long, sum float64 // the baseline, and the warm-up's sum
	n         int     // samples averaged, up to gradientWarmup

	minRTT    time.Duration // the minimum RTT; 0 before the first sample
	nextProbe time.Duration // when the next probe starts; 0 before the first sample
	// A probe under way: since when, the limit to return to, and the
	// samples measured and their minimum.
	probing    bool
	probeStart time.Duration
	saved      float64
	probed     int
	probeMin   time.Duration

	cut  time.Duration // when a drop last cut the limit; cuts tells it was set
	cuts bool
}

func (r *gradient2) bounds() (float64, float64, float64) { return r.init, r.lo, r.hi }

func (r *gradient2) clocked() bool             { return true }
func (r *gradient2) idle(Sample, float64) bool { return false }

func (r *gradient2) update(limit float64, s Sample, rnd backoff.Rand) float64 {
	if r.probing {
		return r.probe(s, rnd)
	}
	if s.RTT <= 0 {
		if s.Dropped {
			return r.drop(limit, s.Now)
		}
		return limit
	}
	if r.interval > 0 {
		if r.nextProbe == 0 {
			r.nextProbe = s.Now + r.jittered(rnd.Float64())
		} else if s.Now >= r.nextProbe {
			r.probing, r.probeStart, r.saved, r.probed, r.probeMin = true, s.Now, limit, 0, 0
			return r.lo
		}
	}
	if r.minRTT == 0 || s.RTT < r.minRTT {
		r.minRTT = s.RTT
	}
	rtt := float64(s.RTT)
	// The baseline: Netflix's ExpAvgMeasurement(LongWindow, 10).
	if r.n < gradientWarmup {
		r.n++
		r.sum += rtt
		r.long = r.sum / float64(r.n)
	} else {
		r.long = r.long*(1-r.factor) + rtt*r.factor
	}
	if r.long/rtt > 2 {
		r.long *= 0.95
	}
	r.long = min(r.long, r.drift*float64(r.minRTT))
	if s.Dropped {
		return r.drop(limit, s.Now)
	}
	if float64(s.InFlight) < limit/2 {
		return limit
	}
	return r.next(limit, max(0.5, min(1, r.tolerance*r.long/rtt)))
}

// probe takes sample s during a probe: only calls that started after it
// began count, since the others queued behind the limit it replaced.
func (r *gradient2) probe(s Sample, rnd backoff.Rand) float64 {
	if s.RTT > 0 && s.Now-s.RTT >= r.probeStart {
		r.probed++
		if r.probeMin == 0 || s.RTT < r.probeMin {
			r.probeMin = s.RTT
		}
	}
	// Enough samples; or one no slower than the minimum, which the rest
	// could only lower; or, with one at least, the probe's time is up.
	done := r.probed >= r.samples ||
		r.probed > 0 && (r.probeMin <= r.minRTT || s.Now-r.probeStart >= r.interval/probeShare)
	if !done {
		return r.lo
	}
	r.probing = false
	r.minRTT = r.probeMin
	r.nextProbe = s.Now + r.jittered(rnd.Float64())
	return r.saved
}

// jittered is the probe interval, ±ProbeJitter, u a uniform draw in [0, 1).
func (r *gradient2) jittered(u float64) time.Duration {
	return time.Duration(float64(r.interval) * (1 + ProbeJitter*(2*u-1)))
}

// probeShare bounds a probe's length to ProbeInterval / probeShare.
const probeShare = 20

// drop returns the limit after a drop at now: halved, unless a drop cut
// it less than one baseline RTT ago.
func (r *gradient2) drop(limit float64, now time.Duration) float64 {
	if r.cuts && now-r.cut < time.Duration(r.long) {
		return limit
	}
	r.cut, r.cuts = now, true
	return clamp(limit/2, r.lo, r.hi)
}

func (r *gradient2) next(limit, gradient float64) float64 {
	n := limit*gradient + r.queue
	n = limit*(1-r.smoothing) + n*r.smoothing
	return clamp(n, r.lo, r.hi)
}
