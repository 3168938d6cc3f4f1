package cmdutil

import (
	"fmt"
	"github.com/again-go/again/cmd/again/internal/calc"
	"time"
)

// ExitDeadline is the exit status of a command that its --deadline ended
// before it succeeded, whichever command: run, fetch and wait alike, as
// GNU timeout exits.
const ExitDeadline = 124

// DeadlineOverrun is how far past its --deadline a command may end: the
// time to stop what is in flight and write its last lines. Every attempt
// (run's command, fetch's request with its body, each of wait's checks)
// is bounded by what is left of the deadline; the exception is `again
// run`'s command when it ignores SIGTERM, which is killed a kill grace
// (2 s) later.
const DeadlineOverrun = 100 * time.Millisecond

// DeadlineError says that the --deadline ended a command before it
// succeeded: the one line every command prints for it,
//
//	stopped by the --deadline 10s after 7 attempts: 503 Service Unavailable
//
// "Stopped by", not "passed": retrying stops when too little of the
// deadline is left for another attempt, or when a server asks for a wait
// that would end after it, a little before it has passed.
// Last is the last attempt's outcome in the command's words ("" when no
// attempt ended: the line then ends after the attempts).
type DeadlineError struct {
	Deadline time.Duration
	Attempts int
	Last     string
}

// Error is the line, without the "again <sub>: " that Execute adds.
func (e *DeadlineError) Error() string {
	s := fmt.Sprintf("stopped by the --deadline %s after %d attempt", calc.Short(e.Deadline), e.Attempts)
	if e.Attempts != 1 {
		s += "s"
	}
	if e.Last != "" {
		s += ": " + Message(e.Last)
	}
	return s
}

// DeadlinePassed returns the error with which a command ends when its
// --deadline (deadline) ended it after attempts attempts, the last of
// which ended with last: status ExitDeadline and a *DeadlineError.
func DeadlinePassed(deadline time.Duration, attempts int, last string) error {
	return Exit(ExitDeadline, &DeadlineError{Deadline: deadline, Attempts: attempts, Last: last})
}

// DeadlineEndHelp is the paragraph of run's, fetch's and wait's help on
// how the --deadline ends a command.
const DeadlineEndHelp = `When the --deadline ends it (too little of it is left for another
attempt, a server asks for a wait past it, or an attempt is still running
when it passes), again exits 124, as GNU timeout does, with one line:
  again fetch: stopped by the --deadline 10s after 7 attempts: 503 Service Unavailable
No attempt outlives the deadline: again ends within 100ms of it (run: a
command that ignores SIGTERM then, within its 2s kill grace).`
