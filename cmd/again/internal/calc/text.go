package calc

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/again-go/again/backoff"
	"github.com/again-go/again/backoff/plan"
)

// barWidth is the number of cells in a table row's range bar.
const barWidth = 24

// WriteTable writes the report for a terminal: the policy, one row per retry
// (retry, nominal delay, min, mean and max of the jittered delay, worst-case
// total so far, and a bar showing the delay's min..max range on a scale
// common to all rows), the totals in human form and, with a deadline, the
// verdict. Output is buffered, so thousands of rows print at once.
func (r *Report) WriteTable(w io.Writer) error {
	bw := bufio.NewWriter(w)
	r.writeHeader(bw, "")
	writeTableRows(bw, r.Retries, r.Policy.Max, "")
	r.writeTotals(bw, "  ")
	r.writeVerdict(bw, "")
	r.writeClasses(bw, "")
	return bw.Flush()
}

// writeTableRows writes the terminal's table of the retries xs, whose
// delays are capped at maxDelay, each line starting with indent.
func writeTableRows(bw *bufio.Writer, xs []RetryReport, maxDelay Millis, indent string) {
	if len(xs) == 0 {
		return
	}
	head := []string{"retry", "delay", "min", "mean", "max", "worst total"}
	rows := cells(xs)
	width := make([]int, len(head))
	for i, h := range head {
		width[i] = len(h)
	}
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	scale := barScale(xs)
	bw.WriteString(indent)
	writeRow(bw, head, width)
	fmt.Fprintf(bw, "  min..max on 0 to %s\n", human(scale))
	for i, row := range rows {
		bw.WriteString(indent)
		writeRow(bw, row, width)
		x := xs[i]
		fmt.Fprintf(bw, "  |%s|\n", bar(float64(x.Min), float64(x.Max), float64(scale)))
	}
	if anyCapped(xs) {
		fmt.Fprintf(bw, "%s* capped at --max %s\n", indent, time.Duration(maxDelay))
	}
	bw.WriteString("\n")
}

// WriteMarkdown writes the report as Markdown, to paste into a design
// document: the policy, a table with one row per retry, the totals and the
// deadline verdict.
func (r *Report) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	r.writeHeader(bw, "**")
	writeMarkdownRows(bw, r.Retries)
	r.writeTotals(bw, "- ")
	r.writeVerdict(bw, "**")
	r.writeClasses(bw, "**")
	return bw.Flush()
}

