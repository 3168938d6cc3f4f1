package cmdutil

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestDeadlinePassed checks the one convention of every command for an end
// that the --deadline decided: exit 124, and one line naming the deadline,
// the attempts and the last outcome.
func TestDeadlinePassed(t *testing.T) {
	for _, tc := range []struct {
		attempts int
		last     string
		want     string
	}{
		{7, "503 Service Unavailable", "stopped by the --deadline 10s after 7 attempts: 503 Service Unavailable"},
		{1, "exit status 1", "stopped by the --deadline 10s after 1 attempt: exit status 1"},
		{0, "", "stopped by the --deadline 10s after 0 attempts"},
		{2, "two\nlines", "stopped by the --deadline 10s after 2 attempts: two; lines"},
	} {
		err := DeadlinePassed(10*time.Second, tc.attempts, tc.last)
		code, msg := ExitCode(err)
		if code != ExitDeadline || msg != tc.want {
			t.Errorf("DeadlinePassed(10s, %d, %q) exits %d with %q, want %d with %q", tc.attempts, tc.last, code, msg, ExitDeadline, tc.want)
		}
		var de *DeadlineError
		if !errors.As(err, &de) || de.Attempts != tc.attempts {
			t.Errorf("DeadlinePassed(10s, %d, %q) = %v, want a *DeadlineError", tc.attempts, tc.last, err)
		}
	}
}

// TestDeadlineEndHelpMargin keeps the help's margin that of the code.
func TestDeadlineEndHelpMargin(t *testing.T) {
	if !strings.Contains(DeadlineEndHelp, "within "+DeadlineOverrun.String()+" of it") {
		t.Errorf("DeadlineEndHelp does not give the margin DeadlineOverrun = %v:\n%s", DeadlineOverrun, DeadlineEndHelp)
	}
}
