package hedge

import (
	"context"
	"time"

	"github.com/again-go/again/retry"
)

// Call is one attempt for Attempt to make, hedged: what to run, and how to
// judge and release its results. Only Op is required: the zero Call is not
// usable. Attempt only reads a Call, so one Call may serve many attempts,
// from many goroutines; Op runs concurrently with itself (the first copy
// on the goroutine that called Attempt, each hedge on one of its own) and
// must be safe for that, while Retryable, Discard, Allow, Prepare,
// Postpone and Pushback run on the goroutine that coordinates the attempt
// (see Attempt), one at a time.
type Call[T any] struct {
	// Key selects the latency window (and the Allow answer): usually the
	// host or the method called.
	Key string
	// Attempt is the number of the retry loop's attempt, from 1, for the
	// events; zero reads as 1.
	Attempt int
	// Op makes one copy of the attempt: hedge is 0 for the first, n for the
	// n-th hedge. The first copy runs on the goroutine that called
	// Attempt, each hedge on a goroutine of its own; every copy must
	// return soon after ctx is done: the attempt waits for every copy it
	// started.
	Op func(ctx context.Context, hedge int) (T, error)
	// Retryable judges a failed copy: true sends the next hedge at once (if
	// the Hedger allows one), false ends the attempt with that error. Nil
	// means retry.Retryable with no options: every error but a Permanent
	// one.
	Retryable func(error) bool
	// Discard, if not nil, releases the value of a copy that succeeded but
	// lost (an HTTP response to drain and close). It runs on the
	// goroutine that coordinates the attempt.
	Discard func(T)
	// KeepWinner leaves alive, when Attempt returns, the context of the
	// copy whose answer it returns (the winner's, or the failed copy's whose
	// error is Result.Err), for a result that is still being read (an HTTP
	// response body), and those of the copies that have Answered, whose
	// results the caller may still have to release (a body to drain);
	// Result.Release then ends them. Without KeepWinner every copy's
	// context is done when Attempt returns. Keeping costs an
	// allocation (Release), and three more when ctx can be canceled: the
	// kept context then registers with ctx (context.AfterFunc), since
	// Attempt, which watched ctx for the copies, has returned.
	KeepWinner bool
	// Allow, if not nil, is asked before each hedge of this call, after
	// Hedger.Allow: false sends no hedge. Code that knows the call's own
	// breaker (retryhttp.Transport) answers with it.
	Allow func() bool
	// Prepare, if not nil, is called before each hedge of this call is
	// sent, with its number (from 1), once the Hedger, Allow and the
	// Budget have agreed: an error sends no hedge and stops the hedging of
	// this call, while the copies already sent go on and the attempt's
	// result is theirs. Code whose hedge needs something that may fail (an
	// HTTP request body from GetBody) makes it here, so that a hedge that
	// cannot be made does not end the attempt. It runs on the goroutine
	// that coordinates the attempt, before the hedge's goroutine starts.
	Prepare func(hedge int) error
	// Postpone, if not nil, reports whether a failed copy's error asks
	// that the next hedge wait, and how long: gRPC's positive
	// grpc-retry-pushback-ms, which A6 says delays the next hedged
	// request by that much. Hedging then goes on, the next hedge d after
	// the failure (in place of at once, and of what was left of the
	// delay), and the following ones a delay apart as usual. It is asked
	// before Pushback, on the goroutine that coordinates the attempt. Nil
	// postpones nothing.
	Postpone func(error) (d time.Duration, ok bool)
	// Pushback, if not nil, reports whether a failed copy's error is the
	// server pushing back, which stops the hedging of this call. Nil means
	// an error with a wait hint (retry.RetryAfter) or one whose Rejected()
	// method is true.
	Pushback func(error) bool
}

