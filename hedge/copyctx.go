package hedge

import (
	"context"
	"sync"
	"time"
)

// copyCtx is the context of one copy of a hedged attempt: the attempt's
// deadline and values, and a cancellation of its own, so that the winner
// can stop the others.
//
// context.WithCancel would do, at two allocations per copy, paid on every
// attempt although most never send a hedge; a copyCtx is reused, from a
// pool in the Hedger, so that being ready to hedge costs nothing. It needs
// no registration with its parent: the attempt's coordinator watches the
// parent and cancels the copies it started when the parent ends (only a
// context kept past the attempt, Call.KeepWinner, registers).
//
// The price of reuse is the rule stated on Call.Op: a copy's context must
// not be used once Attempt has returned (or, under KeepWinner, once
// Result.Release was called), since it may then be another attempt's. Each
// use has a generation, so that what a stale holder can still call
// (Release, the stop function of AfterFunc, a kept context's watch of its
// parent) finds the use over and does nothing.
type copyCtx struct {
	mu     sync.Mutex
	parent context.Context
	gen    uint64        // counts uses
	done   chan struct{} // made by Done, or closedchan
	err    error
	funcs  []afterFunc // registered by AfterFunc in this use
	nextID uint64      // identifies registrations, across uses

	// answered: the copy has its answer (Answered), and the attempt's own
	// cancellation no longer reaches it; the parent's still does.
	answered bool
}

// copyKey is the key under which a copy's context, and those derived from
// it, find the copy (Answered).
type copyKey struct{}

// Answered tells the hedged attempt that the copy whose context is ctx, or
// an ancestor of ctx, has its answer and is only finishing with it: from
// then on another copy's success, or a failure that ends the attempt, no
// longer cancels ctx (the end of the attempt's own context still does).
// An HTTP copy calls it when its response arrives, so that a loser can
// read its body to the end and keep its connection instead of having it
// cut. The attempt still waits for the copy's Op to return, and a value it
// then returns goes to Call.Discard. Outside a hedged copy (ctx is not, and
// does not derive from, a copy's context) Answered does nothing.
func Answered(ctx context.Context) {
	if c, ok := ctx.Value(copyKey{}).(*copyCtx); ok {
		c.mu.Lock()
		c.answered = true
		c.mu.Unlock()
	}
}

type afterFunc struct {
	id uint64
	f  func()
}

// closedchan is the Done channel of a copy canceled before anything asked
// for one.
var closedchan = make(chan struct{})

func init() { close(closedchan) }

// context returns a copy context of parent, reused if one is free, and the
// generation of this use.
func (h *Hedger) context(parent context.Context) (*copyCtx, uint64) {
	c, _ := h.contexts.Get().(*copyCtx)
	if c == nil {
		c = &copyCtx{}
	}
	c.mu.Lock()
	// The previous use left c done, for whoever still held it; a new one
	// starts afresh.
	c.parent, c.err, c.done, c.funcs, c.answered = parent, nil, nil, c.funcs[:0], false
	gen := c.gen
	c.mu.Unlock()
	return c, gen
}

// recycle ends use gen of c, which must be done, and gives c back to h. It
// stays done until reused: a holder that broke the rule on Call.Op sees
// it done rather than alive as long as possible.
func (h *Hedger) recycle(c *copyCtx, gen uint64) {
	c.mu.Lock()
	if c.gen != gen {
		c.mu.Unlock()
		return
	}
	c.gen++
	c.parent = nil // not to keep the attempt's values alive
	c.mu.Unlock()
	h.contexts.Put(c)
}

func (c *copyCtx) parentCtx() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.parent == nil {
		return context.Background() // a stale holder's: the use is over
	}
	return c.parent
}

// Deadline returns the parent's deadline.
func (c *copyCtx) Deadline() (time.Time, bool) { return c.parentCtx().Deadline() }

// Value returns the parent's value for key, and the copy itself for
// copyKey (Answered). context.Cause of a copy
// therefore finds its parent's cause: for a copy canceled by the attempt
// while its parent lives, nil, where the contexts derived from it get
// context.Canceled.
func (c *copyCtx) Value(key any) any {
	if _, ok := key.(copyKey); ok {
		return c
	}
	return c.parentCtx().Value(key)
}

// Done returns a channel closed when the copy is canceled or its parent
// ends.
func (c *copyCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
	}
	return c.done
}

// Err returns nil until Done is closed, then the parent's error if the
// parent ended first, or context.Canceled.
func (c *copyCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// String names the context in panics and logs, as package context's do.
func (c *copyCtx) String() string { return "hedge.copyCtx" }

// AfterFunc arranges for f to run once c is done, and returns a function
// that undoes that. Package context calls it for the contexts derived from
// a copy's (net/http derives one from each request's), which then need no
// goroutine to watch it. f runs on the goroutine that cancels c, outside
// its lock; if c is done already, on a goroutine of its own.
func (c *copyCtx) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	c.nextID++
	id, gen := c.nextID, c.gen
	c.funcs = append(c.funcs, afterFunc{id, f})
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.gen != gen || c.err != nil {
			return false
		}
		for i, a := range c.funcs {
			if a.id == id {
				c.funcs = append(c.funcs[:i], c.funcs[i+1:]...)
				c.funcs[:len(c.funcs)+1][len(c.funcs)] = afterFunc{} // let f go
				return true
			}
		}
		return false
	}
}

// cancel ends use gen of c, unless it ended already, or byAttempt (the
// attempt was decided while the copy ran) and the copy has Answered: with
// its parent's error if the parent is done, else context.Canceled. It
// runs what AfterFunc registered.
func (c *copyCtx) cancel(gen uint64, byAttempt bool) {
	c.mu.Lock()
	if c.gen != gen || c.err != nil || byAttempt && c.answered {
		c.mu.Unlock()
		return
	}
	c.err = context.Canceled
	if err := c.parent.Err(); err != nil {
		c.err = err
	}
	if c.done == nil {
		c.done = closedchan
	} else {
		close(c.done)
	}
	// The registered functions run outside the lock (one may call its stop
	// function), so they are taken out of c meanwhile, and their slice put
	// back for the next use unless c was recycled in between.
	funcs := c.funcs
	c.funcs = nil
	c.mu.Unlock()
	for _, a := range funcs {
		a.f()
	}
	if funcs != nil {
		clear(funcs)
		c.mu.Lock()
		if c.gen == gen {
			c.funcs = funcs[:0]
		}
		c.mu.Unlock()
	}
}
