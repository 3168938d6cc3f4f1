package hedge

import (
	"context"
	"time"
)

// racer is what race needs to run copies of one attempt: the channel the
// copies answer on, the hedge timer, and a runner per copy, each with the
// function its goroutine runs made once. Racers are pooled in the Hedger
// (per type T; a Hedger usually serves one), so that starting a copy costs
// only its context: a go statement of a function value with no arguments
// allocates nothing, once the runtime has a free goroutine.
type racer[T any] struct {
	// results is unbuffered: race reads every copy's answer before it
	// returns, so the channel is empty when the racer is reused.
	results chan copyResult[T]
	timer   *time.Timer // stopped between attempts
	copies  []*runner[T]
	op      func(ctx context.Context, hedge int) (T, error) // the attempt's Call.Op
}

// runner runs copy n of an attempt on a goroutine of its own.
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
		rc = &racer[T]{results: make(chan copyResult[T]), timer: time.NewTimer(time.Hour)}
		rc.timer.Stop()
	}
	rc.op = op
	return rc
}

// launch starts copy n, with a context of parent.
func (rc *racer[T]) launch(parent context.Context, n int) {
	if n == len(rc.copies) {
		r := &runner[T]{rc: rc, n: n}
		r.run = r.body
		rc.copies = append(rc.copies, r)
	}
	r := rc.copies[n]
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
// itself (context.AfterFunc, when the parent can end).
func (r *runner[T]) keep(parent context.Context) context.CancelFunc {
	c := r.ctx
	r.ctx = nil
	if parent.Done() == nil {
		return func() { c.cancel(false) }
	}
	stop := context.AfterFunc(parent, func() { c.cancel(false) })
	return func() {
		stop()
		c.cancel(false)
	}
}
