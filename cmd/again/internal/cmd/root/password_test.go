package root

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
	"github.com/again-go/again/fleet/fleettest"
)

// TestCLIEchoedPassword runs run --budget and fetch --breaker-store
// against a Redis-protocol server that does not know AUTH and echoes its
// arguments cut at 128 characters: no run of 8 characters of a
// 200-character password reaches stderr, and the commands run as with
// Redis down.
func TestCLIEchoedPassword(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		b.WriteByte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[(i*7+i/62)%62])
	}
	pw := b.String()
	url := "redis://:" + pw + "@" + fleettest.Echoing(t) + "/0?key=k&connect_timeout=2s&timeout=2s"
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer target.Close()
	tests := []struct {
		args []string
		code int
	}{
		{[]string{"run", "--initial", "1ms", "--retries", "1", "--budget", url, "--", "false"}, 1},
		{[]string{"fetch", "--breaker-store", url, target.URL}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.args[0], func(t *testing.T) {
			// The program, as a process: in-process, run's child output
			// and the budget's line would share a bytes.Buffer unlocked.
			cmd := cmdtest.AgainCommand(t, tt.args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != tt.code || !strings.Contains(stderr.String(), "Redis cannot be used") {
				t.Errorf("exit %d, want %d, and the line that says Redis cannot be used; stderr:\n%s", code, tt.code, stderr.String())
			}
			for i := 0; i+8 <= len(pw); i++ {
				if strings.Contains(stderr.String(), pw[i:i+8]) {
					t.Fatalf("stderr shows %q of the password:\n%s", pw[i:i+8], stderr.String())
				}
			}
		})
	}
}
