package run

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
	"github.com/again-go/again/fleet"
	"github.com/again-go/again/fleet/fleettest"
	"github.com/again-go/again/retry"
)

// TestRunClasses runs a real command whose attempts exit with a given
// sequence of statuses: an --overload-exit status waits on --on-overload's
// schedule, another failure on --on-transient's, each class's waits
// growing with its own failures, and each class's retries capped within
// the class. The waits are the ones the lines announce, which are the ones
// run then waits (jitter none).
func TestRunClasses(t *testing.T) {
	defer goleak.VerifyNone(t)
	classes := []string{"--on-overload", "initial=4ms,jitter=none", "--on-transient", "initial=1ms,jitter=none"}
	tests := []struct {
		name     string
		flags    []string
		statuses string
		code     int
		stderr   string
	}{
		{"75 is an overload by default", append([]string{"--retries", "5"}, classes...), "75,1,75,1,0", 0, cmdtest.Lines(
			"again run: attempt 1/6 failed (exit status 75); retrying in 4ms",
			"again run: attempt 2/6 failed (exit status 1); retrying in 1ms",
			"again run: attempt 3/6 failed (exit status 75); retrying in 8ms",
			"again run: attempt 4/6 failed (exit status 1); retrying in 2ms")},
		{"--overload-exit names the overloads", append([]string{"--overload-exit", "3, 4", "--retries", "5"}, classes...), "3,75,4,0", 0, cmdtest.Lines(
			"again run: attempt 1/6 failed (exit status 3); retrying in 4ms",
			"again run: attempt 2/6 failed (exit status 75); retrying in 1ms",
			"again run: attempt 3/6 failed (exit status 4); retrying in 8ms")},
		{"a class's retries count within the class", []string{"--retries", "9", "--on-overload", "initial=1ms,jitter=none,retries=1", "--on-transient", "initial=1ms,multiplier=1,jitter=none"}, "1,1,75,1,75,0", 75, cmdtest.Lines(
			"again run: attempt 1/10 failed (exit status 1); retrying in 1ms",
			"again run: attempt 2/10 failed (exit status 1); retrying in 1ms",
			"again run: attempt 3/10 failed (exit status 75); retrying in 1ms",
			"again run: attempt 4/10 failed (exit status 1); retrying in 1ms",
			"again run: attempt 5/10 failed (exit status 75); giving up")},
		{"--on-transient alone: overloads on the policy flags", []string{"--initial", "3ms", "--jitter", "none", "--on-transient", "initial=1ms,jitter=none"}, "75,1,0", 0, cmdtest.Lines(
			"again run: attempt 1/4 failed (exit status 75); retrying in 3ms",
			"again run: attempt 2/4 failed (exit status 1); retrying in 1ms")},
		{"--deadline without --retries: a class without retries retries until it too", []string{"--deadline", "1m", "--on-overload", "initial=1ms,multiplier=1,jitter=none"}, "75,75,75,75,75,0", 0, cmdtest.Lines(
			"again run: attempt 1 failed (exit status 75); retrying in 1ms",
			"again run: attempt 2 failed (exit status 75); retrying in 1ms",
			"again run: attempt 3 failed (exit status 75); retrying in 1ms",
			"again run: attempt 4 failed (exit status 75); retrying in 1ms",
			"again run: attempt 5 failed (exit status 75); retrying in 1ms")},
		{"a status not retried is not retried, overload or not", append([]string{"--retry-on-exit", "1,75"}, classes...), "75,7", 7, cmdtest.Lines(
			"again run: attempt 1/4 failed (exit status 75); retrying in 4ms",
			"again run: attempt 2/4 failed (exit status 7); not retrying: status not in --retry-on-exit")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "count")
			args := append(append(append([]string{"run"}, tt.flags...), "--"), cmdtest.Helper(t, "statuses", file, tt.statuses)...)
			code, _, stderr := runAgain(t.Context(), nil, args...)
			if code != tt.code || stderr != tt.stderr {
				t.Errorf("again run %q on statuses %s: status %d, stderr\n%s\nwant %d,\n%s", tt.flags, tt.statuses, code, stderr, tt.code, tt.stderr)
			}
		})
	}
}

