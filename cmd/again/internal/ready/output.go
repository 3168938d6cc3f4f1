package ready

import (
	"encoding/json"
	"fmt"
	"github.com/again-go/again/cmd/again/internal/calc"
	"io"
	"strings"
	"sync"
	"time"
)

// prefix starts every line that the output functions write.
const prefix = "again wait: "

// Line is the one line that describes a result, without a newline:
//
//	again wait: postgres://app:xxxxx@db/app ready after 3 attempts, 1.2s
//	again wait: postgres://app:xxxxx@db/app will not be ready: wrong credentials: ...
//	again wait: postgres://app:xxxxx@db/app not ready: stopped by the --deadline 1m0s after 31 attempts: connection refused: ...
//
// The last is every command's line for an end that the --deadline
// decided (cmdutil.DeadlineError), after the target.
func Line(r Result) string {
	state := "ready"
	if r.Inverted {
		state = "unreachable"
	}
	took := fmt.Sprintf("%s, %s", attempts(r.Attempts), round(r.Elapsed))
	switch {
	case r.Ready:
		return fmt.Sprintf("%s%s %s after %s", prefix, r.Target, state, took)
	case r.Permanent:
		return fmt.Sprintf("%s%s will not be %s: %v", prefix, r.Target, state, r.Err)
	case r.Stopped:
		return fmt.Sprintf("%s%s not %s, stopped after %s: %v", prefix, r.Target, state, took, r.Err)
	case r.Deadline > 0:
		return fmt.Sprintf("%s%s not %s: stopped by the --deadline %s after %s: %v", prefix, r.Target, state, calc.Short(r.Deadline), attempts(r.Attempts), r.Err)
	}
	return fmt.Sprintf("%s%s not %s after %s: %v", prefix, r.Target, state, took, r.Err)
}

func attempts(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return fmt.Sprintf("%d attempts", n)
}

// round shows a duration to the millisecond below 10 s, to the tenth of a
// second above.
func round(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

// WriteLines writes Line of each result to w, one a line.
func WriteLines(w io.Writer, results []Result) error {
	for _, r := range results {
		if _, err := fmt.Fprintln(w, Line(r)); err != nil {
			return err
		}
	}
	return nil
}

// JSONResult is the JSON object that WriteJSON writes for a Result.
type JSONResult struct {
	Target string `json:"target"`
	Ready  bool   `json:"ready"`
	// Reason is how the wait for the target ended: "ready", "deadline"
	// (the --deadline passed first, as exit status 124 says), "permanent"
	// (it will not be ready: last_error says why) or "stopped" (another
	// target failed, or a signal came).
	Reason     string  `json:"reason"`
	Attempts   int     `json:"attempts"`
	ElapsedMS  int64   `json:"elapsed_ms"`
	DeadlineMS *int64  `json:"deadline_ms,omitempty"` // with reason "deadline"
	LastError  *string `json:"last_error"`            // null when ready
}

// Reasons of JSONResult.
const (
	ReasonReady     = "ready"
	ReasonDeadline  = "deadline"
	ReasonPermanent = "permanent"
	ReasonStopped   = "stopped"
)

// reason is r's JSONResult.Reason.
func reason(r Result) string {
	switch {
	case r.Ready:
		return ReasonReady
	case r.Permanent:
		return ReasonPermanent
	case r.Stopped:
		return ReasonStopped
	}
	return ReasonDeadline
}

// WriteJSON writes one JSON object (JSONResult) per result to w, one a
// line.
func WriteJSON(w io.Writer, results []Result) error {
	enc := json.NewEncoder(w)
	for _, r := range results {
		j := JSONResult{Target: r.Target, Ready: r.Ready, Reason: reason(r), Attempts: r.Attempts, ElapsedMS: r.Elapsed.Milliseconds()}
		if r.Deadline > 0 {
			ms := r.Deadline.Milliseconds()
			j.DeadlineMS = &ms
		}
		if r.Err != nil {
			s := r.Err.Error()
			j.LastError = &s
		}
		if err := enc.Encode(j); err != nil {
			return err
		}
	}
	return nil
}

// Live keeps one line per target up to date on a terminal (waiting,
// attempt n, the last error), redrawing them in place, instead of a scroll
// of lines. Its methods are safe for concurrent use (Update is meant for
// Config.OnAttempt). The zero Live is not usable: call NewLive.
type Live struct {
	w     io.Writer
	width int

	mu    sync.Mutex
	lines []string
	drawn bool
}

// NewLive starts the live lines of targets (their String) on w, a
// terminal width columns wide (0 means 80); lines are cut to fit, so that
// none wraps and redrawing stays in place.
func NewLive(w io.Writer, width int, targets []string) *Live {
	if width <= 0 {
		width = 80
	}
	l := &Live{w: w, width: width}
	for _, t := range targets {
		l.lines = append(l.lines, prefix+t+" waiting")
	}
	l.mu.Lock()
	l.draw(true)
	l.mu.Unlock()
	return l
}

// Update redraws the line of p's target.
func (l *Live) Update(p Progress) {
	line := fmt.Sprintf("%s%s ready, attempt %d, %s", prefix, p.Target, p.Attempt, round(p.Elapsed))
	if p.Err != nil {
		line = fmt.Sprintf("%s%s waiting, attempt %d, %s: %v", prefix, p.Target, p.Attempt, round(p.Elapsed), p.Err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if p.Index >= 0 && p.Index < len(l.lines) {
		l.lines[p.Index] = line
		l.draw(true)
	}
}

// Finish replaces the live lines with Line of each result, which stay on
// the terminal.
func (l *Live) Finish(results []Result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, r := range results {
		if i < len(l.lines) {
			l.lines[i] = Line(r)
		}
	}
	l.draw(false) // in full: nothing is redrawn after them
}

// draw rewrites every line in place: up to the first line, then each line
// cleared and rewritten, cut to the width if cut. l.mu is held.
func (l *Live) draw(cut bool) {
	var b strings.Builder
	if l.drawn && len(l.lines) > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", len(l.lines))
	}
	for _, line := range l.lines {
		line = strings.ReplaceAll(line, "\n", " ")
		if r := []rune(line); cut && len(r) > l.width-1 {
			line = string(r[:l.width-2]) + "…"
		}
		b.WriteString("\r\x1b[K" + line + "\n")
	}
	l.drawn = true
	_, _ = io.WriteString(l.w, b.String())
}
