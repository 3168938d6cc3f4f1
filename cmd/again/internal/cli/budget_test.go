package cli

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/again-go/again/retry"
)

// fakeBudget is what the fake opener opens: a local token bucket (10
// tokens: 4 retries from full) that records how it was opened and whether
// it was closed.
type fakeBudget struct {
	retry.TokenBucket
	url      string
	log      io.Writer
	failures int
	closed   int
}

func (b *fakeBudget) Failure() bool {
	b.failures++
	return b.TokenBucket.Failure()
}

func (b *fakeBudget) Close() error {
	b.closed++
	return errors.New("fake: flushing failed") // which must not fail the command
}

// withBudget runs the command line with an Env whose opener opens b, or
// fails with openErr.
func withBudget(t *testing.T, b *fakeBudget, openErr error, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut,
		OpenBudget: func(url string, log io.Writer) (retry.Budget, io.Closer, error) {
			if openErr != nil {
				return nil, nil, openErr
			}
			b.url, b.log = url, log
			return b, b, nil
		}}
	code := RunEnv(t.Context(), args, env)
	if b != nil && b.log != nil && b.log != env.Stderr {
		t.Errorf("the budget's log is %v, want again's stderr", b.log)
	}
	return result{code, out.String(), errOut.String()}
}

const budgetURL = "redis://127.0.0.1:6379/0?key=test"

func TestRunBudget(t *testing.T) {
	// Two runs of a command that always fails share one budget: the first
	// spends it (4 retries from full), the second makes none.
	b := &fakeBudget{}
	count := filepath.Join(t.TempDir(), "count")
	var last string
	for range 2 {
		args := append([]string{"run", "--initial", "0", "--retries", "9", "--budget", budgetURL, "--"}, helper(t, "count", count, "100")...)
		r := withBudget(t, b, nil, args...)
		if r.code != 1 {
			t.Fatalf("again %q: exit %d, stderr %q; want 1", args, r.code, r.stderr)
		}
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		last = lines[len(lines)-1]
	}
	data, _ := os.ReadFile(count)
	if n, _ := strconv.Atoi(string(data)); n != 6 {
		t.Errorf("two runs sharing a 10-token budget made %d attempts, want 6 (5, then 1)", n)
	}
	if want := "again: attempt 1/10 failed (exit status 1); " + budgetSpent; last != want {
		t.Errorf("the second run's last line is %q, want %q", last, want)
	}
	if b.url != budgetURL || b.closed != 2 {
		t.Errorf("opened with %q and closed %d times; want %q and closed once per run (2)", b.url, b.closed, budgetURL)
	}
}

func TestFetchBudget(t *testing.T) {
	srv := newFetchServer(t, map[string][]answer{"/down": {{status: 503, body: "busy"}}})
	b := &fakeBudget{}
	args := append(append([]string{}, fast...), "--retries", "9", "--budget", budgetURL, srv.URL+"/down")
	r := withBudget(t, b, nil, args...)
	if r.code != 1 || r.stdout != "busy" {
		t.Errorf("again %q: exit %d, stdout %q; want 1 and the last body", args, r.code, r.stdout)
	}
	if n := len(srv.requests("/down")); n != 5 {
		t.Errorf("a 10-token budget let fetch send %d requests, want 5 (4 retries)", n)
	}
	if !strings.Contains(r.stderr, "again: attempt 5/10 failed (503 Service Unavailable); "+budgetSpent+"\n") {
		t.Errorf("stderr %q does not say the budget stopped the retries", r.stderr)
	}
	if b.failures != 5 || b.closed != 1 {
		t.Errorf("the budget saw %d failures and was closed %d times; want 5 and 1", b.failures, b.closed)
	}
}

func TestBudgetUsageErrors(t *testing.T) {
	// The installed again opens a fleet budget: a URL without a key is
	// refused before anything runs, naming what is missing, and without
	// the URL's password.
	const noKey = "redis://:hunter2@127.0.0.1:1/0"
	for _, sub := range [][]string{{"run", "--budget", noKey, "--", "true"}, {"fetch", "--budget", noKey, "http://127.0.0.1:1/"}} {
		r := run(t, sub...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, "again "+sub[0]+": --budget: ") || !strings.Contains(r.stderr, "key") || strings.Contains(r.stderr, "hunter2") {
			t.Errorf("again %q: exit %d, stderr %q; want a usage error about the missing key, without the password", sub, r.code, r.stderr)
		}
	}
	wantUsageError(t, run(t, "run", "--budget", "", "--", "true"),
		"again run: --budget must not be empty; leave it out for its default (see 'again run --help')")

	// A URL the opener rejects is a usage error naming the flag, with the
	// opener's words and never the URL, whose password would be in it.
	const secret = "redis://:hunter2@127.0.0.1:6379/0"
	bad := errors.New("fleet: a budget URL must name the budget with ?key=NAME")
	r := withBudget(t, nil, bad, "run", "--budget", secret, "--", "true")
	wantUsageError(t, r, "again run: --budget: a budget URL must name the budget with ?key=NAME") // one prefix: fleet's is dropped
	r = withBudget(t, nil, bad, "fetch", "--budget", secret, "http://127.0.0.1:1/")
	wantUsageError(t, r, "again fetch: --budget: a budget URL must name the budget with ?key=NAME")
}

