package cmdutil

import (
	"errors"
	"testing"
	"time"

	"github.com/again-go/again/cmd/again/internal/rate"
)

// Every rate flag reads n/unit, and refuses a bare number as a duration
// flag does, with a usage error naming the flag and the form.
func TestRateFlag(t *testing.T) {
	if r, err := RateFlag("rate", "600/m"); err != nil || r != (rate.Rate{N: 600, Per: time.Minute}) {
		t.Errorf("RateFlag(rate, 600/m) = %v, %v; want 600/m", r, err)
	}
	for _, tt := range []struct{ in, want string }{
		{"40", "--rate \"40\": want a rate with a unit: 40/s, 40/m or another n/unit such as 10/100ms"},
		{"40/sec", `--rate "40/sec": want a rate n/unit, such as 40/s, 10/100ms or 600/m`},
	} {
		_, err := RateFlag("rate", tt.in)
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != ExitUsage || err.Error() != tt.want {
			t.Errorf("RateFlag(rate, %q) = %v; want the usage error %q", tt.in, err, tt.want)
		}
	}
}
