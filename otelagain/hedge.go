package otelagain

import (
	"context"

	"github.com/again-go/again/hedge"
)

// Hedger instruments h under name (the again.hedge.name attribute): it
// sets h.OnHedge (calling the one h had, if any, after its own) so that
// every hedge sent counts in again.hedge.sent and every hedge that won its
// attempt in again.hedge.won. Call it before h's first use, once. To see
// the budget that pays for the hedges, give h.Budget as Budget returns it,
// under a name of its own.
//
// Transport calls Hedger for its own Hedge: a Hedger given to both, or
// twice, is instrumented once, under the first name (its events count
// once).
func (t *Telemetry) Hedger(name string, h *hedge.Hedger) {
	if h == nil {
		return
	}
	t.mu.Lock()
	_, done := t.hedgers[h]
	t.hedgers[h] = struct{}{}
	t.mu.Unlock()
	if done {
		return
	}
	attrs := bind(HedgeNameKey.String(name))
	prev := h.OnHedge
	h.OnHedge = func(e hedge.Event) {
		if e.Won {
			t.hedgesWon.Add(context.Background(), 1, attrs.add...)
		} else {
			t.hedgesSent.Add(context.Background(), 1, attrs.add...)
		}
		if prev != nil {
			prev(e)
		}
	}
}
