package fetch

import (
	"errors"
	"fmt"
	"github.com/again-go/again/cmd/again/internal/calc"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/hedge"
	"github.com/again-go/again/retry"
	"github.com/again-go/again/retryhttp"
	"github.com/spf13/pflag"
)

// hedgeFlags are fetch's hedging and --repeat flags.
type hedgeFlags struct {
	after, max, warmup, repeat, budget string
	format                             string // --format: the summary's
	workers                            int    // --parallel, checked
}

// defaultHedgeBudget is --hedge-budget's default: hedges at most about
// 10 % of the requests, so that --hedge-after 1ms --max-hedges 10 cannot
// send ten times the load.
const defaultHedgeBudget = "0.1"

func addHedgeFlags(fs *pflag.FlagSet) *hedgeFlags {
	h := &hedgeFlags{max: "1", warmup: "20", repeat: "1", budget: defaultHedgeBudget}
	fs.Var(cmdutil.Text(&h.after, "duration|percentile"), "hedge-after", "send a copy of a request that has not answered after this long, or after the observed NNth percentile (p95)")
	fs.Var(cmdutil.Text(&h.max, "n"), "max-hedges", "most copies sent per attempt with --hedge-after, 1 to 10")
	fs.Var(cmdutil.Text(&h.warmup, "n"), "hedge-warmup", "with --hedge-after pNN: the successful requests observed before hedging")
	fs.Var(cmdutil.Text(&h.repeat, "n"), "repeat", "send the request n times (in sequence, unless --parallel) and print a latency summary instead of the bodies")
	fs.Var(cmdutil.Text(&h.budget, "ratio|off"), "hedge-budget", "with --hedge-after: hedges at most about this share of the requests (a token bucket with a burst of 4), or off for no budget")
	return h
}

// hedger returns the Hedger the flags describe, or nil without
// --hedge-after.
func (h *hedgeFlags) hedger(fs *pflag.FlagSet) (*hedge.Hedger, error) {
	if h.after == "" {
		for _, name := range []string{"max-hedges", "hedge-warmup", "hedge-budget"} {
			if fs.Changed(name) {
				return nil, cmdutil.Usagef("--%s needs --hedge-after", name)
			}
		}
		return nil, nil
	}
	hg := &hedge.Hedger{Window: hedge.DefaultWindow}
	if q, ok := strings.CutPrefix(h.after, "p"); ok {
		f, err := strconv.ParseFloat(q, 64)
		if err != nil || !(f > 0 && f < 100) || strings.ContainsAny(q, "eE+-") {
			return nil, cmdutil.BadValue("--hedge-after", h.after, "a duration such as 50ms or a percentile from p1 to p99.9")
		}
		hg.Quantile = f / 100
		n, err := strconv.Atoi(strings.TrimSpace(h.warmup))
		if err != nil || n < 1 || n > hg.Window {
			return nil, cmdutil.BadValue("--hedge-warmup", h.warmup, "a whole number from 1 to %d", hg.Window)
		}
		hg.Warmup = n
	} else {
		if fs.Changed("hedge-warmup") {
			return nil, cmdutil.Usagef("--hedge-warmup needs --hedge-after pNN; a fixed delay has no warm-up")
		}
		if err := cmdutil.RequireUnit("hedge-after", h.after); err != nil {
			return nil, err
		}
		d, err := cmdutil.DurationFlag("hedge-after", h.after, false)
		if err != nil || d <= 0 {
			// One message for every refusal: what is accepted.
			return nil, cmdutil.BadValue("--hedge-after", h.after, "a duration above 0 with a unit (such as 50ms or 1.5s) or a percentile from p1 to p99.9")
		}
		hg.After = d
	}
	n, err := strconv.Atoi(strings.TrimSpace(h.max))
	if err != nil || n < 1 || n > 10 {
		return nil, cmdutil.BadValue("--max-hedges", h.max, "a whole number from 1 to 10")
	}
	hg.MaxHedges = n
	if h.budget != "off" {
		ratio, err := strconv.ParseFloat(strings.TrimSpace(h.budget), 64)
		if err != nil || !(ratio >= 0.001 && ratio <= 1) {
			return nil, cmdutil.BadValue("--hedge-budget", h.budget, "a ratio from 0.001 to 1, or off")
		}
		hg.Budget = &countedBudget{TokenBucket: retry.TokenBucket{TokenRatio: ratio}}
	}
	return hg, nil
}