// writeMarkdownRows writes the Markdown table of the retries xs.
func writeMarkdownRows(bw *bufio.Writer, xs []RetryReport) {
	if len(xs) == 0 {
		return
	}
	bw.WriteString("| Retry | Delay | Min | Mean | Max | Worst-case total |\n|---:|---:|---:|---:|---:|---:|\n")
	for _, row := range cells(xs) {
		row[1] = strings.Replace(row[1], "*", " (capped)", 1)
		bw.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	bw.WriteString("\n")
}

// cells returns the human-form cells of every retry's row.
func cells(xs []RetryReport) [][]string {
	rows := make([][]string, len(xs))
	for i, x := range xs {
		delay := human(x.Delay)
		if x.Capped {
			delay += "*"
		}
		rows[i] = []string{strconv.Itoa(x.Retry), delay, human(x.Min), human(x.Mean), human(x.Max), human(x.TotalMax)}
	}
	return rows
}

func human(m Millis) string { return Human(time.Duration(m)) }

func anyCapped(xs []RetryReport) bool {
	for _, x := range xs {
		if x.Capped {
			return true
		}
	}
	return false
}

// writeRow right-aligns the cells in their columns, without ending the line.
func writeRow(w *bufio.Writer, row []string, width []int) {
	for i, c := range row {
		if i > 0 {
			w.WriteString("  ")
		}
		w.WriteString(strings.Repeat(" ", width[i]-len([]rune(c))))
		w.WriteString(c)
	}
}

// barScale returns the largest max delay of any retry: the right end of
// every bar.
func barScale(xs []RetryReport) Millis {
	var s Millis
	for _, x := range xs {
		s = max(s, x.Max)
	}
	return s
}

// bar draws the range lo..hi on a scale 0..scale as barWidth cells: "█"
// where the range lies, "·" elsewhere. A single point (no jitter) fills the
// cell it falls in.
func bar(lo, hi, scale float64) string {
	cells := []rune(strings.Repeat("·", barWidth))
	if scale > 0 {
		from := min(int(lo/scale*barWidth), barWidth-1)
		to := min(int(hi/scale*barWidth+0.999999), barWidth)
		to = max(to, from+1)
		for i := from; i < to; i++ {
			cells[i] = '█'
		}
	}
	return string(cells)
}

// writeHeader writes the policy (and the solved value) as flags that
// reproduce it.
func (r *Report) writeHeader(w *bufio.Writer, strong string) {
	p := r.input.Policy
	initial := time.Duration(r.Policy.Initial)
	code := ""
	if strong != "" {
		code = "`"
	}
	fmt.Fprintf(w, "%sPolicy:%s %s%s%s\n", strong, strong, code, r.Policy.flags(), code)
	if r.Solved != nil {
		var v string
		switch r.input.Param {
		case plan.ParamInitial:
			v = initial.String()
		case plan.ParamMultiplier:
			v = strconv.FormatFloat(p.EffectiveMultiplier(), 'g', -1, 64)
		default:
			v = strconv.Itoa(r.Policy.Retries)
		}
		if strong != "" {
			w.WriteString("\n") // Markdown would join the two lines
		}
		fmt.Fprintf(w, "%sSolved:%s the largest %s whose %s total wait fits %s is %s\n", strong, strong,
			paramName(r.input.Param), targetName(r.input.Target), HumanExact(r.input.Deadline), v)
	}
	w.WriteString("\n")
}

// writeTotals writes the total wait in human form; prefix starts each line.
func (r *Report) writeTotals(w *bufio.Writer, prefix string) {
	t := r.Total
	if len(r.Retries) == 0 {
		fmt.Fprintf(w, "No retries: the first attempt is the only one, and nothing waits.\n")
		return
	}
	fmt.Fprintf(w, "Total wait over %d retries, if every attempt fails:\n\n", len(r.Retries))
	// A terminal gets the values aligned; Markdown collapses the spaces anyway.
	pad := func(label string) string {
		if prefix == "- " {
			return label + " "
		}
		return fmt.Sprintf("%-13s", label)
	}
	fmt.Fprintf(w, "%s%s%s\n", prefix, pad("shortest:"), t.MinHuman)
	fmt.Fprintf(w, "%s%s%s\n", prefix, pad("mean:"), t.MeanHuman)
	fmt.Fprintf(w, "%s%s%s\n", prefix, pad("longest:"), t.MaxHuman)
	fmt.Fprintf(w, "%s%sp50 %s, p90 %s, p99 %s\n", prefix, pad("percentiles:"), t.P50Human, t.P90Human, t.P99Human)
	switch mc := t.MonteCarlo; {
	case t.MeanEstimated():
		fmt.Fprintf(w, "%sthe mean and percentiles are a Monte Carlo estimate (--seed %d; standard error of the mean %s)\n",
			prefix, mc.Seed, human(mc.MeanStdErr))
	case t.PercentilesEstimated():
		// The mean is exact (no retry reaches the cap); only the
		// percentiles are simulated.
		fmt.Fprintf(w, "%sthe percentiles are a Monte Carlo estimate (--seed %d)\n", prefix, mc.Seed)
	}
}

// writeVerdict compares the worst case with the deadline, if any.
func (r *Report) writeVerdict(w *bufio.Writer, strong string) {
	d := r.Deadline
	if d == nil {
		return
	}
	fmt.Fprintf(w, "\n%sDeadline %s:%s ", strong, d.DeadlineHuman, strong)
	reserve := Human(backoff.DeadlineReserve)
	if d.WorstCaseFits {
		fmt.Fprintf(w, "fits; even the worst case, %s, ends at least %s (kept for the last attempt) before it.\n", r.Total.MaxHuman, reserve)
		return
	}
	fmt.Fprintf(w, "does not fit; the worst case, %s, leaves less than %s (kept for the last attempt) before it, so the retry loop shortens the wait that would end later.", r.Total.MaxHuman, reserve)
	if n := len(r.Retries); d.RetriesWithin < n {
		fmt.Fprintf(w, " %s", retriesInTime(d.RetriesWithin, n))
	}
	if d.P99Fits {
		fmt.Fprintf(w, " The 99th percentile, %s, fits.\n", r.Total.P99Human)
	} else {
		fmt.Fprintf(w, " The 99th percentile, %s, does not fit either.\n", r.Total.P99Human)
	}
}

// retriesInTime says how many of n retries start within the deadline in the
// worst case, as the web page says it (its catalogue's go.verdict.noneInTime,
// firstInTime and someInTime; a test in its package checks the two agree):
// within of them, fewer than n.
func retriesInTime(within, n int) string {
	switch within {
	case 0:
		return "In the worst case not even the first retry starts in time."
	case 1:
		return fmt.Sprintf("In the worst case only the first of %d retries starts in time.", n)
	}
	return fmt.Sprintf("In the worst case only the first %d of %d retries start in time.", within, n)
}

// flags returns the policy as the flags that give it: "--initial 500ms
// --multiplier 2 --max 30s --retries 8 --jitter full".
func (p PolicyReport) flags() string {
	return fmt.Sprintf("--initial %s --multiplier %s --max %s --retries %d --jitter %s",
		time.Duration(p.Initial), strconv.FormatFloat(p.Multiplier, 'g', -1, 64), time.Duration(p.Max), p.Retries, p.Jitter)
}

// writeClasses writes each class's policy, its table and its totals
// after the call's; strong marks Markdown (see writeHeader).
func (r *Report) writeClasses(w *bufio.Writer, strong string) {
	if len(r.Classes) == 0 {
		return
	}
	code := ""
	if strong != "" {
		code = "`"
	}
	fmt.Fprintf(w, "\n%sPer class of failure:%s a failure of a class waits on the class's schedule, up to the class's own --retries; the call's --retries %d still caps every retry, and a failure no class holds waits on the policy above.\n",
		strong, strong, r.Policy.Retries)
	for _, c := range r.Classes {
		what := ""
		if s := ClassWhat(c.Name); s != "" {
			what = " (" + s + ")"
		}
		fmt.Fprintf(w, "\n%s%s%s%s: %s%s%s", strong, c.Name, strong, what, code, c.Policy.flags(), code)
		if c.Cost != 1 {
			fmt.Fprintf(w, ", cost %s per retry", strconv.FormatFloat(c.Cost, 'g', -1, 64))
		}
		w.WriteString("\n\n")
		if strong != "" {
			writeMarkdownRows(w, c.Retries)
		} else {
			writeTableRows(w, c.Retries, c.Policy.Max, "  ")
		}
		prefix := "  "
		if strong != "" {
			prefix = "- "
		}
		t := c.Total
		if len(c.Retries) == 0 {
			fmt.Fprintf(w, "%sno retries: a failure of this class ends the call\n", prefix)
			continue
		}
		fmt.Fprintf(w, "%s%s, if every attempt fails this way: shortest %s, mean %s, longest %s\n",
			prefix, retriesOf(len(c.Retries)), t.MinHuman, t.MeanHuman, t.MaxHuman)
		if c.CallCapped {
			fmt.Fprintf(w, "%sthe call's --retries %d stops this class before its own %d\n", prefix, r.Policy.Retries, c.Policy.Retries)
		}
		if t.MeanEstimated() || t.PercentilesEstimated() {
			fmt.Fprintf(w, "%sthe estimates use --seed %d\n", prefix, t.MonteCarlo.Seed)
		}
	}
}

// retriesOf returns "1 retry" or "n retries".
func retriesOf(n int) string {
	if n == 1 {
		return "1 retry"
	}
	return strconv.Itoa(n) + " retries"
}
