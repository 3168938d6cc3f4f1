package run

import (
	"bytes"
	"errors"
	"testing"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/spf13/pflag"
)

// TestRunRun runs run's Options without cobra: the command's status
// becomes again's, its retries print their lines unless Quiet, and a bad
// --attempt-timeout is a usage error before anything runs.
func TestRunRun(t *testing.T) {
	tests := []struct {
		name       string
		timeout    string
		quiet      bool
		wantCode   int
		wantStderr string
	}{
		{"status and lines", "", false, 3, "again run: attempt 1/2 failed (exit status 3); retrying in 0s\nagain run: attempt 2/2 failed (exit status 3); giving up\n"},
		{"quiet", "", true, 3, ""},
		{"bad timeout", "30", false, cmdutil.ExitUsage, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
			pf := cmdutil.AddPolicyFlags(fs)
			if err := fs.Parse([]string{"--initial", "0", "--jitter", "none", "--retries", "1"}); err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			env := &cmdutil.Env{Stderr: &stderr}
			err := runRun(t.Context(), &Options{Env: env, Policy: pf, Timeout: tt.timeout, Quiet: tt.quiet, Command: []string{"sh", "-c", "exit 3"}})
			var ee *cmdutil.ExitError
			if !errors.As(err, &ee) || ee.Code != tt.wantCode {
				t.Fatalf("error %v, want exit status %d", err, tt.wantCode)
			}
			if stderr.String() != tt.wantStderr {
				t.Errorf("stderr %q, want %q", stderr.String(), tt.wantStderr)
			}
		})
	}
}
