package storm

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/cmd/again/internal/sim"
)

// Config configures Run. Zero fields mean the values in brackets.
type Config struct {
	// Policy is the schedule every client follows, jitter included.
	Policy backoff.Policy
	// Clients is the number of clients that fail together [100], from 1 to
	// MaxClients, and such that Clients × Policy.MaxAttempts() is at most
	// MaxAttempts.
	Clients int
	// Bucket is the width of a time bucket [1 s]: Run counts the attempts
	// that start in each.
	Bucket time.Duration
	// Deadline, if above 0, is every client's deadline, from the failure
	// [none]. A client then meets it as the retry loops do, by
	// backoff.FitDeadline with backoff.DeadlineReserve: a wait that would
	// end later than the reserve before the deadline is shortened to end
	// then, and the client stops once no more than the reserve is left.
	Deadline time.Duration
	// Seed seeds the jitter; every value, 0 included, is a seed.
	Seed uint64
}

// FieldAttempts is the Field of the *sim.FieldError for a storm of
// more than MaxAttempts attempts.
const FieldAttempts = "Clients × Policy.MaxAttempts()"

// Limits of Run.
const (
	MaxBuckets  = 100_000    // buckets in one result
	MaxAttempts = 10_000_000 // clients × attempts per client
)

// Run answers "what does this schedule do to my server when this many
// clients fail at once?". Clients clients make their first attempt at t = 0
// and every attempt fails; each retries on c.Policy until its retries run
// out, waiting before retry n the delay Policy.Sample(n, previous delay)
// draws, or until its Deadline, if any. Attempts take no time. Run
// returns how many attempts start in
// each bucket [i·Bucket, (i+1)·Bucket), from 0 to the bucket of the last
// attempt. Compare a policy without jitter, whose clients retry in
// synchronised waves of Clients attempts, with the same policy jittered.
//
// It returns a *FieldError when the policy is invalid, a field is out of
// range, or the result would exceed MaxBuckets buckets or
// MaxAttempts attempts (choose a wider Bucket, fewer retries or a cap).
func Run(c Config) ([]int, error) {
	c, err := c.check()
	if err != nil {
		return nil, err
	}
	buckets, last, ok := c.buckets()
	if !ok {
		return nil, c.tooLong(last)
	}
	return buckets, nil
}

// buckets returns the attempts that start in each bucket of c's storm, c
// checked, and the start of its last attempt; ok is false if some attempt
// starts past MaxBuckets buckets.
func (c Config) buckets() (buckets []int, last time.Duration, ok bool) {
	ok = true
	c.starts(func(_ int, t time.Duration) {
		last = max(last, t)
		i := t / c.Bucket
		if i >= MaxBuckets {
			ok = false // go on to the last attempt, which the error reports
			return
		}
		for int(i) >= len(buckets) {
			buckets = append(buckets, 0)
		}
		buckets[i]++
	})
	return buckets, last, ok
}

// tooLong returns the error for a storm whose last attempt starts at last,
// past MaxBuckets buckets of c.Bucket.
func (c Config) tooLong(last time.Duration) error {
	at := fmt.Sprintf("the last attempt starts at %v, in bucket %d", last.Round(time.Microsecond), last/c.Bucket+1)
	if last == math.MaxInt64 {
		// The sum saturated: not a time anyone reads as a number.
		at = "the delays add up to more than 292 years"
	}
	return &sim.FieldError{Field: "Bucket", Value: fmt.Sprintf("%v, and %s", c.Bucket, at),
		Accepted: fmt.Sprintf("wide enough to hold the storm in at most %d buckets (or cap the delays)", MaxBuckets)}
}

// check returns c with its zero fields set to their defaults, or why c
// cannot run.
func (c Config) check() (Config, error) {
	if c.Clients == 0 {
		c.Clients = 100
	}
	if c.Bucket == 0 {
		c.Bucket = time.Second
	}
	if err := c.Policy.Validate(); err != nil {
		return c, &sim.FieldError{Field: "Policy", Value: err.Error(), Accepted: "a valid backoff.Policy"}
	}
	if err := sim.CheckInt("Clients", c.Clients, 1, sim.MaxClients); err != nil {
		return c, err
	}
	if c.Bucket < 0 {
		return c, &sim.FieldError{Field: "Bucket", Value: c.Bucket.String(), Accepted: "a duration above 0"}
	}
	if c.Deadline < 0 {
		return c, &sim.FieldError{Field: "Deadline", Value: c.Deadline.String(), Accepted: "a duration of 0 (none) or more"}
	}
	if attempts := c.Policy.MaxAttempts(); attempts > MaxAttempts/c.Clients {
		return c, &sim.FieldError{Field: FieldAttempts, Value: sim.Product(c.Clients, attempts), Accepted: fmt.Sprintf("at most %d attempts", MaxAttempts)}
	}
	return c, nil
}

