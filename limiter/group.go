package limiter

import (
	"sync"
	"sync/atomic"
)

// DefaultMaxKeys is the most keys a Group whose MaxKeys is zero keeps a
// Limiter for.
const DefaultMaxKeys = 1024

// OverflowKey is the key under which a Group keeps the one Limiter that
// every key beyond MaxKeys shares.
const OverflowKey = "(overflow)"

// Group holds one Limiter per key, such as a host name, a gRPC target or a
// method, each made on first use with the same Config, so that a slow host
// fills its own limit and not the others'. retryhttp.Transport takes one.
//
// Like throttle.Group it bounds its keys: once it holds MaxKeys of them,
// every new key shares one Limiter, kept under OverflowKey, so that keys
// taken from requests (a host per URL) cannot grow it without end, and an
// unknown key is still limited.
//
// The zero Group is ready to use: fixed limits of 25 per key (the zero
// Config), at most DefaultMaxKeys keys. For a limit of 8 per host, or an
// adaptive one:
//
//	&limiter.Group{Config: limiter.Config{Limit: 8}}
//	&limiter.Group{Config: limiter.Config{Algorithm: limiter.Gradient2{}}}
//
// Set the fields before first use and do not change them afterwards. It is
// safe for concurrent use.
type Group struct {
	// Config is every Limiter's configuration (each key's adaptive limit
	// learns on its own); Get returns its Validate error if it is invalid.
	Config Config
	// Configure, if not nil, adjusts the Config of the Limiter for key
	// before it is made: a limit per key. It is called once per key,
	// possibly more than once if two calls make the same key's Limiter at
	// once (only one Limiter is kept).
	Configure func(key string, cfg *Config)
	// MaxKeys bounds the keys; zero means DefaultMaxKeys, negative no
	// bound.
	MaxKeys int

	m sync.Map // key -> *Limiter
	n atomic.Int64
}

// Get returns the Limiter of key, making it if needed, or the error of
// Config.Validate.
func (g *Group) Get(key string) (*Limiter, error) {
	if l, ok := g.m.Load(key); ok {
		return l.(*Limiter), nil
	}
	limit := int64(g.MaxKeys)
	if limit == 0 {
		limit = DefaultMaxKeys
	}
	if limit > 0 && key != OverflowKey && g.n.Load() >= limit {
		return g.Get(OverflowKey)
	}
	cfg := g.Config
	if g.Configure != nil {
		g.Configure(key, &cfg)
	}
	l, err := New(cfg)
	if err != nil {
		return nil, err
	}
	actual, loaded := g.m.LoadOrStore(key, l)
	if !loaded && key != OverflowKey {
		g.n.Add(1)
	}
	return actual.(*Limiter), nil
}

// Range calls f for each key and its Limiter, in no particular order,
// until f returns false, for metrics and health pages.
func (g *Group) Range(f func(key string, l *Limiter) bool) {
	g.m.Range(func(k, v any) bool { return f(k.(string), v.(*Limiter)) })
}

// Len returns how many keys have a Limiter of their own (OverflowKey not
// counted).
func (g *Group) Len() int { return int(g.n.Load()) }
