package breaker

import "sync"

// Group holds one Breaker per key, such as a host name or an endpoint, each
// made on first use with the same Config, so that one failing host does not
// open the breaker of the others. retryhttp.Transport uses one per host.
//
// The zero Group is ready to use with the zero Config's rules. Set Config
// (and Shared) before first use and do not change them afterwards. A Group
// never forgets a key: use keys from a bounded set. It is safe for
// concurrent use.
type Group struct {
	// Config is every breaker's configuration; Get returns its Validate
	// error if it is invalid.
	Config Config
	// Shared, if not nil, gives the Shared store of the breaker for key
	// (a Redis key per host, for example), in place of Config.Shared.
	Shared func(key string) Shared
	// Configure, if not nil, adjusts the Config of the breaker for key
	// before it is made (after Shared is applied): per-key hooks, such as
	// an OnStateChange that knows its key. It is called once per key,
	// possibly more than once if two calls make the same key's breaker at
	// once (only one breaker is kept).
	Configure func(key string, cfg *Config)

	m sync.Map // key -> *Breaker
}

// Get returns the breaker for key, making it if needed, or the error of
// Config.Validate.
func (g *Group) Get(key string) (*Breaker, error) {
	if b, ok := g.m.Load(key); ok {
		return b.(*Breaker), nil
	}
	cfg := g.Config
	if g.Shared != nil {
		cfg.Shared = g.Shared(key)
	}
	if g.Configure != nil {
		g.Configure(key, &cfg)
	}
	b, err := New(cfg)
	if err != nil {
		return nil, err
	}
	actual, _ := g.m.LoadOrStore(key, b)
	return actual.(*Breaker), nil
}

// Range calls f for each key and its breaker, in no particular order, until
// f returns false, for metrics and health pages.
func (g *Group) Range(f func(key string, b *Breaker) bool) {
	g.m.Range(func(k, v any) bool { return f(k.(string), v.(*Breaker)) })
}
