package sim

import (
	"errors"
	"fmt"
)

// ErrInvalid is matched by errors.Is for every error a model returns for a
// configuration it cannot run.
var ErrInvalid = errors.New("sim: invalid configuration")

// FieldError reports a configuration field outside its accepted range. It
// matches ErrInvalid with errors.Is.
type FieldError struct {
	Field    string // the configuration field, such as "Clients"
	Value    string // the rejected value, formatted
	Accepted string // what is accepted, such as "a whole number from 1 to 10000"
}

// Error returns "sim: FIELD must be ACCEPTED, got VALUE".
func (e *FieldError) Error() string {
	return fmt.Sprintf("sim: %s must be %s, got %s", e.Field, e.Accepted, e.Value)
}

// Is reports whether target is ErrInvalid.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

// Limits on the sizes a model accepts. They keep one run within seconds and
// its memory within megabytes; the command line reports them in its errors.
const (
	MaxClients = 100_000 // clients in one run of any model
	MaxRuns    = 100_000 // runs per cell of the OCC table
	// MaxOCCWork bounds the OCC table's Σ clients² × runs, its work when
	// clients do not back off: about 6 s on 2 cores. The default table's is
	// 24,700,000.
	MaxOCCWork = 100_000_000
)

// checkInt returns a *FieldError unless lo <= v <= hi.
func checkInt(field string, v, lo, hi int) error {
	if v < lo || v > hi {
		return &FieldError{field, fmt.Sprint(v), fmt.Sprintf("a whole number from %d to %d", lo, hi)}
	}
	return nil
}
