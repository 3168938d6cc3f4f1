package page

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/again-go/again/cmd/again/internal/calc"
	"github.com/again-go/again/cmd/again/internal/sim"
	"github.com/again-go/again/cmd/again/internal/sim/storm"
	"github.com/again-go/again/cmd/again/internal/web/internal/catalog"
)

// FieldClients is the storm view's input: how many clients fail together.
// It is a key of the inputs and of the page's URL, as `again sim storm`
// names its flag.
const FieldClients = "clients"

// DefaultClients is the storm view's number of clients when none is given.
const DefaultClients = 100

// MaxStormAttempts is the most attempts (clients × attempts per client)
// the page simulates: about a second of WebAssembly. `again sim storm`
// takes up to storm.MaxAttempts.
const MaxStormAttempts = 200_000

// maxStormBuckets is about the most buckets the storm view draws: one
// bucket is as wide as the smallest familiar duration that keeps the
// worst case within this many.
const maxStormBuckets = 150

// StormResult is the storm view: Clients clients fail at once and retry on
// the schedule; Attempts counts the attempts that start in each Bucket of
// time with the policy's jitter, NoJitter the same without jitter. The
// numbers are internal/sim/storm's Table, the code of `again sim storm`.
type StormResult struct {
	Error    string  `json:"error,omitempty"` // in the page's language; nothing else is set
	Clients  int     `json:"clients"`
	BucketMs float64 `json:"bucketMs"`
	// Bucket is the bucket's width in Go syntax, as `again sim storm
	// --bucket` takes it.
	Bucket   string `json:"bucket"`
	Attempts []int  `json:"attempts"`
	NoJitter []int  `json:"noJitter"`
	// Jittered is false when the policy has no jitter: Attempts and
	// NoJitter are then the same.
	Jittered bool `json:"jittered"`
	// Shown is how many buckets the view draws: all of them, or, when one
	// storm ends long before the other, the shorter one and a little more
	// (Text says so).
	Shown int `json:"shown"`
	// Time is the time axis of the drawn buckets; Counts lists the labelled
	// attempt counts, 0 first.
	Time   Scale `json:"time"`
	Counts []int `json:"counts"`
	// YTitle and Legend name the axis and the two series.
	YTitle string    `json:"yTitle"`
	Legend [2]string `json:"legend"`
	// Text says what the view shows, with its numbers; Command is the
	// `again sim storm` command that prints the same numbers.
	Text    string `json:"text"`
	Command string `json:"command"`
}