// TestBudgetHelp: run's and fetch's help give the URL's options and say
// what happens when Redis cannot be used; fetch's, its --breaker-store.
func TestBudgetHelp(t *testing.T) {
	common := []string{"--budget url", "redis://HOST:PORT/DB?key=NAME", "rediss://", "ca_file=", "user:password@",
		"timeout=50ms", "connect_timeout=1s", "master_name=", "cannot be used", "wrong password", "out of memory",
		"one retry until Redis is back", "can be used again"}
	for _, tt := range []struct {
		sub  string
		want []string
	}{
		{"run", common},
		{"fetch", append(common, "--breaker-store url", "--breaker-store redis://HOST:PORT/DB?key=NAME", "one probe for the whole fleet")},
	} {
		r := run(t, tt.sub, "--help")
		for _, want := range tt.want {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("again %s --help lacks %q", tt.sub, want)
			}
		}
	}
}

// TestBreakerStoreUsageErrors: a --breaker-store URL that is not usable
// is a usage error naming the flag and the fault, never the password.
func TestBreakerStoreUsageErrors(t *testing.T) {
	for _, tt := range []struct{ url, want string }{
		{"redis://:hunter2@127.0.0.1:1/0", "again fetch: --breaker-store: a breaker store URL must name the breaker store with ?key=NAME"},
		{"redis://:hunter2@127.0.0.1:1/0?key=k&max_tokens=3", "again fetch: --breaker-store: the breaker store URL's max_tokens is a budget's parameter"},
	} {
		r := run(t, "fetch", "--breaker-store", tt.url, "http://127.0.0.1:1/")
		if r.code != ExitUsage || !strings.HasPrefix(r.stderr, tt.want) || strings.Contains(r.stderr, "hunter2") {
			t.Errorf("again fetch --breaker-store %q: exit %d, stderr %q; want %d and %q..., without the password", tt.url, r.code, r.stderr, ExitUsage, tt.want)
		}
	}
}

// TestFleetLines: the fleet's log lines are again's own lines, with every
// attribute of the record: "again: " and the message, then the budget's
// or breaker's name and the error's text, and no time or level.
func TestFleetLines(t *testing.T) {
	var b bytes.Buffer
	log := fleetLogger(&b)
	log.With(slog.String("budget", "db-wait")).Warn("fleet: Redis cannot be used (connection refused); retry decisions use a local budget of at most one retry until it can",
		slog.String("error", "dial tcp 127.0.0.1:6379: connect: connection refused"))
	log.With(slog.String("budget", "db-wait")).Info("fleet: Redis can be used again; retry decisions use the shared budget")
	log.With(slog.String("breaker", "k/api.example.com")).WithGroup("g").Warn("fleet: x\nsecond line \x1b[2J", slog.Int("n", 3), slog.Any("error", errors.New("boom")))
	log.Debug("fleet: not shown")
	want := `again: fleet: Redis cannot be used (connection refused); retry decisions use a local budget of at most one retry until it can (budget db-wait; dial tcp 127.0.0.1:6379: connect: connection refused)
again: fleet: Redis can be used again; retry decisions use the shared budget (budget db-wait)
again: fleet: x; second line \x1b[2J (breaker k/api.example.com; g.n 3; g.error boom)
`
	if b.String() != want {
		t.Errorf("lines:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestCLIBudgetRedisRefused: with a --budget whose Redis refuses
// connections, again run retries on a local budget and says so once, in
// one of its own lines that names the budget and the cause, without the
// URL's password. again runs as a process of its own: its stderr is then a
// file, written to by the budget's goroutine and the command's copy alike.
func TestCLIBudgetRedisRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connections are refused
	cmd := againCommand(t, "run", "--initial", "0", "--retries", "1", "--budget", "redis://:hunter2@"+addr+"/0?key=refused", "--", "false")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Run()
	want := "again: fleet: Redis cannot be used (connection refused); retry decisions use a local budget of at most one retry until it can (budget refused; dial tcp " + addr + ": connect: connection refused)\n"
	if code := cmd.ProcessState.ExitCode(); code != 1 || strings.Count(stderr.String(), want) != 1 || strings.Contains(stderr.String(), "hunter2") || strings.Contains(stderr.String(), "level=") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and once, without the password:\n%s", code, stderr.String(), want)
	}
}
