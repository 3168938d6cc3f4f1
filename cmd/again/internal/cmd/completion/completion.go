// Package completion is `again completion SHELL`, cobra's completion
// command.
//
// A missing or unknown shell is a usage error.
package completion

import (
	"strings"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/spf13/cobra"
)

// Setup adds cobra's `again completion SHELL`, which prints a
// completion script on root's output as set when it is called, and names
// its shells in root's help. Cobra's own prints its help and exits 0
// without a shell or with one it does not know, which a script cannot tell
// from success: here both are usage errors, as an unknown command is.
func Setup(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	comp, _, err := root.Find([]string{"completion"})
	if err != nil || comp == root || comp.Runnable() {
		return // cobra added none (CompletionOptions.DisableDefaultCmd), or done
	}
	shells := cmdutil.CommandNames(comp)
	root.Long += "\nShell completion: again completion " + strings.Join(shells, "|") + " (see 'again completion --help')."
	cmdutil.OnlySubcommands(comp)
	for _, shell := range comp.Commands() {
		shell.Args = cmdutil.NoArgs
	}
	want := func() string {
		return "want one of " + strings.Join(shells, ", ") + " (see 'again completion --help')"
	}
	comp.Args = func(_ *cobra.Command, args []string) error {
		if len(args) > 0 {
			return cmdutil.Usagef("unknown shell %q; %s", args[0], want())
		}
		return nil
	}
	comp.RunE = func(*cobra.Command, []string) error {
		return cmdutil.Usagef("missing the shell; %s", want())
	}
}
