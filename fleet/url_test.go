package fleet

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/again-go/again/fleet/fleettest"
)

func TestParseURL(t *testing.T) {
	cfg, opts, err := ParseURL("redis://user:s3cret@db.internal:6380/2?key=payments&max_tokens=20&token_ratio=0.5&timeout=20ms&connect_timeout=3s&flush=1s&pool_size=7")
	if err != nil {
		t.Fatal(err)
	}
	want := BudgetConfig{Key: "payments", MaxTokens: 20, TokenRatio: 0.5, Timeout: 20 * time.Millisecond, ConnectTimeout: 3 * time.Second, FlushInterval: time.Second}
	if cfg != want {
		t.Errorf("ParseURL config = %+v, want %+v", cfg, want)
	}
	if opts.Addr != "db.internal:6380" || opts.DB != 2 || opts.Username != "user" || opts.Password != "s3cret" || opts.PoolSize != 7 || !opts.ContextTimeoutEnabled {
		t.Errorf("ParseURL options: Addr %q DB %d Username %q Password %q PoolSize %d ContextTimeoutEnabled %v; want db.internal:6380, 2, user, s3cret, 7, true",
			opts.Addr, opts.DB, opts.Username, opts.Password, opts.PoolSize, opts.ContextTimeoutEnabled)
	}
	// go-redis's own retries would hide a refused connection behind a
	// timeout; a URL may still ask for them.
	if opts.MaxRetries != -1 || opts.DialerRetries != 1 {
		t.Errorf("default MaxRetries %d, DialerRetries %d; want -1 and 1", opts.MaxRetries, opts.DialerRetries)
	}
	if _, opts, err = ParseURL("redis://h?key=k&max_retries=2"); err != nil || opts.MaxRetries != 2 {
		t.Errorf("max_retries=2: MaxRetries %d, %v; want 2", opts.MaxRetries, err)
	}
}

// TestParseURLTLS: rediss:// takes a CA file and a client certificate.
func TestParseURLTLS(t *testing.T) {
	s := fleettest.StartTLS(t)
	dir := filepath.Dir(s.CAFile())
	_, opts, err := ParseURL(s.URL("key=k") + "&cert_file=" + filepath.Join(dir, "server.pem") + "&key_file=" + filepath.Join(dir, "server-key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	if opts.TLSConfig == nil || opts.TLSConfig.RootCAs == nil || len(opts.TLSConfig.Certificates) != 1 {
		t.Errorf("TLS config %+v: want the CA file's pool and one client certificate", opts.TLSConfig)
	}
	bad := filepath.Join(t.TempDir(), "bad.pem")
	if err := os.WriteFile(bad, []byte("not PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ url, want string }{
		{"redis://h?key=k&ca_file=" + s.CAFile(), "are for TLS: start it with rediss://"},
		{"rediss://h?key=k&ca_file=/nonexistent.pem", `ca_file "/nonexistent.pem" cannot be read: no such file or directory`},
		{"rediss://h?key=k&ca_file=" + bad, "holds no PEM certificate"},
		{"rediss://h?key=k&cert_file=" + bad, "must give cert_file and key_file together"},
		{"rediss://h?key=k&cert_file=" + bad + "&key_file=" + bad, "are not a certificate and its key in PEM"},
	}
	for _, tt := range tests {
		_, _, err := ParseURL(tt.url)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseURL(%q) error = %v, want ErrInvalid containing %q", tt.url, err, tt.want)
		}
	}
}

// TestOpenBreakerStoreRejects: a breaker store's URL takes no bucket
// parameter, and names the breaker store in its errors.
func TestOpenBreakerStoreRejects(t *testing.T) {
	tests := []struct{ url, want string }{
		{"redis://h/0", "a breaker store URL must name the breaker store with ?key=NAME"},
		{"redis://h/0?key=k&max_tokens=3", "max_tokens is a budget's parameter; a breaker store takes key, timeout and connect_timeout"},
		{"redis://:hunter2@h/x?key=k", "breaker store URL is not a Redis URL go-redis accepts"},
	}
	for _, tt := range tests {
		_, err := OpenBreakerStore(tt.url, nil)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("OpenBreakerStore(%q) error = %v, want ErrInvalid containing %q", tt.url, err, tt.want)
		}
	}
}

