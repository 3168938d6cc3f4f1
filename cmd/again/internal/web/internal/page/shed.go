package page

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/again-go/again/cmd/again/internal/calc"
	"github.com/again-go/again/cmd/again/internal/sim"
	"github.com/again-go/again/cmd/again/internal/sim/outage"
	"github.com/again-go/again/cmd/again/internal/sim/simshed"
)

// FieldShed is the shedding view's input: the most requests the shedding
// server serves at once, or simshed.Adaptive for an adaptive limit
// (simshed.AdaptiveLimit), as --shed takes them. It is a key of the inputs and of the page's URL,
// as `again sim outage` names its flag.
const FieldShed = "shed"

// DefaultShed is the shedding view's limit when none is given: what the
// model's server carries (1 s of work plus 10 ms per request in progress,
// within the clients' 3 s timeout), and again proxy --shed's default.
const DefaultShed = 100

// The shedding view's run: `again sim outage`'s defaults, which its
// command leaves out. New requests arrive at shedRate a second, at
// shedSpikeRate during the spike from shedSpikeStart to shedSpikeStart +
// shedSpike, for shedDuration: 5,600 requests, about 0.4 s of WebAssembly
// for both servers, whatever the inputs (the model's Attempts bounds the
// attempts per request).
const (
	shedRate, shedSpikeRate = 40, 80
	shedSpikeStart          = 20 * time.Second
	shedSpike               = 20 * time.Second
	shedDuration            = 120 * time.Second
	shedTimeout             = 3 * time.Second // each attempt's
	shedAttempts            = 3               // per request, the first included
)

// ShedResult is the shedding view: clients that back off on the page's
// schedule against the `again sim outage` server, which slows down with
// its work, without shedding (Bare) and shedding at most Limit requests
// at once (Shed), on the same arrivals. Each series counts per second of
// the run: Demand the new requests, Bare and Shed the successes (the
// goodput), Shedded the attempts the shedding server shed. The numbers are
// internal/sim/outage's, the code of `again sim outage`.
type ShedResult struct {
	Error string `json:"error,omitempty"` // in the page's language; nothing else is set
	// Limit is the fixed limit, 0 if Adaptive: the limit learns from the
	// server's latency, as --shed adaptive's does.
	Limit    int   `json:"limit"`
	Adaptive bool  `json:"adaptive,omitempty"`
	Demand   []int `json:"demand"`
	Bare     []int `json:"bare"`
	Shed     []int `json:"shed"`
	Shedded  []int `json:"shedded"`
	// SpikeMs is the spike's start and end, in milliseconds of the run.
	SpikeMs [2]float64 `json:"spikeMs"`
	// Time is the time axis; Counts lists the labelled requests per
	// second, 0 first.
	Time   Scale `json:"time"`
	Counts []int `json:"counts"`
	// YTitle, XTitle and Legend name the axes and the series: the
	// demand, the server that does not shed, the one that sheds, and the
	// spike.
	YTitle string    `json:"yTitle"`
	XTitle string    `json:"xTitle"`
	Legend [4]string `json:"legend"`
	// Text says what the view shows, with its numbers; Command is the
	// `again sim outage` command that prints the shedding server's
	// numbers (without --shed, the other server's).
	Text    string `json:"text"`
	Command string `json:"command"`
	// Note, if not empty, says that the fixed Limit does not fit the
	// server, and which limits do (outage.ShedCapacity): what `again sim
	// outage` warns on its standard error for the command.
	Note string `json:"note,omitempty"`
}

