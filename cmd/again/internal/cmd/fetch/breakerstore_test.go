package fetch

import (
	"bytes"
	"strings"
	"testing"

	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
	"github.com/again-go/again/fleet/fleettest"
)

// TestCLIFetchBreakerStore: two again fetch processes share the host's
// breaker through Redis. The first trips it after 3 failed attempts in a
// row; the second, started afterwards, sends nothing to the host while
// the breaker is open, and says why.
func TestCLIFetchBreakerStore(t *testing.T) {
	s := fleettest.Start(t)
	srv := newFetchServer(t, map[string][]answer{"/down": {{status: 503, body: "busy"}}})
	fetch := func() (int, string) {
		t.Helper()
		args := append(append([]string{}, fast...), "--retries", "5", "--max-retry-after", "100ms",
			"--breaker-store", s.URL("key=cli-breaker&timeout=2s"), srv.URL+"/down")
		cmd := cmdtest.AgainCommand(t, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.Run()
		return cmd.ProcessState.ExitCode(), stderr.String()
	}
	code, first := fetch()
	if n := len(srv.requests("/down")); code != 1 || n != 3 {
		t.Fatalf("the first fetch: exit %d after %d requests, want 1 after 3 (the breaker opens then); stderr:\n%s", code, n, first)
	}
	code, second := fetch()
	if n := len(srv.requests("/down")); code != 1 || n != 3 {
		t.Errorf("the second fetch: exit %d, requests in all %d; want exit 1 and none sent (3 in all); stderr:\n%s", code, n, second)
	}
	if !strings.Contains(second, "again fetch: not sent: the --breaker-store breaker of "+strings.TrimPrefix(srv.URL, "http://")+" is open after repeated failures; next probe in ") {
		t.Errorf("the second fetch's stderr does not say the breaker is open:\n%s", second)
	}
}
