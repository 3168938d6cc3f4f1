package fleet

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// URL parameters that configure the Budget or BreakerStore rather than
// the Redis client.
const (
	paramKey        = "key"
	paramMaxTokens  = "max_tokens"
	paramTokenRatio = "token_ratio"
	paramTimeout    = "timeout"
	paramConnect    = "connect_timeout"
	paramFlush      = "flush"
	paramCAFile     = "ca_file"
	paramCertFile   = "cert_file"
	paramKeyFile    = "key_file"
	paramMaster     = "master_name"
)

// storeURL is what a fleet URL names.
type storeURL struct {
	cfg      BudgetConfig
	opts     *redis.Options         // a single server, or nil
	failover *redis.FailoverOptions // Sentinel (master_name given), or nil
	secrets  redactor
}

// ParseURL parses a budget URL,
//
//	redis://[[user]:password@]host[:port][/db]?key=NAME[&max_tokens=10][&token_ratio=0.1][&timeout=50ms][&connect_timeout=1s][&flush=100ms]
//
// (rediss:// for TLS, with ca_file=PEM to trust a private authority and
// cert_file=PEM&key_file=PEM for a client certificate), into the
// BudgetConfig it names, without a Client, and the options of the client
// to make for it. key is required; the other budget parameters are
// BudgetConfig's fields, with the same defaults when absent. Any other
// query parameter is go-redis's (dial_timeout, pool_size, ...: see
// redis.ParseURL). The options have ContextTimeoutEnabled set, as
// NewBudget requires, and go-redis's own retries off (MaxRetries -1
// unless the URL sets max_retries, and one dial per connection): within a
// 50 ms decision they would only turn a refused connection into a
// timeout, hiding the cause, and the Budget tries Redis again every
// FlushInterval anyway.
//
// A URL with master_name=NAME names a Sentinel deployment, whose client
// is go-redis's failover client: OpenBudget accepts it, ParseURL does not
// (its options are for one server).
//
// Errors match ErrInvalid and name the part at fault, never the password.
func ParseURL(rawURL string) (BudgetConfig, *redis.Options, error) {
	u, err := parseStoreURL(rawURL, "budget")
	if err != nil {
		return BudgetConfig{}, nil, err
	}
	if u.opts == nil {
		return BudgetConfig{}, nil, &configError{"a budget URL with master_name names a Sentinel deployment: open it with OpenBudget, or make the client with redis.ParseFailoverURL and call NewBudget"}
	}
	return u.cfg, u.opts, nil
}

// parseStoreURL parses a URL for a budget or, with what "breaker store",
// a BreakerStore, which takes no bucket parameters.
func parseStoreURL(rawURL, what string) (storeURL, error) {
	var s storeURL
	u, err := url.Parse(rawURL)
	if err != nil {
		// url's errors quote the whole URL, password included.
		return s, &configError{fmt.Sprintf("a %s URL must look like redis://HOST:PORT/DB?key=NAME; it does not parse as a URL", what)}
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return s, &configError{fmt.Sprintf("a %s URL must start with redis:// or rediss://, got scheme %q", what, u.Scheme)}
	}
	q := u.Query()
	cfg := &s.cfg
	cfg.Key = q.Get(paramKey)
	if cfg.Key == "" {
		return s, &configError{fmt.Sprintf("a %s URL must name the %s with ?key=NAME, as in redis://HOST:PORT/DB?key=NAME", what, what)}
	}
	if !validKey(cfg.Key) {
		return s, &configError{fmt.Sprintf("the %s URL's key must be a non-empty name without '{' or '}', got %q", what, cfg.Key)}
	}
	floats := []struct {
		name string
		dst  *float64
	}{{paramMaxTokens, &cfg.MaxTokens}, {paramTokenRatio, &cfg.TokenRatio}}
	durations := []struct {
		name string
		dst  *time.Duration
	}{{paramTimeout, &cfg.Timeout}, {paramConnect, &cfg.ConnectTimeout}, {paramFlush, &cfg.FlushInterval}}
	if what != "budget" {
		for _, p := range []string{paramMaxTokens, paramTokenRatio, paramFlush} {
			if q.Has(p) {
				return s, &configError{fmt.Sprintf("the %s URL's %s is a budget's parameter; a %s takes key, timeout and connect_timeout", what, p, what)}
			}
		}
	}
	for _, f := range floats {
		if v := q.Get(f.name); v != "" {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || !(x > 0) || x > 1e15 {
				return s, &configError{fmt.Sprintf("the %s URL's %s must be a number > 0, got %q", what, f.name, v)}
			}
			*f.dst = x
		}
	}
	for _, d := range durations {
		if v := q.Get(d.name); v != "" {
			x, err := time.ParseDuration(v)
			if err != nil || x <= 0 {
				return s, &configError{fmt.Sprintf("the %s URL's %s must be a duration > 0 such as 50ms, got %q", what, d.name, v)}
			}
			*d.dst = x
		}
	}
	tlsFiles := [3]string{q.Get(paramCAFile), q.Get(paramCertFile), q.Get(paramKeyFile)}
	if tlsFiles != [3]string{} && u.Scheme != "rediss" {
		return s, &configError{fmt.Sprintf("the %s URL's ca_file, cert_file and key_file are for TLS: start it with rediss://", what)}
	}
	if pw, ok := u.User.Password(); ok {
		s.secrets = append(s.secrets, pw)
	}
	if pw := q.Get("password"); pw != "" {
		s.secrets = append(s.secrets, pw) // a Sentinel master's
	}
	for _, p := range []string{paramKey, paramMaxTokens, paramTokenRatio, paramTimeout, paramConnect, paramFlush, paramCAFile, paramCertFile, paramKeyFile} {
		q.Del(p)
	}
	u.RawQuery = q.Encode()
	var tc **tls.Config
	if q.Has(paramMaster) {
		s.failover, err = redis.ParseFailoverURL(u.String())
		if err == nil {
			s.failover.ContextTimeoutEnabled = true
			tc = &s.failover.TLSConfig
		}
	} else {
		s.opts, err = redis.ParseURL(u.String())
		if err == nil {
			s.opts.ContextTimeoutEnabled = true
			tc = &s.opts.TLSConfig
		}
	}
	if err != nil {
		// go-redis's errors name the option or part at fault, never the
		// password.
		return s, &configError{fmt.Sprintf("the %s URL is not a Redis URL go-redis accepts: %v", what, s.secrets.text(err))}
	}
	if err := loadTLS(*tc, tlsFiles, what); err != nil {
		return s, err
	}
	// go-redis's own retries off: see ParseURL.
	if !q.Has("max_retries") {
		if s.opts != nil {
			s.opts.MaxRetries = -1
		} else {
			s.failover.MaxRetries = -1
		}
	}
	if s.opts != nil {
		s.opts.DialerRetries = 1
	} else if s.failover.DialerRetries == 0 {
		s.failover.DialerRetries = 1
	}
	return s, nil
}

