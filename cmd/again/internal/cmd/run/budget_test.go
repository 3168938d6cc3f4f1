package run

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
)

func TestRunBudget(t *testing.T) {
	// Two runs of a command that always fails share one budget: the first
	// spends it (4 retries from full), the second makes none.
	b := &cmdtest.FakeBudget{}
	count := filepath.Join(t.TempDir(), "count")
	var last string
	for range 2 {
		args := append([]string{"run", "--initial", "0", "--retries", "9", "--budget", cmdtest.BudgetURL, "--"}, cmdtest.Helper(t, "count", count, "100")...)
		r := withBudget(t, b, nil, args...)
		if r.Code != 1 {
			t.Fatalf("again %q: exit %d, stderr %q; want 1", args, r.Code, r.Stderr)
		}
		lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
		last = lines[len(lines)-1]
	}
	data, _ := os.ReadFile(count)
	if n, _ := strconv.Atoi(string(data)); n != 6 {
		t.Errorf("two runs sharing a 10-token budget made %d attempts, want 6 (5, then 1)", n)
	}
	if want := "again run: attempt 1/10 failed (exit status 1); " + cmdutil.BudgetSpent; last != want {
		t.Errorf("the second run's last line is %q, want %q", last, want)
	}
	if b.URL != cmdtest.BudgetURL || b.Closed != 2 {
		t.Errorf("opened with %q and closed %d times; want %q and closed once per run (2)", b.URL, b.Closed, cmdtest.BudgetURL)
	}
}
