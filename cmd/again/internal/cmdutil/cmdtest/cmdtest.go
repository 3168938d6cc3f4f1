// Package cmdtest runs again's commands in-process for their tests.
//
// It runs a command under a root command named "again", as the program
// does, and runs the test binary itself as the again program or as a child
// command for `again run` in a process of its own.
//
// A command's tests run its command line, starting with the command's name,
// with a Runner of its Commands:
//
//	var run = cmdtest.Runner(cmdtest.Commands(NewCmd))
//	...
//	r := run(t, "calc", "--retries", "3") // r.Code, r.Stdout, r.Stderr
//
// and a package whose tests start processes calls Main from an init
// function. Only tests import it.
package cmdtest

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/spf13/cobra"
)

// Root returns a root command named "again" with the commands subs, ready
// for cmdutil.Execute as root's is: cobra prints no error or usage of its
// own, and flag errors are usage errors (cmdutil.FlagError). It has none of
// root's help text, help command or completion.
func Root(subs ...*cobra.Command) *cobra.Command {
	root := &cobra.Command{Use: "again", SilenceErrors: true, SilenceUsage: true}
	root.SetFlagErrorFunc(cmdutil.FlagError)
	root.AddCommand(subs...)
	return root
}

// RunEnv runs a command line (args without the program name) with env
// and returns its exit status, as root's RunEnv does.
type RunEnv = func(ctx context.Context, args []string, env cmdutil.Env) int

// Commands returns the RunEnv of a Root of the commands that newCmds
// return for each command line's Env: the again program with those
// commands alone.
func Commands(newCmds ...func(*cmdutil.Env) *cobra.Command) RunEnv {
	return func(ctx context.Context, args []string, env cmdutil.Env) int {
		return Execute(ctx, env, args, newCmds...)
	}
}

// Execute runs the command line args, which starts with a command's name,
// under a Root of the commands that newCmds return for env, and returns
// the exit status, as the again program would with those commands alone.
func Execute(ctx context.Context, env cmdutil.Env, args []string, newCmds ...func(*cmdutil.Env) *cobra.Command) int {
	subs := make([]*cobra.Command, 0, len(newCmds))
	for _, newCmd := range newCmds {
		subs = append(subs, newCmd(&env))
	}
	return cmdutil.Execute(ctx, Root(subs...), args, &env)
}

// Streams returns runEnv with the streams as arguments, as root's Run is
// RunEnv's.
func Streams(runEnv RunEnv) func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		return runEnv(ctx, args, cmdutil.Env{Stdin: stdin, Stdout: stdout, Stderr: stderr})
	}
}

// Result is what one in-process run of a command line produced.
type Result struct {
	Code           int // the exit status
	Stdout, Stderr string
}

// Runner returns what runs a command line with runEnv in-process, with an
// empty stdin, within the test's context, and returns what it produced.
func Runner(runEnv RunEnv) func(t *testing.T, args ...string) Result {
	return func(t *testing.T, args ...string) Result {
		t.Helper()
		var out, errOut bytes.Buffer
		code := runEnv(t.Context(), args, cmdutil.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut})
		return Result{code, out.String(), errOut.String()}
	}
}

// WantUsageError checks the usage-error contract on r: exit 2, nothing on
// stdout, exactly the one line want on stderr.
func WantUsageError(t *testing.T, r Result, want string) {
	t.Helper()
	if r.Code != cmdutil.ExitUsage || r.Stdout != "" || r.Stderr != want+"\n" {
		t.Errorf("exit %d, stdout %q, stderr %q;\nwant exit 2, no stdout, stderr %q", r.Code, r.Stdout, r.Stderr, want+"\n")
	}
}

// Guide returns docs/cli.md, the guide that holds what a command's help,
// cut to a screen, leaves out, for a test of a command's package
// (cmd/again/internal/cmd/NAME) that checks what the help or the guide
// promises.
func Guide(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../../../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