// loadTLS adds the authority and client certificate files to c, the
// rediss:// configuration go-redis made (nil for redis://).
func loadTLS(c *tls.Config, files [3]string, what string) error {
	ca, cert, key := files[0], files[1], files[2]
	if c == nil {
		return nil
	}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return &configError{fmt.Sprintf("the %s URL's ca_file %q cannot be read: %v", what, ca, pathErr(err))}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return &configError{fmt.Sprintf("the %s URL's ca_file %q holds no PEM certificate", what, ca)}
		}
		c.RootCAs = pool
	}
	if (cert == "") != (key == "") {
		return &configError{fmt.Sprintf("the %s URL must give cert_file and key_file together, for a client certificate", what)}
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return &configError{fmt.Sprintf("the %s URL's cert_file %q and key_file %q are not a certificate and its key in PEM: %v", what, cert, key, pathErr(err))}
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return nil
}

// pathErr drops the path and operation that os's errors repeat.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// client makes the client that the URL names.
func (s storeURL) client() redis.UniversalClient {
	if s.failover != nil {
		return redis.NewFailoverClient(s.failover)
	}
	return redis.NewClient(s.opts)
}

// OpenBudget opens the Budget that rawURL names (see ParseURL; a URL
// with master_name=NAME is a Sentinel deployment, whose Sentinels are the
// URL's host and its addr= parameters), on a client of its own that Close
// closes; logger is BudgetConfig.Logger (nil means slog.Default()). It
// does not wait for Redis (see NewBudget).
func OpenBudget(rawURL string, logger *slog.Logger) (*Budget, error) {
	u, err := parseStoreURL(rawURL, "budget")
	if err != nil {
		return nil, err
	}
	cfg := u.cfg
	cfg.Client = u.client()
	cfg.Logger = logger
	b, err := newBudget(cfg, u.secrets, true)
	if err != nil {
		cfg.Client.Close()
		return nil, err
	}
	return b, nil
}

// OpenBreakerStore opens the BreakerStore that rawURL names, on a client
// of its own that Close closes. The URL is a budget URL (see ParseURL and
// OpenBudget) whose key names the breaker, with the parameters timeout and
// connect_timeout and go-redis's, but not the budget's max_tokens,
// token_ratio and flush. logger is BreakerStoreConfig.Logger (nil means
// slog.Default()). It makes no round trip. Errors match ErrInvalid and name
// the part at fault, never the password.
func OpenBreakerStore(rawURL string, logger *slog.Logger) (*BreakerStore, error) {
	u, err := parseStoreURL(rawURL, "breaker store")
	if err != nil {
		return nil, err
	}
	c := u.client()
	s, err := NewBreakerStore(BreakerStoreConfig{Client: c, Key: u.cfg.Key, Timeout: u.cfg.Timeout, ConnectTimeout: u.cfg.ConnectTimeout, Logger: logger})
	if err != nil {
		c.Close()
		return nil, err
	}
	s.owned = true
	s.secrets = append(s.secrets, u.secrets...)
	return s, nil
}
