package ready

import (
	"context"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/ready/readytest"
	"github.com/redis/go-redis/v9"
)

// TestRealStartingUp shows the two answers of a server that accepts but
// is not ready yet, from real servers: Redis loading its dataset (an RDB
// of DEBUG POPULATE's keys, loaded with key-load-delay so that loading
// lasts seconds whatever the machine) and PostgreSQL refusing connections
// with SQLSTATE 57P03 (a standby in recovery until promoted). Each is not
// ready, not permanent, with a last error that says why; then ready once
// the server is.
func TestRealStartingUp(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real servers; skipped under -short")
	}
	t.Run("redis loading", func(t *testing.T) {
		t.Parallel()
		data := t.TempDir()
		port, err := readytest.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		src, err := readytest.StartRedisOn(port, "--dir", data, "--enable-debug-command", "yes")
		if err != nil {
			t.Fatal(err)
		}
		c := redis.NewClient(&redis.Options{Addr: src.Addr, Password: readytest.Password})
		ctx := context.Background()
		err = c.Do(ctx, "DEBUG", "POPULATE", 20000).Err()
		if err == nil {
			err = c.Save(ctx).Err()
		}
		c.Close()
		src.Stop()
		if err != nil {
			t.Fatal(err)
		}
		if port, err = readytest.FreePort(); err != nil {
			t.Fatal(err)
		}
		// 20,000 keys at 500 µs each: ten seconds of loading at least,
		// answering clients every KiB read. The first wait's deadline is
		// half of that: long enough for a loaded machine (CI's race
		// detector) to get a first answer within one attempt, short
		// enough to end while loading still goes on.
		s, err := readytest.StartRedisOn(port, "--dir", data, "--key-load-delay", "500",
			"--loading-process-events-interval-bytes", "1024")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Stop)
		url := "redis://:" + readytest.Password + "@" + s.Addr + "/0"
		checkResult(t, waitFor(t, url, nil, 5*time.Second), "not ready", "loading its dataset")
		checkResult(t, waitFor(t, url, nil, 2*time.Minute), "ready", "")
	})
	t.Run("postgres not accepting connections", func(t *testing.T) {
		t.Parallel()
		s, err := readytest.StartPostgresStandby()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Stop)
		url := "postgres://postgres:" + readytest.Password + "@" + s.Addr + "/postgres?sslmode=disable"
		checkResult(t, waitFor(t, url, nil, 2*time.Second), "not ready", "the database system is starting up")
		promoted := make(chan time.Duration, 1)
		begin := time.Now()
		timer := time.AfterFunc(time.Second, func() {
			if err := s.Promote(); err != nil {
				t.Error(err)
			}
			promoted <- time.Since(begin)
		})
		defer timer.Stop()
		r := waitFor(t, url, nil, time.Minute)
		at := <-promoted
		checkResult(t, r, "ready", "")
		if r.Elapsed > at+DefaultPolicy().Max+3*time.Second {
			t.Errorf("ready %v after the wait began, promoted at %v: want within %v of it", r.Elapsed, at, DefaultPolicy().Max)
		}
	})
}
