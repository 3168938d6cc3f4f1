package hedge

import (
	"context"
	"time"
)

// racer is what race needs to run copies of one attempt: the attempt
// itself, for whichever goroutine coordinates it; the timer that starts
// the coordination (fire) and the one of the later hedges; the channel
// the copies answer on and the one the coordination answers on; and a
// runner per copy, each with the function its goroutine runs made once.
// Racers are pooled in the Hedger (per type T; a Hedger usually serves
// one), so that starting a copy costs only its context: a go statement of
// a function value with no arguments allocates nothing, once the runtime
// has a free goroutine.
type racer[T any] struct {
	// results is unbuffered: the coordination reads every copy's answer
	// before it returns, so the channel is empty when the racer is reused.
	results chan copyResult[T]
	// done carries the coordination's result to the calling goroutine
	// when the timer's goroutine coordinated.
	done   chan Result[T]
	fire   *time.Timer // runs coordinate when the delay passes; stopped between attempts
	timer  *time.Timer // the later hedges' delays; stopped between attempts
	copies []*runner[T]
	op     func(ctx context.Context, hedge int) (T, error) // the attempt's Call.Op

	// The attempt, set by race before the timer starts (which orders it
	// before the timer's goroutine reads it).
	ctx   context.Context
	h     *Hedger
	call  Call[T]
	delay time.Duration
	start time.Time
}

// runner runs copy n of an attempt on a goroutine of its own (the first
// copy runs on the calling goroutine).
type runner[T any] struct {
	rc  *racer[T]
	n   int
	ctx *copyCtx
	run func() // the runner's body, made once: go r.run allocates nothing
}

// getRacer returns a racer of h for op, reused if one of type T is free.
func getRacer[T any](h *Hedger, op func(context.Context, int) (T, error)) *racer[T] {
	rc, ok := h.racers.Get().(*racer[T])
	if !ok {
		// Since Go 1.23 a stopped timer's channel holds no stale value, so
		// the timer is safe to reuse once stopped.
		rc = &racer[T]{results: make(chan copyResult[T]), done: make(chan Result[T]), timer: time.NewTimer(time.Hour)}
		rc.timer.Stop()
		rc.fire = time.AfterFunc(time.Hour, func() { rc.done <- rc.coordinate(nil) })
		rc.fire.Stop()
	}
	rc.op = op
	return rc
}

// put gives rc back to h's pool, holding nothing of the attempt.
func (rc *racer[T]) put(h *Hedger) {
	rc.op, rc.ctx, rc.h, rc.call = nil, nil, nil, Call[T]{}
	h.racers.Put(rc)
}

// runner returns the runner of copy n, made if it is the first copy n of
// the racer.
func (rc *racer[T]) runner(n int) *runner[T] {
	if n == len(rc.copies) {
		r := &runner[T]{rc: rc, n: n}
		r.run = r.body
		rc.copies = append(rc.copies, r)
	}
	return rc.copies[n]
}

// launch starts copy n, with a context of parent.
func (rc *racer[T]) launch(parent context.Context, n int) {
	r := rc.runner(n)
	r.ctx = newCopyCtx(parent)
	go r.run()
}

func (r *runner[T]) body() {
	began := time.Now()
	v, err := r.rc.op(r.ctx, r.n)
	r.rc.results <- copyResult[T]{r.n, v, err, time.Since(began)}
}

// cancel cancels the copy's context: byAttempt, because the attempt was
// decided (which spares a copy that has Answered), or because the
// attempt's context ended.
func (r *runner[T]) cancel(byAttempt bool) { r.ctx.cancel(byAttempt) }

// end cancels the copy's context, whose attempt is over.
func (r *runner[T]) end() {
	r.ctx.cancel(false)
	r.ctx = nil
}

// answered reports whether the copy has Answered.
func (r *runner[T]) answered() bool {
	r.ctx.mu.Lock()
	defer r.ctx.mu.Unlock()
	return r.ctx.answered
}

// keep hands the copy's context over to the caller, alive, for
// Call.KeepWinner, and returns what ends it. A kept context outlives the
// coordinator that watched its parent, so it now registers with the parent
// itself (context.AfterFunc, when the parent can end), unless it did so
// already (the first copy, while it ran on the calling goroutine).
func (r *runner[T]) keep(parent context.Context) context.CancelFunc {
	c := r.ctx
	r.ctx = nil
	c.followParent()
	return func() { c.cancel(false) } // which ends the registration too
}