func TestParseURLRejects(t *testing.T) {
	tests := []struct{ url, want string }{
		{"localhost:6379?key=k", "must start with redis://"},
		{"http://localhost?key=k", `must start with redis:// or rediss://, got scheme "http"`},
		{"redis://localhost:6379/0", "must name the budget with ?key=NAME"},
		{"redis://localhost?key=a{b}", `key must be a non-empty name without '{' or '}', got "a{b}"`},
		{"redis://localhost?key=k&max_tokens=-1", `max_tokens must be a number > 0, got "-1"`},
		{"redis://localhost?key=k&token_ratio=NaN", `token_ratio must be a number > 0, got "NaN"`},
		{"redis://localhost?key=k&timeout=50", `timeout must be a duration > 0 such as 50ms, got "50"`},
		{"redis://localhost?key=k&flush=-1s", `flush must be a duration > 0 such as 50ms, got "-1s"`},
		{"redis://localhost?key=k&connect_timeout=0s", `connect_timeout must be a duration > 0 such as 50ms, got "0s"`},
		{"redis://localhost?key=k&colour=red", "not a Redis URL go-redis accepts: redis: unexpected option: colour"},
		{"redis://localhost/x?key=k", "not a Redis URL go-redis accepts"},
		{"redis://:hunter2@localhost/x?key=k", "not a Redis URL go-redis accepts"},
		{"redis://:hunter2@local host?key=k", "does not parse as a URL"},
	}
	for _, tt := range tests {
		_, _, err := ParseURL(tt.url)
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseURL(%q) error = %v, want ErrInvalid containing %q", tt.url, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("ParseURL(%q) error %q shows the password", tt.url, err)
		}
	}
}

// FuzzParseURL: any input gives a config NewBudget accepts or an ErrInvalid
// error, never a panic, and no error shows the URL's password.
func FuzzParseURL(f *testing.F) {
	f.Add("redis://user:pw@localhost:6379/0?key=k&max_tokens=5&timeout=10ms")
	f.Add("rediss://:pw@h/1?key=a&flush=1s&pool_size=2")
	f.Add("redis://h?key={x}")
	f.Add("rediss://h?key=k&ca_file=/nonexistent&connect_timeout=2s")
	f.Add("redis://h?key=k&master_name=m&addr=h2:26379")
	f.Fuzz(func(t *testing.T, s string) {
		cfg, opts, err := ParseURL(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("ParseURL(%q) error %v does not match ErrInvalid", s, err)
			}
			if u, uerr := url.Parse(s); uerr == nil {
				// A password long enough not to be a word of the message, and
				// found nowhere else in the URL, must not be in the error.
				if pw, ok := u.User.Password(); ok && len(pw) >= 8 && strings.Count(s, pw) == 1 && strings.Contains(err.Error(), pw) {
					t.Fatalf("ParseURL(%q) error %q shows the password", s, err)
				}
			}
			return
		}
		if !validKey(cfg.Key) {
			t.Fatalf("ParseURL(%q) accepted key %q", s, cfg.Key)
		}
		for name, v := range map[string]float64{"MaxTokens": cfg.MaxTokens, "TokenRatio": cfg.TokenRatio} {
			if _, err := milliTokens(name, v, 1); err != nil {
				t.Fatalf("ParseURL(%q) accepted %s %v: %v", s, name, v, err)
			}
		}
		if cfg.Timeout < 0 || cfg.ConnectTimeout < 0 || cfg.FlushInterval < 0 || !opts.ContextTimeoutEnabled {
			t.Fatalf("ParseURL(%q) = %+v, ContextTimeoutEnabled %v", s, cfg, opts.ContextTimeoutEnabled)
		}
	})
}

// TestOpenBudget: two Budgets opened from the same URL share one bucket,
// and Close closes the client OpenBudget made (goleak checks its
// goroutines are gone).
func TestOpenBudget(t *testing.T) {
	s := startServer(t)
	u := "redis://" + s.Addr() + "/3?key=open&timeout=1s&max_tokens=20"
	a, err := OpenBudget(u, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenBudget(u, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for range 3 {
		a.Failure()
	}
	if got, err := b.SharedTokens(t.Context()); got != 17 || err != nil {
		t.Errorf("after 3 failures through one Budget, the other's SharedTokens = %v, %v; want 17", got, err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if _, err := a.SharedTokens(t.Context()); err == nil {
		t.Error("SharedTokens after Close succeeded, want the closed client's error")
	}
}
