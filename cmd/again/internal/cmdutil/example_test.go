package cmdutil_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/spf13/cobra"
)

// A command returns plain errors, usage errors or an exit status; Execute
// turns each into one line on stderr and the process's exit status.
func ExampleExecute() {
	newRoot := func() *cobra.Command {
		root := &cobra.Command{Use: "again", SilenceErrors: true, SilenceUsage: true}
		root.SetFlagErrorFunc(cmdutil.FlagError)
		ping := &cobra.Command{Use: "ping", Args: cmdutil.NoArgs}
		host := ping.Flags().String("host", "", "host to ping")
		ping.RunE = func(cmd *cobra.Command, _ []string) error {
			switch *host {
			case "":
				return cmdutil.Usagef("--host must name a host, got %q", *host)
			case "down.example":
				return errors.New("no answer\nafter 3 attempts") // exit 1, on one line
			}
			return cmdutil.Exit(3, nil) // a status of its own, silently
		}
		root.AddCommand(ping)
		return root
	}
	env := &cmdutil.Env{Stdin: strings.NewReader(""), Stdout: os.Stdout, Stderr: os.Stdout}
	for _, args := range [][]string{
		{"ping"},
		{"ping", "--host", "down.example"},
		{"ping", "--host", "up.example", "extra"},
		{"ping", "--host", "up.example"},
		{"ping", "--port", "7"},
	} {
		code := cmdutil.Execute(context.Background(), newRoot(), args, env)
		fmt.Println("exit", code)
	}
	// Output:
	// again ping: --host must name a host, got ""
	// exit 2
	// again ping: no answer; after 3 attempts
	// exit 1
	// again ping: unexpected argument "extra"; ping takes only flags (see 'again ping --help')
	// exit 2
	// exit 3
	// again ping: unknown flag: --port (see 'again ping --help')
	// exit 2
}
