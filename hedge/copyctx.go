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
// context.WithCancel would do, at two allocations per copy and a
// registration with the caller's context when that can be canceled; a
// copyCtx is one allocation and needs no registration: the attempt's
// coordinator watches the caller's context and cancels the copies it
// started when that ends (only a context kept past the attempt,
// Call.KeepWinner, registers). Its AfterFunc method lets the contexts
// derived from it (net/http's) follow it without a goroutine.
//
// It is not pooled, though that would make an attempt free: code that an
// Op calls may keep the context after the Op returned, and net/http does
// by design (a connection dialed for a request that was canceled is still
// dialed, with the request context's values, for the pool). A reused
// context would hand such code another attempt's values, and show it alive
// again.
type copyCtx struct {
	mu     sync.Mutex
	parent context.Context
	done   chan struct{} // made by Done, or closedchan
	err    error
	funcs  []afterFunc  // registered by AfterFunc
	buf    [1]afterFunc // funcs' first: net/http registers one context
	nextID uint64       // identifies registrations

	// answered: the copy has its answer (Answered), and the attempt's own
	// cancellation no longer reaches it; the parent's still does.
	answered bool

	// follow: the context watches its parent itself, from the first call
	// of Done or AfterFunc on (the first copy, which runs on the calling
	// goroutine while nobody watches the parent for it), and Err looks at
	// the parent. A copy whose parent cannot end, or an Op that never
	// waits on its context, costs nothing for it. Set before the copy
	// starts, never changed.
	follow bool
	// stop ends the registration with the parent (context.AfterFunc),
	// once made: by follow, or by keep.
	stop func() bool
}

type afterFunc struct {
	id uint64
	f  func()
}

// closedchan is the Done channel of a copy canceled before anything asked
// for one.
var closedchan = make(chan struct{})

func init() { close(closedchan) }

func newCopyCtx(parent context.Context) *copyCtx {
	c := &copyCtx{parent: parent}
	c.funcs = c.buf[:0]
	return c
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
// then returns goes to Call.Discard; under Call.KeepWinner the copy's
// context then lives until Result.Release, for what the caller still has
// to read of the answer. Outside a hedged copy (ctx is not, and does not
// derive from, a copy's context) Answered does nothing.
func Answered(ctx context.Context) {
	if c, ok := ctx.Value(copyKey{}).(*copyCtx); ok {
		c.mu.Lock()
		c.answered = true
		c.mu.Unlock()
	}
}

// Deadline returns the parent's deadline.
func (c *copyCtx) Deadline() (time.Time, bool) { return c.parent.Deadline() }

// Value returns the parent's value for key, and the copy itself for
// copyKey (Answered). context.Cause of a copy therefore finds its parent's
// cause: for a copy canceled by the attempt while its parent lives, nil,
// where the contexts derived from it get context.Canceled.
func (c *copyCtx) Value(key any) any {
	if _, ok := key.(copyKey); ok {
		return c
	}
	return c.parent.Value(key)
}

// followParent registers c with its parent, unless it is registered
// already, done, or its parent cannot end, so that the parent's end
// cancels c without a coordinator to watch it.
func (c *copyCtx) followParent() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil || c.stop != nil || c.parent.Done() == nil {
		return
	}
	// Holding the lock is safe: for a parent done already, AfterFunc runs
	// the function on a goroutine of its own, which waits for it.
	c.stop = context.AfterFunc(c.parent, func() { c.cancel(false) })
}

// Done returns a channel closed when the copy is canceled or its parent
// ends.
func (c *copyCtx) Done() <-chan struct{} {
	if c.follow {
		c.followParent()
	}
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
	err := c.err
	c.mu.Unlock()
	if err == nil && c.follow && c.parent.Err() != nil {
		// Not watched yet: the parent's end is seen here first.
		c.cancel(false)
		c.mu.Lock()
		err = c.err
		c.mu.Unlock()
	}
	return err
}

// String names the context in panics and logs, as package context's do.
func (c *copyCtx) String() string { return "hedge.copyCtx" }

// AfterFunc arranges for f to run once c is done, and returns a function
// that undoes that. Package context calls it for the contexts derived from
// a copy's (net/http derives one from each request's), which then need no
// goroutine to watch it. f runs on the goroutine that cancels c, outside
// its lock; if c is done already, on a goroutine of its own.
func (c *copyCtx) AfterFunc(f func()) (stop func() bool) {
	if c.follow {
		c.followParent()
	}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	c.nextID++
	id := c.nextID
	c.funcs = append(c.funcs, afterFunc{id, f})
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.err != nil {
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

// cancel ends c, unless it ended already, or byAttempt (the attempt was
// decided while the copy ran) and the copy has Answered: with its parent's
// error if the parent is done, else context.Canceled. It runs what
// AfterFunc registered, outside the lock (one may call its stop function).
func (c *copyCtx) cancel(byAttempt bool) {
	c.mu.Lock()
	if c.err != nil || byAttempt && c.answered {
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
	funcs, stop := c.funcs, c.stop
	c.funcs = nil
	c.mu.Unlock()
	if stop != nil {
		stop() // false when the parent's end is what canceled c
	}
	for _, a := range funcs {
		a.f()
	}
}
