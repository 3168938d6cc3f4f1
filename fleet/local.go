package fleet

import (
	"math"
	"sync"
)

// localBudget is what the Budget falls back on: retry's Budget interface.
type localBudget interface {
	Success()
	Failure() bool
}

// newLocal is a stand-in for retry.TokenBucket until branch i8-retry lands.
func newLocal(maxTokens, ratio float64) localBudget {
	if maxTokens == 0 {
		maxTokens = defaultMaxTokens
	}
	if ratio == 0 {
		ratio = defaultTokenRatio
	}
	return &bucket{c: int64(math.Min(maxTokens, 1<<40) * milli), r: max(1, int64(math.Min(ratio, 1<<40)*milli))}
}

type bucket struct {
	mu      sync.Mutex
	c, r, u int64
}

func (b *bucket) Success() {
	b.mu.Lock()
	b.u = max(0, b.u-b.r)
	b.mu.Unlock()
}

func (b *bucket) Failure() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.u = min(b.u+milli, b.c)
	return b.c-b.u > b.c/2
}
