package fetch

import (
	"strings"
	"testing"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
	"github.com/again-go/again/retry"
)

func TestFetchBudget(t *testing.T) {
	srv := newFetchServer(t, map[string][]answer{"/down": {{status: 503, body: "busy"}}})
	b := &cmdtest.FakeBudget{}
	args := append(append([]string{}, fast...), "--retries", "9", "--budget", cmdtest.BudgetURL, srv.URL+"/down")
	r := withBudget(t, b, nil, args...)
	if r.Code != 1 || r.Stdout != "busy" {
		t.Errorf("again %q: exit %d, stdout %q; want 1 and the last body", args, r.Code, r.Stdout)
	}
	if n := len(srv.requests("/down")); n != 5 {
		t.Errorf("a 10-token budget let fetch send %d requests, want 5 (4 retries)", n)
	}
	if !strings.Contains(r.Stderr, "again fetch: attempt 5/10 failed (503 Service Unavailable); "+cmdutil.BudgetSpent+"\n") {
		t.Errorf("stderr %q does not say the budget stopped the retries", r.Stderr)
	}
	if b.Failures != 5 || b.Closed != 1 {
		t.Errorf("the budget saw %d failures and was closed %d times; want 5 and 1", b.Failures, b.Closed)
	}
}

// TestFetchClassCost: a retry of a class with a cost (--on-overload
// cost=5) takes that many tokens from the --budget: a 20-token budget
// allows one retry of 503s, where it allows nine at a cost of one.
func TestFetchClassCost(t *testing.T) {
	srv := newFetchServer(t, map[string][]answer{"/down": {{status: 503, body: "busy"}}})
	b := &cmdtest.FakeBudget{TokenBucket: retry.TokenBucket{MaxTokens: 20}}
	args := append(append([]string{}, fast...), "--retries", "9", "--on-overload", "initial=0s,cost=5", "--budget", cmdtest.BudgetURL, srv.URL+"/down")
	r := withBudget(t, b, nil, args...)
	if r.Code != 1 || !strings.Contains(r.Stderr, cmdutil.BudgetSpent) {
		t.Errorf("again %q: exit %d, stderr %q; want 1 and the budget spent", args, r.Code, r.Stderr)
	}
	if n := len(srv.requests("/down")); n != 2 {
		t.Errorf("a 20-token budget let fetch send %d requests at a cost of 5, want 2 (1 retry: 15 tokens left, then 10)", n)
	}
	if b.Failures != 2 || b.Spent != 10 {
		t.Errorf("the budget saw %d failures costing %v tokens; want 2 costing 10", b.Failures, b.Spent)
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
		if r.Code != cmdutil.ExitUsage || !strings.HasPrefix(r.Stderr, tt.want) || strings.Contains(r.Stderr, "hunter2") {
			t.Errorf("again fetch --breaker-store %q: exit %d, stderr %q; want %d and %q..., without the password", tt.url, r.Code, r.Stderr, cmdutil.ExitUsage, tt.want)
		}
	}
}