// Result is what Attempt returns; a plain value, owned by the caller. The
// zero Result is never returned (Release is never nil).
type Result[T any] struct {
	// Value is the winner's value; the zero T if no copy succeeded.
	Value T
	// Err is nil if a copy succeeded. Otherwise it is the error of the
	// attempt: the first error that Call.Retryable rejected, or else the
	// first that pushed back or postponed the next hedge (Call.Pushback,
	// by default a wait hint, and Call.Postpone), or else the last.
	Err error
	// Winner is which copy succeeded (0 the first, n the n-th hedge), or -1.
	Winner int
	// Failed is which copy's error Err is, or -1 when a copy succeeded.
	Failed int
	// Hedges is how many hedges were sent.
	Hedges int
	// Release ends the contexts that Call.KeepWinner kept alive: the one of
	// the copy whose answer Attempt returned, and those of the copies that
	// had Answered. It is never nil and may be called more than once.
	Release context.CancelFunc
}

// copyResult is what a copy sends back.
type copyResult[T any] struct {
	hedge int
	v     T
	err   error
	took  time.Duration
}

func noRelease() {}

// Attempt makes one attempt of c.Op, hedged by h: the first copy at once;
// a hedge when the delay passes with no answer (h.Delay), and another
// after each further delay, up to h.MaxHedges; a hedge at once when a copy
// fails with an error that c.Retryable accepts. The first copy that
// succeeds wins: the others' contexts are canceled, and Attempt returns
// once every copy it started has returned, so no goroutine outlives it.
//
// Hedging stops, while the copies already sent run on, when h.Allow or
// h.Budget refuses a hedge, when c.Prepare cannot make one, or when a copy
// fails with a wait hint (server pushback: it would meet the same answer)
// or with an error whose Rejected() method is true (a breaker refused it),
// unless c.Postpone says that the failure only delays the next hedge. A
// copy failing with an error c.Retryable rejects ends the attempt with that
// error at once, as does the end of ctx.
//
// The first copy runs on the calling goroutine. When it answers before
// the delay, as most do, Attempt starts no goroutine: being ready to hedge
// costs the attempt a timer's start and stop, and the copy's context. When
// the delay passes first, the attempt is coordinated on the hedge timer's
// goroutine (time.AfterFunc) while the first copy runs on: it sends the
// hedges, reads the copies' answers, cancels the losers and calls the
// hooks (h.OnHedge, and c's functions but Op); when the first copy fails
// before the delay, the calling goroutine coordinates what follows. One
// goroutine at a time coordinates an attempt. When the key is not hedged
// (h.Delay is false), Attempt runs c.Op on the calling goroutine and
// starts none.
//
// An attempt that is not hedged allocates nothing of its own; one that is
// hedged but sends no hedge, one allocation: its first copy's context. The
// timers, the hedges' goroutines and the channels are reused from earlier
// attempts through h; the contexts are not, since code that
// an Op calls may keep one after the Op returned (net/http does, for a
// connection it goes on dialing). What c.Op does with its context may
// allocate: the first call of ctx.Done() makes the channel (one
// allocation), and a context derived from ctx (context.WithCancel of it)
// registers with it (three more, besides the derived context's own).
//
// Attempt does not validate h, whose fields do not change between
// attempts: call h.Validate once before the first Attempt (Do validates
// h on each call).
func Attempt[T any](ctx context.Context, h *Hedger, c Call[T]) Result[T] {
	delay, on := h.Delay(c.Key)
	if !on {
		start := time.Now()
		v, err := c.Op(ctx, 0)
		r := Result[T]{Value: v, Err: err, Winner: -1, Failed: 0, Release: noRelease}
		if err == nil {
			r.Winner, r.Failed = 0, -1
			h.succeeded(c.Key, time.Since(start))
		}
		return r
	}
	return race(ctx, h, c, delay)
}