// Storm simulates the storm view for the inputs v (the calculator's fields
// and FieldClients) in language l.
func Storm(v map[string]string, l Lang) StormResult {
	in, errs := parse(v, l)
	if len(errs) > 0 {
		return StormResult{Error: errs[0].Text}
	}
	clients := DefaultClients
	if s := strings.TrimSpace(v[FieldClients]); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > sim.MaxClients {
			return StormResult{Error: l.f("go.storm.clientsRange", sim.MaxClients, l.quote(s))}
		}
		clients = n
	}
	attempts := in.Policy.MaxAttempts()
	if int64(clients)*int64(attempts) > MaxStormAttempts {
		return StormResult{Error: l.f("go.storm.tooMany", clients, attempts, MaxStormAttempts)}
	}
	rep, err := calc.Compute(in.Input)
	if err != nil {
		return StormResult{Error: err.Error()}
	}
	// The bucket fits the shorter of the two storms: the jittered one's
	// 99th percentile (decorrelated jitter's worst case is far beyond its
	// usual course) or the schedule without jitter, whose waves are exact.
	var flat time.Duration
	for n := 1; n < attempts && flat < maxDuration; n++ {
		flat = addSat(flat, in.Policy.Delay(n))
	}
	bucket := stormBucket(min(time.Duration(rep.Total.P99), flat))
	c := storm.Config{Policy: in.Policy, Clients: clients, Bucket: bucket, Seed: in.Seed}
	rows, err := storm.Table(c)
	if err != nil {
		// Too many buckets for the longer storm: size them for it.
		c.Bucket = stormBucket(max(time.Duration(rep.Total.Max), flat))
		rows, err = storm.Table(c)
	}
	if err != nil {
		return StormResult{Error: err.Error()}
	}
	bucket = c.Bucket
	r := StormResult{
		Clients: clients, BucketMs: ms(bucket), Bucket: bucket.String(),
		Attempts: make([]int, len(rows)), NoJitter: make([]int, len(rows)),
		Jittered: rep.Policy.Jitter != "none",
	}
	peak, peakFlat, lastJit, lastFlat := 0, 0, 0, 0
	for i, row := range rows {
		r.Attempts[i], r.NoJitter[i] = row.Attempts, row.NoJitter
		peak, peakFlat = max(peak, row.Attempts), max(peakFlat, row.NoJitter)
		if row.NoJitter > 0 {
			lastFlat = i
		}
		if row.Attempts > 0 {
			lastJit = i
		}
	}
	// When one storm ends long before the other, the view shows the
	// shorter one (and a little after it) and says where the other ends.
	r.Shown = len(rows)
	if short := min(lastJit, lastFlat); r.Jittered && (short+1)*4 < len(rows) {
		r.Shown = min(len(rows), (short+1)*3/2+1)
	}
	r.Time = linear(time.Duration(r.Shown)*bucket, l)
	r.Counts = countTicks(max(peak, peakFlat))
	per := l.Duration(bucket)
	r.YTitle = l.f("go.storm.yTitle", per)
	r.Legend = [2]string{l.t("go.storm.legendNone"), l.f("go.storm.legendJitter", jitterName(rep.Policy.Jitter, "go.jitter.", l))}
	// The summary states what the chart's bars show and `again sim storm`
	// prints, in the chart's own buckets: the first bucket, which holds
	// every client's first attempt (t = 0) and, with jitter, the retries
	// drawn within it, and the busiest bucket after it.
	retries := attempts - 1
	first, later := r.Attempts[0], 0
	if len(r.Attempts) > 1 {
		later = slices.Max(r.Attempts[1:])
	}
	r.Text = l.f("go.storm.fail", clients, l.plural("go.storm.fail.plural", int64(clients)))
	if retries == 0 {
		r.Text += l.t("go.storm.noRetries")
	} else {
		r.Text += l.f("go.storm.waves", retries, l.plural("go.storm.waves.plural", int64(retries)), clients, l.plural("go.storm.attempts.plural", int64(clients)))
		if clients > 1 {
			r.Text += l.t("go.storm.instant")
		}
		if peakFlat > clients {
			r.Text += l.f("go.storm.upTo", peakFlat, l.plural("go.storm.upTo.plural", int64(peakFlat)), per)
		}
		if r.Jittered {
			with := jitterName(rep.Policy.Jitter, "go.jitterWith.", l)
			if first > clients {
				r.Text += l.f("go.storm.first", with, first, l.plural("go.storm.first.plural", int64(first)), per,
					clients, l.plural("go.storm.firstOnes.plural", int64(clients)),
					first-clients, l.plural("go.storm.retries.plural", int64(first-clients)))
				if later > 0 {
					r.Text += l.f("go.storm.later", per, later)
				}
			} else {
				r.Text += l.f("go.storm.peak", with, per, later, l.plural("go.storm.peak.plural", int64(later)))
			}
		}
		r.Text += l.t("go.storm.end")
	}
	if r.Shown < len(rows) {
		end := l.Duration(time.Duration(max(lastJit, lastFlat)) * bucket)
		who := l.t("go.storm.without")
		if lastJit > lastFlat {
			who = l.t("go.storm.with")
		}
		r.Text += " " + l.f("go.storm.shown", l.Duration(time.Duration(r.Shown)*bucket), who, end)
	}
	r.Command = stormCommand(v, clients, bucket)
	return r
}

// stormBucket returns the bucket width for a storm whose last attempt
// starts by worst: the smallest familiar duration, 1 ms at least, that
// keeps it within about maxStormBuckets buckets.
func stormBucket(worst time.Duration) time.Duration {
	for _, s := range niceSteps() {
		if worst/s < maxStormBuckets {
			return s
		}
	}
	return niceSteps()[len(niceSteps())-1]
}

// countTicks returns round attempt counts from 0 to at least hi, at most
// six of them.
func countTicks(hi int) []int {
	step := roundStep(func(step int) bool { return (hi+step-1)/step <= 5 })
	ticks := []int{0}
	for k := step; k < hi+step; k += step {
		ticks = append(ticks, k)
	}
	return ticks
}

// stormCommand returns the `again sim storm` command that prints the
// storm view's numbers.
func stormCommand(v map[string]string, clients int, bucket time.Duration) string {
	var b strings.Builder
	b.WriteString("again sim storm")
	for _, f := range []string{calc.FieldInitial, calc.FieldMultiplier, calc.FieldMax, calc.FieldRetries, calc.FieldJitter, calc.FieldSeed} {
		if s := strings.TrimSpace(v[f]); s != "" {
			b.WriteString(" --" + f + " " + shellQuote(normalize(f, s)))
		}
	}
	fmt.Fprintf(&b, " --clients %d --bucket %s", clients, bucket)
	return b.String()
}

// jitterName names a jitter (in ParseJitter's syntax) in language l, by
// the catalogue's key prefix: "go.jitter." as in "full jitter",
// "go.jitterWith." as after "with". A factor follows the name, with the
// language's decimal sign: "±0.2", "±0,2".
func jitterName(text, prefix string, l Lang) string {
	kind, factor, _ := strings.Cut(text, ":")
	name, ok := catalog.Lookup(string(l), prefix+kind)
	if !ok {
		return text
	}
	if factor != "" {
		name += " ±" + l.decimal(factor)
	}
	return name
}
