//go:build !unix

package wait

import (
	"errors"
	"io"
	"os"
	"os/exec"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
)

// execCommand runs the command where a process cannot replace itself,
// with again's streams, and passes its exit status on.
func execCommand(path string, argv, env []string) error {
	cmd := exec.Command(path, argv[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return cmdutil.Exit(ee.ExitCode(), nil)
	}
	if err != nil {
		return err
	}
	return cmdutil.Exit(cmdutil.ExitOK, nil)
}

// terminalWidth reports no terminal: the live lines are for Unix
// terminals.
func terminalWidth(io.Writer) (int, bool) { return 0, false }
