package cmdutil

import (
	"io"
	"time"

	"github.com/again-go/again/retry"
)

// Env is what a command may touch of the outside world: the streams the
// command line was given, and the optional pieces a build of again adds.
// Commands write only here, never to os.Stdout, so that tests run them
// in-process. The zero Env has no streams; root's Run fills them. Its
// fields are set before the command line runs and only read while it
// runs, so goroutines of a command may read them at once.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer

	// OpenBudget, if not nil, opens the shared retry budget that a
	// --budget URL names (see the function OpenBudget): the budget, what
	// closes it (the command closes it when it ends, which sends what the
	// budget counted but has not sent yet), or an error saying what is wrong with the URL without
	// repeating its password, reported as a usage error. log receives the
	// budget's own lines (such as "Redis cannot be used"). It must not wait
	// for the budget's server: one that does not answer makes the budget
	// decide locally, never fails the command.
	//
	// Nil opens a fleet.Budget, as the installed again does; tests set it
	// to count what the command asks of its budget.
	OpenBudget func(url string, log io.Writer) (retry.Budget, io.Closer, error)

	// KillGrace, if above zero, replaces the 2 s that run gives a command
	// between SIGTERM (or the signal again forwards) and SIGKILL. It is
	// for tests, which shorten or lengthen it; the installed again leaves
	// it zero and has no flag for it.
	KillGrace time.Duration

	// LookupEnv, if not nil, looks up the environment variables that the
	// commands read (the OTEL_ ones, see StartTelemetry) in place of
	// os.LookupEnv: tests give each command line an environment of its
	// own without changing the process's. The OpenTelemetry SDK still
	// reads the few it reads itself from the process (see
	// docs/telemetry.md).
	LookupEnv func(string) (string, bool)
}
