package cmdutil

import (
	"errors"
	"strings"

	"github.com/again-go/again/cmd/again/internal/rate"
)

// RateFlag parses the value s of the rate flag name with rate.Parse: N/UNIT
// in every command (proxy --rate, sim outage --rate and --spike-rate, sim
// throttle --capacity). A bare number other than 0 is refused as
// RequireRateUnit says; anything else that is not N/UNIT with the form.
// Both are usage errors.
func RateFlag(name, s string) (rate.Rate, error) {
	r, err := rate.Parse(s)
	if err != nil {
		if errors.Is(err, rate.ErrNoUnit) {
			return r, noRateUnit(name, s)
		}
		return r, BadValue("--"+name, s, "a rate %s", rate.Syntax)
	}
	return r, nil
}

// RequireRateUnit rejects a bare number other than 0 as the value s of the
// rate flag name, as RequireUnit does a duration's: 40 is 40/s to some
// readers and 40/m to others, so the message shows both and the form.
// Anything else is left to the flag's parser.
func RequireRateUnit(name, s string) error {
	if _, err := rate.Parse(s); errors.Is(err, rate.ErrNoUnit) {
		return noRateUnit(name, s)
	}
	return nil
}

// noRateUnit is the usage error of a bare number s given to the rate flag
// name.
func noRateUnit(name, s string) error {
	t := strings.TrimSpace(s)
	return BadValue("--"+name, s, "a rate with a unit: %s/s, %s/m or another n/unit such as 10/100ms", t, t)
}
