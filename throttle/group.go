package throttle

import (
	"sync"
	"sync/atomic"

	"github.com/again-go/again/retry"
)

// DefaultMaxKeys is the most keys a Group whose MaxKeys is zero keeps an
// Admitter for.
const DefaultMaxKeys = 1024

// OverflowKey is the key under which a Group keeps the one Admitter that
// every key beyond MaxKeys shares.
const OverflowKey = "(overflow)"

// Group holds one Admitter per key, such as a host name, a gRPC target or
// a method, each made on first use, so that an overloaded host throttles
// its own requests and not the others'. retryhttp.Transport and
// retrygrpc's Interceptor take one.
//
// Unlike breaker.Group it bounds its keys: once it holds MaxKeys of
// them, every new key shares one Admitter, kept under OverflowKey, so
// that keys taken from requests (a host per URL) cannot grow it without
// end, and an unknown key is still throttled.
//
// The zero Group is ready to use: SRE Throttlers with the zero Config's
// rules, at most DefaultMaxKeys keys. Set the fields before first use and
// do not change them afterwards. It is safe for concurrent use.
type Group struct {
	// New makes the Admitter of a key, such as a *Throttler or a *Rate;
	// nil means New(Config{}). A New that fails makes Get fail, and is
	// asked again next time.
	New func(key string) (retry.Admitter, error)
	// MaxKeys bounds the keys; zero means DefaultMaxKeys, negative no
	// bound.
	MaxKeys int

	m sync.Map // key -> retry.Admitter
	n atomic.Int64
}

// Get returns the Admitter of key, making it if needed, or the error of
// New.
func (g *Group) Get(key string) (retry.Admitter, error) {
	if a, ok := g.m.Load(key); ok {
		return a.(retry.Admitter), nil
	}
	limit := int64(g.MaxKeys)
	if limit == 0 {
		limit = DefaultMaxKeys
	}
	if limit > 0 && key != OverflowKey && g.n.Load() >= limit {
		return g.Get(OverflowKey)
	}
	a, err := g.make(key)
	if err != nil {
		return nil, err
	}
	actual, loaded := g.m.LoadOrStore(key, a)
	if !loaded && key != OverflowKey {
		g.n.Add(1)
	}
	return actual.(retry.Admitter), nil
}

func (g *Group) make(key string) (retry.Admitter, error) {
	if g.New != nil {
		return g.New(key)
	}
	return New(Config{})
}

// Range calls f for each key and its Admitter, in no particular order,
// until f returns false, for metrics and health pages.
func (g *Group) Range(f func(key string, a retry.Admitter) bool) {
	g.m.Range(func(k, v any) bool { return f(k.(string), v.(retry.Admitter)) })
}

// Len returns how many keys have an Admitter of their own (OverflowKey not
// counted).
func (g *Group) Len() int { return int(g.n.Load()) }