// Shed simulates the shedding view for the inputs v (the calculator's
// fields and FieldShed) in language l.
func Shed(v map[string]string, l Lang) ShedResult {
	in, errs := parse(v, l)
	if len(errs) > 0 {
		return ShedResult{Error: errs[0].Text}
	}
	limit, adaptive := DefaultShed, false
	switch s := strings.TrimSpace(v[FieldShed]); s {
	case "":
	case simshed.Adaptive:
		limit, adaptive = 0, true
	default:
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > simshed.MaxLimit {
			return ShedResult{Error: l.f("go.shed.limitRange", simshed.MaxLimit, simshed.Adaptive, l.quote(s))}
		}
		limit = n
	}
	c := outage.Config{
		Strategies: []sim.Strategy{sim.Backoff}, Policy: in.Policy, Seed: in.Seed,
		Rate: shedRate, SpikeRate: shedSpikeRate, SpikeStart: shedSpikeStart, Spike: shedSpike, Duration: shedDuration,
		Timeout: shedTimeout, Attempts: shedAttempts,
	}
	bare, err := outage.Run(c)
	if err != nil {
		return ShedResult{Error: err.Error()}
	}
	c.Shed = simshed.Config{Limit: limit}
	if adaptive {
		c.Shed = simshed.Config{Adaptive: simshed.AdaptiveLimit()}
	}
	shed, err := outage.Run(c)
	if err != nil {
		return ShedResult{Error: err.Error()}
	}
	b, s := bare[0], shed[0]
	n := max(len(b.Seconds), len(s.Seconds))
	r := ShedResult{
		Limit: limit, Adaptive: adaptive,
		Demand: make([]int, n), Bare: make([]int, n), Shed: make([]int, n), Shedded: make([]int, n),
		SpikeMs: [2]float64{ms(shedSpikeStart), ms(shedSpikeStart + shedSpike)},
	}
	peak := 0
	for i, sec := range b.Seconds {
		r.Demand[i], r.Bare[i] = sec.NewRequests, sec.Successes
		peak = max(peak, sec.NewRequests, sec.Successes)
	}
	for i, sec := range s.Seconds {
		r.Shed[i], r.Shedded[i] = sec.Successes, sec.Shed
		peak = max(peak, sec.Successes)
	}
	r.Time = linear(time.Duration(n)*time.Second, l)
	r.Counts = countTicks(peak)
	r.YTitle = l.t("go.shed.yTitle")
	r.XTitle = l.t("go.shed.xTitle")
	legend, text := l.f("go.shed.legendShed", limit), l.f("go.shed.shed", limit)
	if adaptive {
		legend, text = l.t("go.shed.legendAdaptive"), l.t("go.shed.shedAdaptive")
	}
	r.Legend = [4]string{l.t("go.shed.legendDemand"), l.t("go.shed.legendBare"), legend, l.t("go.shed.legendSpike")}
	r.Text = l.f("go.shed.run", shedRate, shedSpikeRate, l.Duration(shedSpikeStart), l.Duration(shedSpikeStart+shedSpike), l.Duration(shedTimeout), shedAttempts) +
		" " + l.f("go.shed.bare", percent(b.Summary.SuccessRatio, l), recovery(b.Summary, l)) +
		" " + text + " " + l.f("go.shed.answers", percent(s.Summary.SuccessRatio, l), recovery(s.Summary, l),
		s.Summary.Shed, l.plural("go.shed.attempts.plural", int64(s.Summary.Shed)))
	if f, ok := outage.ShedCapacity(c); ok && !f.Fits(limit) {
		r.Note = shedMisfit(limit, f, l)
	}
	r.Command = shedCommand(v, c.Shed)
	return r
}

// shedMisfit says why the fixed limit does not fit the server, as `again
// sim outage` warns for it (its shedMisfit), and which limits do: below
// f.Least the limit serves fewer requests than arrive outside the spike,
// above f.Most a request takes the clients' timeout.
func shedMisfit(limit int, f outage.ShedFit, l Lang) string {
	var why string
	if limit > f.Most {
		// A request takes Latency + limit × PerRequest = limit ÷ Rate.
		took := time.Duration(float64(limit) / f.Rate * float64(time.Second)).Round(time.Millisecond)
		why = l.f("go.shed.misfitSlow", limit, l.Duration(took), l.Duration(shedTimeout))
	} else {
		why = l.f("go.shed.misfitFew", limit, l.decimal(strconv.FormatFloat(f.Rate, 'f', 1, 64)), shedRate)
	}
	if f.Least > 0 && f.Least <= f.Most {
		return why + " " + l.f("go.shed.fits", f.Least, f.Most)
	}
	return why + " " + l.t("go.shed.noFit")
}

// percent writes a share from 0 to 1 as a whole percentage: "93 %".
func percent(f float64, l Lang) string {
	return l.f("go.shed.percent", int(f*100+0.5))
}

// recovery says how the server of s came out of the spike: at once, after
// a while (the summary's RecoveryS), or never.
func recovery(s outage.Summary, l Lang) string {
	switch {
	case s.RecoveryS == nil:
		return l.t("go.shed.collapsed")
	case *s.RecoveryS == 0:
		return l.t("go.shed.kept")
	default:
		return l.f("go.shed.recovered", l.Duration(time.Duration(*s.RecoveryS*float64(time.Second))))
	}
}

// shedCommand returns the `again sim outage` command that prints the
// shedding view's numbers for the server that sheds.
func shedCommand(v map[string]string, sh simshed.Config) string {
	var b strings.Builder
	b.WriteString("again sim outage")
	for _, f := range []string{calc.FieldInitial, calc.FieldMultiplier, calc.FieldMax, calc.FieldJitter, calc.FieldSeed} {
		if s := strings.TrimSpace(v[f]); s != "" {
			b.WriteString(" --" + f + " " + shellQuote(normalize(f, s)))
		}
	}
	fmt.Fprintf(&b, " --strategy %s --shed ", sim.Backoff)
	if sh.Adaptive != nil {
		b.WriteString(simshed.Adaptive)
	} else {
		b.WriteString(strconv.Itoa(sh.Limit))
	}
	return b.String()
}