// TestRunClassUsage: a class flag or --overload-exit that cannot mean what
// it says is a usage error naming the flag and what is accepted.
func TestRunClassUsage(t *testing.T) {
	tests := []struct {
		flags []string
		want  string
	}{
		{[]string{"--overload-exit", "75"}, "again run: --overload-exit says which exit statuses are retried on --on-overload's schedule and which on --on-transient's: give one of them with it\n"},
		{[]string{"--overload-exit", "0", "--on-overload", "initial=1s"}, "again run: --overload-exit \"0\": want a comma-separated list of exit statuses from 1 to 255\n"},
		{[]string{"--overload-exit", "75,3", "--retry-on-exit", "75", "--on-overload", "initial=1s"}, "again run: --overload-exit 3 is not retried (not in --retry-on-exit): list it in --retry-on-exit too, or leave it out of --overload-exit\n"},
		{[]string{"--overload-exit", "141", "--on-transient", "initial=1s"}, "again run: --overload-exit 141 is not retried (nothing reads its output any more): list it in --retry-on-exit too, or leave it out of --overload-exit\n"},
		{[]string{"--retry-on-exit", "1", "--on-overload", "initial=1s"}, "again run: --on-overload would never apply: the overload exit status 75 (EX_TEMPFAIL, --overload-exit's default) is not retried (not in --retry-on-exit); list it in --retry-on-exit, or name the overload statuses with --overload-exit\n"},
		{[]string{"--on-overload", "initial=1s,cost=0"}, "again run: --on-overload cost \"0\": want a number from 0.001 up (the budget counts thousandths of a token)\n"},
		{[]string{"--on-transient", "speed=1"}, "again run: --on-transient \"speed=1\": want key=value pairs with keys initial, multiplier, max, retries, jitter, cost\n"},
	}
	for _, tt := range tests {
		args := append(append([]string{"run"}, tt.flags...), "--", "true")
		code, _, stderr := runAgain(t.Context(), nil, args...)
		if code != cmdutil.ExitUsage || stderr != tt.want {
			t.Errorf("again %q: status %d, stderr %q; want %d, %q", args, code, stderr, cmdutil.ExitUsage, tt.want)
		}
	}
	// --retry-on-exit without 75 is fine with --on-transient alone, and
	// with --overload-exit naming a status it retries.
	for _, flags := range [][]string{
		{"--retry-on-exit", "1", "--on-transient", "initial=0s"},
		{"--retry-on-exit", "1", "--overload-exit", "1", "--on-overload", "initial=0s"},
	} {
		args := append(append(append([]string{"run"}, flags...), "--"), cmdtest.Helper(t, "exit", "0")...)
		if code, _, stderr := runAgain(t.Context(), nil, args...); code != 0 {
			t.Errorf("again %q: status %d, stderr %q; want 0", args, code, stderr)
		}
	}
}

// TestRunClassCost: each retry of a class takes the class's cost from the
// --budget: a 20-token budget allows one retry of overloads at a cost of
// 5 (15 tokens left, then 10: refused), and three of other failures at a
// cost of 3 (17, 14, 11, then 8).
func TestRunClassCost(t *testing.T) {
	for _, tt := range []struct {
		status        string
		attempts      int
		spent         float64
		wantLastLines string
	}{{"75", 2, 10, "exit status 75"}, {"1", 4, 12, "exit status 1"}} {
		b := &cmdtest.FakeBudget{TokenBucket: retry.TokenBucket{MaxTokens: 20}}
		file := filepath.Join(t.TempDir(), "count")
		args := append([]string{"run", "--retries", "9", "--on-overload", "initial=0s,cost=5,retries=9", "--on-transient", "initial=0s,cost=3,retries=9",
			"--budget", cmdtest.BudgetURL, "--"}, cmdtest.Helper(t, "statuses", file, tt.status)...)
		r := withBudget(t, b, nil, args...)
		if !strings.HasSuffix(r.Stderr, "failed ("+tt.wantLastLines+"); "+cmdutil.BudgetSpent+"\n") {
			t.Errorf("status %s: stderr %q, want the budget to stop the retries", tt.status, r.Stderr)
		}
		if n, _ := os.ReadFile(file); string(n) != string(rune('0'+tt.attempts)) || b.Failures != tt.attempts || b.Spent != tt.spent {
			t.Errorf("status %s: %s attempts, the budget charged %d failures costing %v; want %d attempts and failures costing %v",
				tt.status, n, b.Failures, b.Spent, tt.attempts, tt.spent)
		}
	}
}

// TestCLIRunClassCost runs `again run` on a real fleet budget: a retry of
// an overload of cost 5 takes 5 tokens from the shared bucket, which
// another process of the fleet then sees.
func TestCLIRunClassCost(t *testing.T) {
	s := fleettest.Start(t)
	url := "redis://" + s.Addr() + "/0?key=cost&max_tokens=20&timeout=2s"
	file := filepath.Join(t.TempDir(), "count")
	cmd := cmdtest.AgainCommand(t, "run", "--retries", "9", "--on-overload", "initial=1ms,cost=5", "--budget", url,
		"--", "sh", "-c", `echo attempt >> "$0"; exit 75`, file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); cmd.ProcessState.ExitCode() != 75 {
		t.Fatalf("again run: %v (exit %d), want exit 75; stderr:\n%s", err, cmd.ProcessState.ExitCode(), stderr.String())
	}
	if strings.Contains(stderr.String(), "Redis cannot be used") {
		t.Fatalf("the budget fell back to a local one; stderr:\n%s", stderr.String())
	}
	data, _ := os.ReadFile(file)
	if n := strings.Count(string(data), "attempt\n"); n != 2 {
		t.Errorf("%d attempts on a 20-token budget at a cost of 5, want 2 (15 tokens left, then 10)", n)
	}
	other, err := fleet.OpenBudget(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if got, err := other.SharedTokens(context.Background()); err != nil || got != 10 {
		t.Errorf("another process of the fleet sees SharedTokens = %v (%v), want 10", got, err)
	}
}
