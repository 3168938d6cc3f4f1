// Package cmdtest helps the tests of again's commands: it runs a command
// in-process under a root command named "again", as the program does, and
// runs the test binary itself as the again program or as a child command
// for `again run` in a process of its own.
//
// A command's tests run its command line, starting with the command's name,
// with Execute:
//
//	code := cmdtest.Execute(t.Context(), env, []string{"calc", "--retries", "3"}, calc.NewCmd)
//
// and a package whose tests start processes calls Main from an init
// function. Only tests import it.
package cmdtest

import (
	"context"
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

// WantUsageError checks the usage-error contract on what a command line
// printed (stdout, stderr) and its status: exit 2, nothing on stdout,
// exactly the one line want on stderr.
func WantUsageError(t *testing.T, code int, stdout, stderr, want string) {
	t.Helper()
	if code != cmdutil.ExitUsage || stdout != "" || stderr != want+"\n" {
		t.Errorf("exit %d, stdout %q, stderr %q;\nwant exit 2, no stdout, stderr %q", code, stdout, stderr, want+"\n")
	}
}
