package fetch

import (
	"bytes"
	"errors"
	"testing"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/spf13/pflag"
)

// TestFetchRun runs fetch's Options without cobra: a status in --retry-on
// is retried and the final body written to stdout; with --retry-on none,
// the first answer is final, and a 503 exits 1 with its body written.
func TestFetchRun(t *testing.T) {
	srv := newFetchServer(t, map[string][]answer{
		"/retried":     {{status: 503, body: "busy"}, {body: "ok"}},
		"/not-retried": {{status: 503, body: "busy"}, {body: "ok"}},
	})
	for _, tt := range []struct {
		path, retryOn string
		wantCode      int
		wantStdout    string
		wantRequests  int
	}{
		{"/retried", "503", 0, "ok", 2},
		{"/not-retried", "none", cmdutil.ExitFailure, "busy", 1},
	} {
		t.Run(tt.path, func(t *testing.T) {
			fs := pflag.NewFlagSet("fetch", pflag.ContinueOnError)
			var stdout, stderr bytes.Buffer
			f := &Options{Env: &cmdutil.Env{Stdout: &stdout, Stderr: &stderr}, Policy: cmdutil.AddPolicyFlags(fs),
				Flags: fs, Args: []string{srv.URL + tt.path}, hedge: addHedgeFlags(fs),
				output: "-", retryOn: tt.retryOn, maxRetryWait: "1m", key: "auto"}
			if err := fs.Parse([]string{"--initial", "0", "--jitter", "none"}); err != nil {
				t.Fatal(err)
			}
			// A plain error is a failure: cmdutil.Execute marks it so.
			code := cmdutil.ExitOK
			var ee *cmdutil.ExitError
			switch err := fetchRun(t.Context(), f); {
			case errors.As(err, &ee):
				code = ee.Code
			case err != nil:
				code = cmdutil.ExitFailure
			}
			if code != tt.wantCode || stdout.String() != tt.wantStdout {
				t.Errorf("status %d, stdout %q, stderr %q; want %d, %q", code, stdout.String(), stderr.String(), tt.wantCode, tt.wantStdout)
			}
			if n := len(srv.requests(tt.path)); n != tt.wantRequests {
				t.Errorf("%d requests, want %d", n, tt.wantRequests)
			}
		})
	}
}
