package root

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
)

func TestBudgetUsageErrors(t *testing.T) {
	// The installed again opens a fleet budget: a URL without a key is
	// refused before anything runs, naming what is missing, and without
	// the URL's password.
	const noKey = "redis://:hunter2@127.0.0.1:1/0"
	for _, sub := range [][]string{{"run", "--budget", noKey, "--", "true"}, {"fetch", "--budget", noKey, "http://127.0.0.1:1/"}} {
		r := run(t, sub...)
		if r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, "again "+sub[0]+": --budget: ") || !strings.Contains(r.Stderr, "key") || strings.Contains(r.Stderr, "hunter2") {
			t.Errorf("again %q: exit %d, stderr %q; want a usage error about the missing key, without the password", sub, r.Code, r.Stderr)
		}
	}
	wantUsageError(t, run(t, "run", "--budget", "", "--", "true"),
		"again run: --budget \"\": want a value; leave the flag out for its default (see 'again run --help')")

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
		r.Stdout += cmdtest.Guide(t) // the help, or the guide it points to
		for _, want := range tt.want {
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("again %s --help lacks %q", tt.sub, want)
			}
		}
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
	cmd := cmdtest.AgainCommand(t, "run", "--initial", "0", "--retries", "1", "--budget", "redis://:hunter2@"+addr+"/0?key=refused", "--", "false")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Run()
	want := "again run: fleet: Redis cannot be used (connection refused); retry decisions use a local budget of at most one retry until it can (budget refused; dial tcp " + addr + ": connect: connection refused)\n"
	if code := cmd.ProcessState.ExitCode(); code != 1 || strings.Count(stderr.String(), want) != 1 || strings.Contains(stderr.String(), "hunter2") || strings.Contains(stderr.String(), "level=") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and once, without the password:\n%s", code, stderr.String(), want)
	}
}

// TestCLIBudgetUsage checks again's usage errors for --budget as a process
// of its own: a bad URL is named without its password.
func TestCLIBudgetUsage(t *testing.T) {
	for _, sub := range [][]string{{"run", "--", "true"}, {"fetch", "http://127.0.0.1:1/"}} {
		args := []string{sub[0], "--budget", "redis://:hunter2@127.0.0.1:1/0"}
		cmd := cmdtest.AgainCommand(t, append(args, sub[1:]...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		want := "again " + sub[0] + ": --budget: a budget URL must name the budget with ?key=NAME, as in redis://HOST:PORT/DB?key=NAME\n"
		if err == nil || cmd.ProcessState.ExitCode() != 2 || stderr.String() != want {
			t.Errorf("again %q: %v, stderr %q; want exit 2 and %q", args, err, stderr.String(), want)
		}
	}
}
