package cmdutil

import (
	"strings"
	"testing"

	"github.com/again-go/again/backoff"
)

// The help texts that name the deadline reserve name the library's own,
// so that they stay true when it changes.
func TestDeadlineHelpNamesTheReserve(t *testing.T) {
	want := backoff.DeadlineReserve.String()
	for name, text := range map[string]string{"DeadlineUsage": DeadlineUsage} {
		if !strings.Contains(text, " "+want+" ") {
			t.Errorf("%s = %q, want it to name backoff.DeadlineReserve, %s", name, text, want)
		}
	}
}
