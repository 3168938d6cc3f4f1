package fleet

import "github.com/again-go/again/retry"

var _ retry.Budget = (*Budget)(nil)

// newLocal returns the local bucket a Budget falls back on: retry's own,
// with the same settings, so that the fleet and the process follow one rule.
func newLocal(maxTokens, ratio float64) retry.Budget {
	return &retry.TokenBucket{MaxTokens: maxTokens, TokenRatio: ratio}
}