// countedBudget is --hedge-budget: a token bucket that counts the hedges
// it denied, for the --repeat summary.
type countedBudget struct {
	retry.TokenBucket
	denied atomic.Int64
}

// Take spends a token for a hedge, or counts a denial.
func (b *countedBudget) Take() bool {
	if b.TokenBucket.Take() {
		return true
	}
	b.denied.Add(1)
	return false
}

// deniedBy returns the hedges h's budget denied, and whether it has one.
func deniedBy(h *hedge.Hedger) (int64, bool) {
	if h == nil {
		return 0, false
	}
	b, ok := h.Budget.(*countedBudget)
	if !ok {
		return 0, false
	}
	return b.denied.Load(), true
}

// repeats returns --repeat's count.
func (h *hedgeFlags) repeats() (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(h.repeat))
	if err != nil || n < 1 || n > 1_000_000 {
		return 0, cmdutil.BadValue("--repeat", h.repeat, "a whole number from 1 to 1000000")
	}
	return n, nil
}

// lockedWriter writes through the verbose transport's lock.
type lockedWriter struct{ v *verboseTransport }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.v.print(p)
	return len(p), nil
}

// hedgeReport counts a run's hedges and, with -v, tells of each on stderr.
type hedgeReport struct {
	mu sync.Mutex
	// launched counts the hedges started, won those whose answer was
	// their request's. A hedge started as its request's first copy
	// answers is called off at once, often before it reaches the server:
	// launched is the most hedges the server got, not how many it got.
	launched, won int
	mark          int           // launched when the current request began
	verbose       io.Writer     // nil without -v
	hedger        *hedge.Hedger // the hedging reported on, or nil
}

// begin marks the start of a request.
func (r *hedgeReport) begin() {
	r.mu.Lock()
	r.mark = r.launched
	r.mu.Unlock()
}

// watch makes h report to r.
func (r *hedgeReport) watch(h *hedge.Hedger) {
	if h == nil {
		return
	}
	r.hedger = h
	h.OnHedge = func(e hedge.Event) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if e.Won {
			r.won++
			return
		}
		r.launched++
		if r.verbose != nil {
			why := "no answer after " + calc.Short(cmdutil.RoundDelay(e.Delay))
			if e.Err != nil {
				why = "an earlier copy failed"
			}
			fmt.Fprintf(r.verbose, "again fetch: attempt %d: sending hedge %d (%s)\n", e.Attempt, e.Hedge, why)
		}
	}
}

// answered tells, with -v, which copy of a hedged request answered. r may
// be nil: no hedging.
func (r *hedgeReport) answered(e retryhttp.Event) {
	if r == nil || r.verbose == nil {
		return
	}
	r.mu.Lock()
	hedged := r.launched > r.mark
	r.mu.Unlock()
	if !hedged {
		return
	}
	who := "the first copy"
	if e.Hedge > 0 {
		who = "hedge " + strconv.Itoa(e.Hedge)
	}
	fmt.Fprintf(r.verbose, "again fetch: attempt %d answered by %s\n", e.Attempt, who)
}

// repeatRequest sends req n times through tr, reading each response to its end,
// and prints the latency summary on env.Stdout. Its errors read as those
// of a single fetch (see requestError and stoppedBy).
func (h *hedgeFlags) repeatRequest(req *http.Request, tr *retryhttp.Transport, n int, rep *hedgeReport, env *cmdutil.Env) (err error) {
	defer func() { err = stoppedBy(req.Context(), err) }()
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		req.Body.Close()
		return cmdutil.Usagef("--repeat needs a request body that can be sent again; one from stdin over 1 MiB is streamed once (send a file with -d @FILE instead)")
	}
	boundBodies(tr) // --attempt-timeout bounds each body, as in a fetch
	tr.OnSuccess = rep.answered
	// Instrumented as a single fetch is: each request's span and metrics
	// are exported when the environment asks for them. The instrumented
	// transport is a copy of tr, made now: tr is complete by then.
	client := &http.Client{Transport: instrument(req.Context(), tr), CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	sum := &summary{Requests: n, latencies: make([]time.Duration, 0, n), statuses: map[int]int{}}
	var lastErr string
	// --parallel workers take the requests in turn; mu guards the counts
	// and stop, set once the context ended (the --deadline passed, or a
	// signal came): no more requests, and its error is the run's.
	var mu sync.Mutex
	var stop error
	next := 0
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		i := next
		next++
		return i, i < n && stop == nil
	}
	send := func(i int) error {
		r := req
		if i > 0 {
			r = req.Clone(req.Context())
			if req.GetBody != nil {
				body, err := req.GetBody()
				if err != nil {
					return fmt.Errorf("request %d: %w", i+1, err)
				}
				r.Body = body
			}
		}
		rep.begin()
		start := time.Now()
		resp, err := client.Do(r)
		attempts := 1
		if re := (*retry.Error)(nil); errors.As(err, &re) {
			attempts = re.Attempts
		}
		if err != nil {
			err = requestError(r, err, tr.AttemptTimeout)
		} else if _, err = io.Copy(io.Discard, resp.Body); err != nil {
			err = &bodyReadError{err}
		}
		if resp != nil {
			resp.Body.Close()
		}
		took := time.Since(start)
		if err != nil && req.Context().Err() != nil {
			// The --deadline passed, or a signal came: no more requests.
			last := noAnswerYet
			if resp != nil {
				last = bodyArriving
			}
			return deadlinePassed(req.Context(), err, false, attempts, last)
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil:
			sum.Failed++
			sum.Errors++
			lastErr = err.Error()
		case resp.StatusCode >= 400:
			sum.Failed++
			sum.statuses[resp.StatusCode]++
			lastErr = "server answered " + resp.Status
		default:
			sum.statuses[resp.StatusCode]++
			sum.latencies = append(sum.latencies, took)
		}
		return nil
	}
	var wg sync.WaitGroup
	for range max(h.workers, 1) {
		wg.Go(func() {
			for i, ok := take(); ok; i, ok = take() {
				if err := send(i); err != nil {
					mu.Lock()
					if stop == nil {
						stop = err
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if stop != nil {
		return stop
	}
	sum.report(rep, tr)
	if err := sum.write(env.Stdout, h.format); err != nil {
		return err
	}
	if sum.Failed > 0 {
		return fmt.Errorf("%d of %d requests failed (the last: %s)", sum.Failed, n, lastErr)
	}
	return nil
}

// roundLatency shows d with three or four significant digits.
func roundLatency(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

// hedging sets up tr's hedging from the flags, and checks that --repeat is
// not given with flags about the output it does not write.
func (f *Options) hedging(fs *pflag.FlagSet, h *hedgeFlags, tr *retryhttp.Transport, rt http.RoundTripper, env *cmdutil.Env) error {
	var err error
	if tr.Hedge, err = h.hedger(fs); err != nil {
		return err
	}
	if fs.Changed("format") && !fs.Changed("repeat") {
		return cmdutil.Usagef("--format needs --repeat: it is the summary's format, and a single fetch writes the response body as it came")
	}
	if fs.Changed("repeat") {
		if _, err := h.repeats(); err != nil {
			return err
		}
		for _, name := range []string{"output", "include", "location"} {
			if fs.Changed(name) {
				return cmdutil.Usagef("--repeat prints a summary instead of the bodies: it cannot be combined with --%s", name)
			}
		}
	}
	if tr.Hedge == nil {
		return nil
	}
	f.hedges = &hedgeReport{}
	if vt, ok := rt.(*verboseTransport); ok {
		// -v: the copies print their headers from their own goroutines,
		// under the verbose transport's lock, which these lines share.
		f.hedges.verbose = lockedWriter{vt}
	}
	f.hedges.watch(tr.Hedge)
	return nil
}

// run is --repeat.
func (h *hedgeFlags) run(req *http.Request, tr *retryhttp.Transport, rep *hedgeReport, env *cmdutil.Env) error {
	n, _ := h.repeats() // checked by hedging
	if rep == nil {
		rep = &hedgeReport{} // no hedging: the summary counts none
	}
	return h.repeatRequest(req, tr, n, rep, env)
}
