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
		child []string
		want  string
	}{
		{"running", cmdtest.Helper(t, "block", "0"), ": the command was still running\n"},
		{"failing", cmdtest.Helper(t, "exit", "1"), ": exit status 1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, _, stderr := runAgain(t.Context(), nil, append([]string{"run", "--initial", "10ms", "--deadline", deadline.String(), "--"}, tc.child...)...)
			took := time.Since(start)
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			final := lines[len(lines)-1] + "\n"
			if code != cmdutil.ExitDeadline || !strings.HasPrefix(final, "again run: stopped by the --deadline 600ms after ") || !strings.HasSuffix(final, tc.want) {
				t.Errorf("exit %d, last line %q; want %d and the deadline's line ending %q", code, final, cmdutil.ExitDeadline, tc.want)
			}
			if took > deadline+cmdutil.DeadlineOverrun+slack {
				t.Errorf("run --deadline %v took %v, more than %v over it", deadline, took, cmdutil.DeadlineOverrun)
			}
		})
	}
}
