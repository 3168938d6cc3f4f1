package fleet

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestParseURL(t *testing.T) {
	cfg, opts, err := ParseURL("redis://user:s3cret@db.internal:6380/2?key=payments&max_tokens=20&token_ratio=0.5&timeout=20ms&flush=1s&pool_size=7")
	if err != nil {
		t.Fatal(err)
	}
	want := BudgetConfig{Key: "payments", MaxTokens: 20, TokenRatio: 0.5, Timeout: 20 * time.Millisecond, FlushInterval: time.Second}
	if cfg != want {
		t.Errorf("ParseURL config = %+v, want %+v", cfg, want)
	}
	if opts.Addr != "db.internal:6380" || opts.DB != 2 || opts.Username != "user" || opts.Password != "s3cret" || opts.PoolSize != 7 || !opts.ContextTimeoutEnabled {
		t.Errorf("ParseURL options: Addr %q DB %d Username %q Password %q PoolSize %d ContextTimeoutEnabled %v; want db.internal:6380, 2, user, s3cret, 7, true",
			opts.Addr, opts.DB, opts.Username, opts.Password, opts.PoolSize, opts.ContextTimeoutEnabled)
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
		{"redis://localhost?key=k&colour=red", "not a Redis URL go-redis accepts: redis: unexpected option: colour"},
		{"redis://localhost/x?key=k", "not a Redis URL go-redis accepts"},
		{"redis://:hunter2@localhost/x?key=k", "not a Redis URL go-redis accepts"},
		{"redis://:hunter2@local host?key=k", "does not parse as a URL"},
	}
	for _, tt := range tests {
		_, _, err := ParseURL(tt.url)
		if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseURL(%q) error = %v, want ErrConfig containing %q", tt.url, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("ParseURL(%q) error %q shows the password", tt.url, err)
		}
	}
}

// FuzzParseURL: any input gives a config NewBudget accepts or an ErrConfig
// error, never a panic, and no error shows the URL's password.
func FuzzParseURL(f *testing.F) {
	f.Add("redis://user:pw@localhost:6379/0?key=k&max_tokens=5&timeout=10ms")
	f.Add("rediss://:pw@h/1?key=a&flush=1s&pool_size=2")
	f.Add("redis://h?key={x}")
	f.Fuzz(func(t *testing.T, s string) {
		cfg, opts, err := ParseURL(s)
		if err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("ParseURL(%q) error %v does not match ErrConfig", s, err)
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
		if cfg.Timeout < 0 || cfg.FlushInterval < 0 || !opts.ContextTimeoutEnabled {
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
