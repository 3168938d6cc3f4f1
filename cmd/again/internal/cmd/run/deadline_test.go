package run

import (
	"strings"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/cmdutil"
	"github.com/again-go/again/cmd/again/internal/cmdutil/cmdtest"
	"go.uber.org/goleak"
)

// slack is what a loaded machine (the race detector, parallel tests)
// adds to the time of a command, beyond the margin it promises.
const slack = 400 * time.Millisecond

// TestRunDeadlineEnds checks run's end at the --deadline, the same as
// every command's: exit 124, one line naming the deadline, the attempts
// and the last outcome, and no later than the deadline by more than
// cmdutil.DeadlineOverrun (with room for a loaded machine), whether the
// command runs at the deadline (it is stopped then) or fails each time.
func TestRunDeadlineEnds(t *testing.T) {
	defer goleak.VerifyNone(t)
	const deadline = 600 * time.Millisecond
	for _, tc := range []struct {
		name  string
		flags []string
		child []string
		want  string
		also  string // another last outcome a busy machine may give
	}{
		{"running", []string{"--initial", "10ms"}, cmdtest.Helper(t, "block", "0"), ": the command was still running\n", ""},
		// The last attempt starts within the reserve before the deadline;
		// on a busy machine its child may not have exited by then.
		{"failing", []string{"--initial", "10ms"}, cmdtest.Helper(t, "exit", "1"), ": exit status 1\n", ": the command was still running\n"},
		// No wait past the deadline: the 2 h wait is cut short, or not
		// started, whichever the retry loop's rule decides; when cut
		// short, the last attempt starts within the reserve, and on a
		// busy machine its child may not have exited by the deadline.
		{"a wait longer than the deadline", []string{"--initial", "2h", "--max", "0", "--jitter", "none"}, cmdtest.Helper(t, "exit", "1"), ": exit status 1\n", " attempts: the command was still running\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			args := append(append(append([]string{"run"}, tc.flags...), "--deadline", deadline.String(), "--"), tc.child...)
			code, _, stderr := runAgain(t.Context(), nil, args...)
			took := time.Since(start)
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			final := lines[len(lines)-1] + "\n"
			if code != cmdutil.ExitDeadline || !strings.HasPrefix(final, "again run: stopped by the --deadline 600ms after ") || !(strings.HasSuffix(final, tc.want) || tc.also != "" && strings.HasSuffix(final, tc.also)) {
				t.Errorf("exit %d, last line %q; want %d and the deadline's line ending %q", code, final, cmdutil.ExitDeadline, tc.want)
			}
			if took > deadline+cmdutil.DeadlineOverrun+slack {
				t.Errorf("run --deadline %v took %v, more than %v over it", deadline, took, cmdutil.DeadlineOverrun)
			}
		})
	}
}