// starts calls visit with the number n (0 for the first attempt) and the
// start time of every attempt of every client, client by client, drawing
// the jitter from c.Seed's stream in that order, so that every function
// built on it sees the same storm.
func (c Config) starts(visit func(n int, t time.Duration)) {
	r := sim.Stream(c.Seed, sim.StringID("storm"))
	retries := stormRetries(c.Policy)
	for range c.Clients {
		var t, prev time.Duration
		for n := 0; n <= retries; n++ {
			if n > 0 {
				prev = c.Policy.Sample(n, prev, r)
				w := prev
				if c.Deadline > 0 {
					// The loop's own rule, so that the storm is the loop's.
					var ok bool
					if w, ok = backoff.FitDeadline(w, c.Deadline-t, 0, false); !ok {
						break
					}
				}
				if t += w; t < 0 { // past the largest Duration
					t = 1<<63 - 1
				}
			}
			visit(n, t)
		}
	}
}

// stormRetries returns the retries p allows, with the zero rule applied.
func stormRetries(p backoff.Policy) int { return p.MaxAttempts() - 1 }

// Row is one bucket of Table. Its JSON form is a row of
// `again sim storm --format json`.
type Row struct {
	// StartMS is the start of the bucket in milliseconds from the failure.
	StartMS float64 `json:"start_ms"`
	// Attempts is the attempts that start in the bucket with c.Policy.
	Attempts int `json:"attempts"`
	// NoJitter is the same with c.Policy's jitter replaced by NoJitter: the
	// synchronised waves that jitter is there to spread.
	NoJitter int `json:"no_jitter"`
}

// Table calls Run twice, with c.Policy and with the same policy
// without jitter, and returns both side by side, one row per bucket up to
// the later of the two last attempts. It is what the calculator page's
// storm view and `again sim storm` show.
func Table(c Config) ([]Row, error) {
	c, err := c.check()
	if err != nil {
		return nil, err
	}
	plain := c
	plain.Policy.Jitter, plain.Policy.JitterFactor = backoff.NoJitter, 0
	jittered, last, ok := c.buckets()
	flat, lastFlat, okFlat := plain.buckets()
	if !ok || !okFlat {
		return nil, c.tooLong(max(last, lastFlat))
	}
	rows := make([]Row, max(len(jittered), len(flat)))
	for i := range rows {
		rows[i].StartMS = float64(time.Duration(i)*c.Bucket) / float64(time.Millisecond)
		if i < len(jittered) {
			rows[i].Attempts = jittered[i]
		}
		if i < len(flat) {
			rows[i].NoJitter = flat[i]
		}
	}
	return rows, nil
}

// Peak is the busiest moment of a storm's retries: the most retries
// that start within any window of width Window. The first attempts, all
// at t = 0 and the same with jitter and without, are left out: counting
// them would credit the jitter's early retries to it.
//
// A Peak is a plain value: safe to copy and to share.
type Peak struct {
	// Window is the width of the windows compared.
	Window time.Duration `json:"window_ns"`
	// Retries is the peak with the policy's jitter; NoJitter the same
	// without jitter, where a whole wave of Clients retries starts at one
	// instant (and more when waves meet within a window).
	Retries  int `json:"retries"`
	NoJitter int `json:"no_jitter"`
}

// Window returns the window Peaks compares over for p: a tenth
// of the first retry's delay, rounded down to 1, 2 or 5 times a power of
// ten, and 1µs at least. It is narrow enough that a wave without jitter is
// one instant against the spread that jitter brings (a wider one, such as
// a bucket that holds the first retries whole, makes jitter look worse
// than the synchronised waves), and wide enough to count more than a
// handful of retries in it.
func Window(p backoff.Policy) time.Duration {
	w := p.Delay(1) / 10
	step := time.Microsecond
	for step <= w/10 {
		step *= 10
	}
	for _, k := range []time.Duration{5, 2} {
		if w >= k*step {
			return k * step
		}
	}
	return step
}

// Peaks returns the peaks of c's storm with the policy's jitter and
// without it, over windows of width window (Window(c.Policy) when 0):
// the same clients and draws as Run and Table. It returns a
// *FieldError when c is out of range, as Run does, or window is
// negative.
func Peaks(c Config, window time.Duration) (Peak, error) {
	if window == 0 {
		window = Window(c.Policy)
	}
	if window < 0 {
		return Peak{}, &sim.FieldError{Field: "window", Value: window.String(), Accepted: "a duration above 0"}
	}
	c, err := c.check()
	if err != nil {
		return Peak{}, err
	}
	plain := c
	plain.Policy.Jitter, plain.Policy.JitterFactor = backoff.NoJitter, 0
	return Peak{Window: window, Retries: peak(c, window), NoJitter: peak(plain, window)}, nil
}

// peak returns the most retries of c's storm that start within any window
// [t, t+w), by sliding the window over the sorted start times.
func peak(c Config, w time.Duration) int {
	var times []time.Duration
	c.starts(func(n int, t time.Duration) {
		if n > 0 {
			times = append(times, t)
		}
	})
	slices.Sort(times)
	best, i := 0, 0
	for j, t := range times {
		for t-times[i] >= w {
			i++
		}
		best = max(best, j-i+1)
	}
	return best
}