// race is Attempt with hedging on. The first copy runs on the calling
// goroutine, with the hedge timer armed; most attempts end there, before
// the delay, with no goroutine started and no channel used: being ready
// to hedge then costs only the copy's context. When the timer fires first,
// its goroutine (the timer's AfterFunc) coordinates the attempt while the
// first copy runs on: it sends the hedges, reads the copies' answers,
// cancels the losers and calls the hooks, and hands the result to the
// calling goroutine once the first copy has answered too. When the first
// copy fails before the delay, the calling goroutine coordinates what
// follows (a hedge at once, for a retryable failure). One goroutine at a
// time coordinates, so the state in the racer needs no lock.
func race[T any](ctx context.Context, h *Hedger, c Call[T], delay time.Duration) Result[T] {
	rc := getRacer(h, c.Op)
	defer rc.put(h)
	rc.ctx, rc.h, rc.call, rc.delay = ctx, h, c, delay
	first := rc.runner(0)
	first.ctx = newCopyCtx(ctx)
	first.ctx.follow = true // nobody watches ctx for it before the timer fires
	rc.start = time.Now()
	rc.fire.Reset(delay)
	v, err := c.Op(first.ctx, 0)
	took := time.Since(rc.start)
	if !rc.fire.Stop() {
		// The timer fired: its goroutine coordinates, and waits for this
		// copy's answer.
		rc.results <- copyResult[T]{0, v, err, took}
		return <-rc.done
	}
	if err == nil {
		h.succeeded(c.Key, took)
		r := Result[T]{Value: v, Winner: 0, Failed: -1, Release: noRelease}
		if c.KeepWinner {
			r.Release = first.keep(ctx)
		} else {
			first.end()
		}
		return r
	}
	return rc.coordinate(&copyResult[T]{0, v, err, took})
}

