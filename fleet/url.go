package fleet

import (
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// URL parameters that configure the Budget rather than the Redis client.
const (
	paramKey        = "key"
	paramMaxTokens  = "max_tokens"
	paramTokenRatio = "token_ratio"
	paramTimeout    = "timeout"
	paramFlush      = "flush"
)

// ParseURL parses a budget URL,
//
//	redis://[[user]:password@]host[:port][/db]?key=NAME[&max_tokens=10][&token_ratio=0.1][&timeout=50ms][&flush=100ms]
//
// (rediss:// for TLS), into the BudgetConfig it names, without a Client,
// and the options of the client to make for it. key is required; the other
// budget parameters are BudgetConfig's fields, with the same defaults when
// absent. Any other query parameter is go-redis's (dial_timeout,
// pool_size, ...: see redis.ParseURL). The options have
// ContextTimeoutEnabled set, as NewBudget requires.
//
// Errors match ErrInvalid and name the part at fault, never the password.
func ParseURL(rawURL string) (BudgetConfig, *redis.Options, error) {
	var cfg BudgetConfig
	u, err := url.Parse(rawURL)
	if err != nil {
		// url's errors quote the whole URL, password included.
		return cfg, nil, &configError{"a budget URL must look like redis://HOST:PORT/DB?key=NAME; it does not parse as a URL"}
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return cfg, nil, &configError{fmt.Sprintf("a budget URL must start with redis:// or rediss://, got scheme %q", u.Scheme)}
	}
	q := u.Query()
	cfg.Key = q.Get(paramKey)
	if cfg.Key == "" {
		return cfg, nil, &configError{"a budget URL must name the budget with ?key=NAME, as in redis://HOST:PORT/DB?key=NAME"}
	}
	if !validKey(cfg.Key) {
		return cfg, nil, &configError{fmt.Sprintf("the budget URL's key must be a non-empty name without '{' or '}', got %q", cfg.Key)}
	}
	floats := []struct {
		name string
		dst  *float64
	}{{paramMaxTokens, &cfg.MaxTokens}, {paramTokenRatio, &cfg.TokenRatio}}
	for _, f := range floats {
		if v := q.Get(f.name); v != "" {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || !(x > 0) || x > 1e15 {
				return cfg, nil, &configError{fmt.Sprintf("the budget URL's %s must be a number > 0, got %q", f.name, v)}
			}
			*f.dst = x
		}
	}
	durations := []struct {
		name string
		dst  *time.Duration
	}{{paramTimeout, &cfg.Timeout}, {paramFlush, &cfg.FlushInterval}}
	for _, d := range durations {
		if v := q.Get(d.name); v != "" {
			x, err := time.ParseDuration(v)
			if err != nil || x <= 0 {
				return cfg, nil, &configError{fmt.Sprintf("the budget URL's %s must be a duration > 0 such as 50ms, got %q", d.name, v)}
			}
			*d.dst = x
		}
	}
	for _, p := range []string{paramKey, paramMaxTokens, paramTokenRatio, paramTimeout, paramFlush} {
		q.Del(p)
	}
	u.RawQuery = q.Encode()
	opts, err := redis.ParseURL(u.String())
	if err != nil {
		// go-redis's errors name the option or part at fault, never the
		// password.
		return cfg, nil, &configError{fmt.Sprintf("the budget URL is not a Redis URL go-redis accepts: %v", err)}
	}
	opts.ContextTimeoutEnabled = true
	return cfg, opts, nil
}

// OpenBudget opens the Budget that rawURL names (see ParseURL), on a
// client of its own that Close closes; logger is BudgetConfig.Logger (nil
// means slog.Default()). It does not wait for Redis (see NewBudget).
func OpenBudget(rawURL string, logger *slog.Logger) (*Budget, error) {
	cfg, opts, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	cfg.Client = redis.NewClient(opts)
	cfg.Logger = logger
	b, err := NewBudget(cfg)
	if err != nil {
		cfg.Client.Close()
		return nil, err
	}
	b.owned = true
	return b, nil
}
