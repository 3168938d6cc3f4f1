package ready

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/ready/readytest"
)

// checkOverrun is how long after its context's end a check may return: the
// time to unwind a driver's call, not a driver's own timeout.
const checkOverrun = 250 * time.Millisecond

// TestCheckSilentPort checks that a check of every scheme against a port
// that accepts and never answers returns when its context ends: the
// --attempt-timeout, or what remains of the --deadline, wins over every
// driver's own timeouts (go-redis's 3 s read timeout, nats.go's 2 s
// connect, ...), and the timeout is reported as one.
func TestCheckSilentPort(t *testing.T) {
	addr := readytest.Silent(t, "tcp", "127.0.0.1:0")
	sock := readytest.Silent(t, "unix", filepath.Join(t.TempDir(), "s.sock"))
	_ = os.WriteFile(filepath.Join(t.TempDir(), "x"), nil, 0o600)
	const limit = 300 * time.Millisecond
	for _, target := range []string{
		"tcp://" + addr, // ready: it accepts
		"http://" + addr + "/healthz",
		"https://" + addr + "/healthz",
		"grpc://" + addr,
		"grpcs://" + addr,
		"postgres://app:pw@" + addr + "/app?sslmode=disable",
		"postgres://app:pw@" + addr + "/app",
		"mysql://app:pw@" + addr + "/app",
		"redis://" + addr,
		"rediss://" + addr,
		"amqp://app:pw@" + addr + "/",
		"amqps://app:pw@" + addr + "/",
		"kafka://" + addr,
		"nats://" + addr,
		"unix://" + sock, // ready: it accepts
		"file:///nonexistent/again-wait",
	} {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			tg, err := Parse(target, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			defer cancel()
			start := time.Now()
			err = tg.Check(ctx)
			took := time.Since(start)
			if took > limit+checkOverrun {
				t.Errorf("Check(%s) took %v with a %v context, want at most %v: %v", target, took, limit, limit+checkOverrun, err)
			}
			switch tg.Scheme() {
			case "tcp", "unix":
				if err != nil {
					t.Errorf("Check(%s) = %v, want ready (the port accepts)", target, err)
				}
				return
			case "file":
				if err == nil {
					t.Errorf("Check(%s) = nil, want not ready", target)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Permanent {
				t.Fatalf("Check(%s) = %v, want a transient *Error", target, err)
			}
			if !timedOut(err) {
				t.Errorf("Check(%s) = %q, want a timeout reported as one", target, err)
			}
		})
	}
}

// timedOut reports whether a check's error says that it timed out.
func timedOut(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "timed out")
}