// coordinate runs the attempt from the moment it needs coordinating: the
// hedge timer fired while the first copy runs (answered is nil: the first
// copy is in flight, and a hedge is due), or the first copy failed before
// the delay (answered is its result). It returns once every copy it knows
// of has answered.
func (rc *racer[T]) coordinate(answered *copyResult[T]) Result[T] {
	ctx, h, c, delay, start := rc.ctx, rc.h, rc.call, rc.delay, rc.start
	limit := 1 + h.hedges()
	retryable := c.Retryable
	if retryable == nil {
		retryable = func(err error) bool { return retry.Retryable(err) }
	}
	attempt := max(c.Attempt, 1)

	r := Result[T]{Winner: -1, Failed: -1, Release: noRelease}
	var hinted, last error
	hintedBy, lastBy := -1, -1
	done := false   // a winner, or an error that ends the attempt
	hedging := true // more hedges may be sent
	launched, inflight := 1, 1
	launch := func() {
		rc.launch(ctx, launched)
		launched++
		inflight++
	}
	defer rc.timer.Stop()
	var tick <-chan time.Time
	// The copies' contexts have no registration with ctx (see copyCtx):
	// the coordinator watches it for them.
	parentDone := ctx.Done()
	if ctx.Err() != nil {
		rc.copies[0].cancel(false)
		parentDone, hedging = nil, false
	}

	// hedge sends the next hedge, if the Hedger allows it, and reports
	// whether it did. cause is the failure that asked for it, or nil.
	hedge := func(cause error) bool {
		if !hedging || done || launched >= limit {
			hedging = false
			return false
		}
		if h.Allow != nil && !h.Allow(c.Key) || c.Allow != nil && !c.Allow() || h.Budget != nil && !h.spend() ||
			c.Prepare != nil && c.Prepare(launched) != nil {
			hedging = false
			return false
		}
		r.Hedges++
		if h.OnHedge != nil {
			h.OnHedge(Event{Key: c.Key, Attempt: attempt, Hedge: launched, Delay: time.Since(start), Err: cause})
		}
		launch()
		return true
	}
	// next arms the timer for the hedge after d.
	next := func(d time.Duration) {
		rc.timer.Reset(d)
		tick = rc.timer.C
	}
	// finish ends the attempt: every copy but keep is canceled.
	finish := func(keep int) {
		done, hedging = true, false
		tick = nil
		for i := range launched {
			if i != keep {
				rc.copies[i].cancel(true)
			}
		}
	}
	// answer takes in one copy's answer.
	answer := func(cr copyResult[T]) {
		inflight--
		switch {
		case done:
			// A loser. One that began before the winner ran longer than
			// the winner's whole attempt: its latency, cut short, is a
			// lower bound of what it would have taken, and observing it
			// keeps the quantile from drifting down as hedges win.
			if cr.err == nil {
				if c.Discard != nil {
					c.Discard(cr.v)
				}
			} else if cr.hedge < r.Winner && ctx.Err() == nil {
				h.Observe(c.Key, cr.took)
			}
		case cr.err == nil:
			r.Value, r.Winner = cr.v, cr.hedge
			finish(cr.hedge)
			h.succeeded(c.Key, cr.took)
			if cr.hedge > 0 && h.OnHedge != nil {
				h.OnHedge(Event{Key: c.Key, Attempt: attempt, Hedge: cr.hedge, Delay: time.Since(start), Won: true})
			}
		case ctx.Err() != nil || !retryable(cr.err):
			r.Err, r.Failed = cr.err, cr.hedge
			finish(cr.hedge)
		default:
			last, lastBy = cr.err, cr.hedge
			if d, ok := postpone(c, cr.err); ok {
				if hinted == nil {
					hinted, hintedBy = cr.err, cr.hedge
				}
				if hedging && launched < limit {
					next(d)
				}
				return
			}
			if pushback(c, cr.err) {
				hedging = false
				tick = nil
				if hinted == nil {
					hinted, hintedBy = cr.err, cr.hedge
				}
			}
			if hedge(cr.err) {
				next(delay)
			}
		}
	}

	if answered != nil {
		answer(*answered)
	} else if hedge(nil) {
		next(delay)
	}
	for inflight > 0 {
		select {
		case <-tick:
			if hedge(nil) {
				rc.timer.Reset(delay)
			} else {
				tick = nil
			}
		case <-parentDone:
			// The copies end with ctx's error, and no hedge follows.
			parentDone, tick, hedging = nil, nil, false
			for i := range launched {
				rc.copies[i].cancel(false)
			}
		case cr := <-rc.results:
			answer(cr)
		}
	}
	switch {
	case r.Winner >= 0 || r.Err != nil:
	case hinted != nil:
		r.Err, r.Failed = hinted, hintedBy
	default:
		r.Err, r.Failed = last, lastBy
	}
	keep := -1
	if c.KeepWinner {
		keep = max(r.Winner, r.Failed)
		r.Release = rc.copies[keep].keep(ctx)
	}
	for i := range launched {
		switch {
		case i == keep:
		case c.KeepWinner && rc.copies[i].answered():
			// A loser that has its answer, which the caller may still
			// have to read (an HTTP body to drain): kept too, until
			// Release. Only a hedged attempt has losers, so the
			// allocations are the hedge's.
			release, other := r.Release, rc.copies[i].keep(ctx)
			r.Release = func() { other(); release() }
		default:
			rc.copies[i].end()
		}
	}
	return r
}

// postpone reports whether err, a copy's retryable failure, delays the
// next hedge, and by how much.
func postpone[T any](c Call[T], err error) (time.Duration, bool) {
	if c.Postpone == nil {
		return 0, false
	}
	return c.Postpone(err)
}

// pushback reports whether err, a copy's retryable failure, stops hedging.
func pushback[T any](c Call[T], err error) bool {
	if c.Pushback != nil {
		return c.Pushback(err)
	}
	_, hinted := retry.RetryAfter(err)
	return hinted || retry.IsRejected(err)
}

// succeeded records a successful attempt: its latency feeds key's window,
// and the Budget is refunded.
func (h *Hedger) succeeded(key string, took time.Duration) {
	h.Observe(key, took)
	if h.Budget != nil {
		h.Budget.Success()
	}
}
