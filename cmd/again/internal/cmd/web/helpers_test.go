package web

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
)

// againRun runs the again command line args, which starts with "web", in-process
// with the given streams, and returns its exit status.
func againRun(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return againRunEnv(ctx, args, cmdutil.Env{Stdin: stdin, Stdout: stdout, Stderr: stderr})
}

// againRunEnv is againRun with an Env: the streams and the pieces tests
// replace. The command line runs as the again program would run it, under
// a root command named again.
func againRunEnv(ctx context.Context, args []string, env cmdutil.Env) int {
	return cmdtest.Execute(ctx, env, args, NewCmd)
}

// result is what one in-process run of the command line produced.
type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := againRun(t.Context(), args, strings.NewReader(""), &out, &errOut)
	return result{code, out.String(), errOut.String()}
}

// wantUsageError checks the usage-error contract: exit 2, nothing on
// stdout, exactly the one line want on stderr.
func wantUsageError(t *testing.T, r result, want string) {
	t.Helper()
	cmdtest.WantUsageError(t, r.code, r.stdout, r.stderr, want)
}
