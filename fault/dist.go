package fault

import (
	"errors"
	"fmt"

	"github.com/again-go/again/fault/latency"
)

// The names of the latency distributions: package latency's, the words of
// `again sim hedge --dist`, so that a simulation and a live test mean the
// same thing by the same word.
const (
	Pareto    = latency.Pareto    // Scale·U^(−1/Alpha): a power-law tail
	Lognormal = latency.Lognormal // Median·e^(Sigma·Z)
)

// MaxLatency caps every latency a Distribution draws: latency.Max.
const MaxLatency = latency.Max

// Distribution is a long-tailed latency distribution: latency.Distribution
// (see there), the one `again sim hedge` simulates.
type Distribution = latency.Distribution

// ParseDistribution reads a distribution as latency.Parse does
// ("pareto:5ms,1.5", "lognormal:5ms,1.2"); an invalid one is a
// *FieldError.
func ParseDistribution(s string) (Distribution, error) {
	d, err := latency.Parse(s)
	return d, fromLatency(err, "")
}

// fromLatency returns err, a latency.FieldError, as a *FieldError whose
// Field has prefix before it.
func fromLatency(err error, prefix string) error {
	var le *latency.FieldError
	if errors.As(err, &le) {
		return &FieldError{prefix + le.Field, le.Value, le.Accepted}
	}
	return err
}

// ErrInvalid is matched (errors.Is) by every error reporting an invalid
// fault or distribution.
var ErrInvalid = errors.New("fault: invalid configuration")

// FieldError reports a field outside its accepted range. It matches
// ErrInvalid with errors.Is.
type FieldError struct {
	Field    string // the field, such as "Rate" or "Faults[2].Status"
	Value    string // the rejected value, formatted
	Accepted string // what is accepted, such as "a number from 0 to 1"
}

// Error returns "fault: FIELD must be ACCEPTED, got VALUE".
func (e *FieldError) Error() string {
	return fmt.Sprintf("fault: %s must be %s, got %s", e.Field, e.Accepted, e.Value)
}

// Is reports whether target is ErrInvalid.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }
