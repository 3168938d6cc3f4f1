package fetch

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/retryhttp"
)

// summary is what --repeat reports: as lines of text, or as one JSON
// object with --format json, whose field names are stable (snake_case,
// durations in milliseconds with an _ms suffix, as in wait's and proxy's
// JSON).
type summary struct {
	Requests int `json:"requests"` // --repeat's N
	Failed   int `json:"failed"`   // a status of 400 or more, or no response
	Errors   int `json:"errors"`   // of Failed, those with no response (or its body cut)
	// Statuses counts the final status of each request that got one,
	// by its code as a string ("200"), as proxy's counts are keyed.
	Statuses map[string]int `json:"statuses"`
	// The latencies of the successful requests, each from the request
	// to the end of its body, retries included; null with none.
	P50MS *float64 `json:"latency_p50_ms"`
	P90MS *float64 `json:"latency_p90_ms"`
	P99MS *float64 `json:"latency_p99_ms"`
	MaxMS *float64 `json:"latency_max_ms"`
	// The hedges: see hedgeReport. HedgesDenied is null without a
	// --hedge-budget to deny them.
	HedgesLaunched int    `json:"hedges_launched"`
	HedgesWon      int    `json:"hedges_won"`
	HedgesDenied   *int64 `json:"hedges_denied"`
	// Per host, with --throttle and --limit; empty without them.
	Throttle []throttledHost `json:"throttle"`
	Limit    []limitedHost   `json:"limit"`

	latencies []time.Duration // of the successful requests
	statuses  map[int]int     // counted under the caller's lock
	pct       [4]time.Duration
}

// report completes s, once every request has ended, with the latencies'
// percentiles, rep's hedges and tr's throttles and limits.
func (s *summary) report(rep *hedgeReport, tr *retryhttp.Transport) {
	slices.Sort(s.latencies)
	s.Statuses = make(map[string]int, len(s.statuses))
	for code, n := range s.statuses {
		s.Statuses[strconv.Itoa(code)] = n
	}
	if k := len(s.latencies); k > 0 {
		ms := make([]*float64, 4)
		for i, p := range []float64{0.5, 0.9, 0.99, 1} {
			j := int(float64(k)*p+0.999999) - 1
			s.pct[i] = s.latencies[max(0, min(j, k-1))]
			v := float64(s.pct[i]) / float64(time.Millisecond)
			ms[i] = &v
		}
		s.P50MS, s.P90MS, s.P99MS, s.MaxMS = ms[0], ms[1], ms[2], ms[3]
	}
	rep.mu.Lock()
	s.HedgesLaunched, s.HedgesWon = rep.launched, rep.won
	rep.mu.Unlock()
	if denied, ok := deniedBy(rep.hedger); ok {
		s.HedgesDenied = &denied
	}
	s.Throttle, s.Limit = throttledHosts(tr.Throttles), limitedHosts(tr.Limits)
}

// write prints s on w in format.
func (s *summary) write(w io.Writer, format string) error {
	if format == cmdutil.FormatJSON {
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	pct := func(i int) string {
		if len(s.latencies) == 0 {
			return "-"
		}
		return roundLatency(s.pct[i])
	}
	fmt.Fprintf(w, "requests  %d (%d failed)\n", s.Requests, s.Failed)
	fmt.Fprintf(w, "latency   p50 %s  p90 %s  p99 %s  max %s\n", pct(0), pct(1), pct(2), pct(3))
	fmt.Fprintf(w, "hedges    %d launched (%.1f %% of requests), %d won", s.HedgesLaunched, 100*float64(s.HedgesLaunched)/float64(s.Requests), s.HedgesWon)
	if s.HedgesDenied != nil {
		fmt.Fprintf(w, ", %d denied by the budget", *s.HedgesDenied)
	}
	fmt.Fprintln(w)
	writeThrottled(w, s.Throttle)
	writeLimited(w, s.Limit)
	return nil
}
