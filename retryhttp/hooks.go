package retryhttp

import (
	"errors"
	"log/slog"
	"time"

	"github.com/again-go/again/retry"
)

// retrying tells the hook and the log that attempt a, the latest of l,
// failed and the request is retried after d.
func (c *call) retrying(a *attempt, l *retry.Loop, d time.Duration) {
	if c.t.OnRetry == nil && c.t.Logger == nil {
		return
	}
	ev := c.event(a, l.Attempts(), l.Class())
	ev.Delay = d
	if c.t.OnRetry != nil {
		c.t.OnRetry(ev)
	}
	if lg := c.t.Logger; lg != nil && lg.Enabled(c.req.Context(), slog.LevelInfo) {
		attrs := append(c.attrs(ev), slog.Duration("delay", ev.Delay))
		if ev.HintHeader != "" {
			attrs = append(attrs, slog.String("hint_header", ev.HintHeader))
		}
		lg.LogAttrs(c.req.Context(), slog.LevelInfo, "retryhttp: retrying", attrs...)
	}
}

// succeeded reports a response, that of attempt a, the latest of l, that
// ends the call.
func (c *call) succeeded(a *attempt, l *retry.Loop) {
	if c.t.OnSuccess != nil {
		ev := Event{Request: c.req, Attempt: l.Attempts(), MaxAttempts: c.max, Response: a.resp, Hedge: a.hedge, Class: l.Class()}
		c.t.OnSuccess(ev)
	}
}

// giveUp reports the end of retrying after attempt a, of class class,
// failed.
func (c *call) giveUp(a *attempt, re *retry.Error, class string) {
	if (c.t.OnGiveUp == nil && c.t.Logger == nil) || re.Attempts == 0 {
		return // no hook, or no attempt failed: the context ended first
	}
	ev := c.event(a, re.Attempts, class)
	ev.Reason = re.Reason
	if re.Reason == retry.ErrPermanent {
		var r *refusal
		if !errors.As(re.Last, &r) {
			return // an error retrying cannot help: nothing was given up
		}
		ev.Reason = r
	}
	if c.t.OnGiveUp != nil {
		c.t.OnGiveUp(ev)
	}
	if lg := c.t.Logger; lg != nil && lg.Enabled(c.req.Context(), slog.LevelWarn) {
		attrs := append(c.attrs(ev), slog.String("reason", ev.Reason.Error()))
		if ev.HintHeader != "" {
			attrs = append(attrs, slog.String("hint_header", ev.HintHeader), slog.Duration("hint", ev.Hint))
		}
		lg.LogAttrs(c.req.Context(), slog.LevelWarn, "retryhttp: giving up", attrs...)
	}
}

// event describes failed attempt a, the attempt-th of the call, whose
// failure is of class class.
func (c *call) event(a *attempt, attempt int, class string) Event {
	ev := Event{Request: c.req, Attempt: attempt, MaxAttempts: c.max, Hedge: a.hedge, Class: class}
	switch {
	case a.resp != nil && a.kind == badStatus:
		ev.Response, ev.HintHeader, ev.Hint = a.resp, a.hintHeader, a.hint
	case a.kind == netFailure || a.kind == rejected:
		ev.Err = a.err
	}
	return ev
}

func (c *call) attrs(ev Event) []slog.Attr {
	attrs := make([]slog.Attr, 0, 8)
	attrs = append(attrs,
		slog.String("method", methodOf(c.req)),
		slog.String("url", redactURL(c.req)),
		slog.Int("attempt", ev.Attempt),
		slog.Int("max_attempts", ev.MaxAttempts))
	if ev.Response != nil {
		attrs = append(attrs, slog.Int("status", ev.Response.StatusCode))
	} else if ev.Err != nil {
		attrs = append(attrs, slog.String("error", ev.Err.Error()))
		if retry.IsRejected(ev.Err) {
			attrs = append(attrs, slog.Bool("rejected", true))
		}
	}
	return attrs
}
