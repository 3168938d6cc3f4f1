package sim

import (
	"fmt"
	"time"

	"github.com/again-go/again/backoff"
)

// StormConfig configures Storm. Zero fields mean the values in brackets.
type StormConfig struct {
	// Policy is the schedule every client follows, jitter included.
	Policy backoff.Policy
	// Clients is the number of clients that fail together [100], from 1 to
	// MaxClients.
	Clients int
	// Bucket is the width of a time bucket [1 s]: Storm counts the attempts
	// that start in each.
	Bucket time.Duration
	// Seed seeds the jitter; every value, 0 included, is a seed.
	Seed uint64
}

// Limits of Storm.
const (
	MaxStormBuckets  = 100_000    // buckets in one result
	MaxStormAttempts = 10_000_000 // clients × attempts per client
)

// Storm answers "what does this schedule do to my server when this many
// clients fail at once?". Clients clients make their first attempt at t = 0
// and every attempt fails; each retries on c.Policy until its retries run
// out, waiting before retry n the delay Policy.Sample(n, previous delay)
// draws. Attempts take no time. Storm returns how many attempts start in
// each bucket [i·Bucket, (i+1)·Bucket), from 0 to the bucket of the last
// attempt. Compare a policy without jitter, whose clients retry in
// synchronised waves of Clients attempts, with the same policy jittered.
//
// It returns a *FieldError when the policy is invalid, a field is out of
// range, or the result would exceed MaxStormBuckets buckets or
// MaxStormAttempts attempts (choose a wider Bucket, fewer retries or a cap).
func Storm(c StormConfig) ([]int, error) {
	if c.Clients == 0 {
		c.Clients = 100
	}
	if c.Bucket == 0 {
		c.Bucket = time.Second
	}
	if err := c.Policy.Validate(); err != nil {
		return nil, &FieldError{"Policy", err.Error(), "a valid backoff.Policy"}
	}
	if err := checkInt("Clients", c.Clients, 1, MaxClients); err != nil {
		return nil, err
	}
	if c.Bucket < 0 {
		return nil, &FieldError{"Bucket", c.Bucket.String(), "a duration above 0"}
	}
	retries := stormRetries(c.Policy)
	if int64(c.Clients)*int64(retries+1) > MaxStormAttempts {
		return nil, &FieldError{"Clients", fmt.Sprint(c.Clients), fmt.Sprintf("at most %d attempts in all with %d retries each", MaxStormAttempts, retries)}
	}
	r := stream(c.Seed, stringID("storm"))
	var buckets []int
	for range c.Clients {
		var t, prev time.Duration
		for n := 0; n <= retries; n++ {
			if n > 0 {
				prev = c.Policy.Sample(n, prev, r)
				if t += prev; t < 0 { // past the largest Duration
					t = 1<<63 - 1
				}
			}
			i := t / c.Bucket
			if i >= MaxStormBuckets {
				return nil, &FieldError{"Bucket", c.Bucket.String(), fmt.Sprintf("wide enough to hold the schedule in at most %d buckets (or cap the delays)", MaxStormBuckets)}
			}
			for int(i) >= len(buckets) {
				buckets = append(buckets, 0)
			}
			buckets[i]++
		}
	}
	return buckets, nil
}

// stormRetries returns the retries p allows, with the zero rule applied.
func stormRetries(p backoff.Policy) int { return p.MaxAttempts() - 1 }

// StormRow is one bucket of StormTable. Its JSON form is a row of
// `again sim storm --format json`.
type StormRow struct {
	// StartMS is the start of the bucket in milliseconds from the failure.
	StartMS float64 `json:"start_ms"`
	// Attempts is the attempts that start in the bucket with c.Policy.
	Attempts int `json:"attempts"`
	// NoJitter is the same with c.Policy's jitter replaced by NoJitter: the
	// synchronised waves that jitter is there to spread.
	NoJitter int `json:"no_jitter"`
}

// StormTable runs Storm twice, with c.Policy and with the same policy
// without jitter, and returns both side by side, one row per bucket up to
// the later of the two last attempts. It is what the calculator page's
// storm view and `again sim storm` show.
func StormTable(c StormConfig) ([]StormRow, error) {
	jittered, err := Storm(c)
	if err != nil {
		return nil, err
	}
	plain := c
	plain.Policy.Jitter, plain.Policy.JitterFactor = backoff.NoJitter, 0
	flat, err := Storm(plain)
	if err != nil {
		return nil, err
	}
	if c.Bucket == 0 {
		c.Bucket = time.Second
	}
	rows := make([]StormRow, max(len(jittered), len(flat)))
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
