package sim

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"time"
)

// ErrInvalid is matched by errors.Is for every error a model returns for a
// configuration it cannot run.
var ErrInvalid = errors.New("sim: invalid configuration")

// FieldError reports a configuration field outside its accepted range, or
// fields each within its own range whose combination exceeds a limit:
// Field is then the expression limited, one of the models' Field constants,
// such as storm.FieldAttempts. It matches ErrInvalid with errors.Is.
type FieldError struct {
	Field    string // the configuration field, such as "Clients", or a Field constant
	Value    string // the rejected value, formatted; for a Field constant, its terms and result
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
const MaxClients = 100_000 // clients in one run of any model

// Limits of the outage, fleet and throttle models.
const (
	MaxRate     = 10_000        // requests per second
	MaxDuration = 1 * time.Hour // of a run, and of any of its delays
	// MaxRequests bounds the new requests a run expects from its rates
	// and duration: a million keep it within seconds and a few hundred
	// megabytes per strategy.
	MaxRequests = 1_000_000
)

// MaxDemandRatio bounds a demand ratio, a load offered per the capacity
// that serves it (the throttle and limit models).
const MaxDemandRatio = 100

// CheckInt returns a *FieldError unless lo <= v <= hi.
func CheckInt(field string, v, lo, hi int) error {
	if v < lo || v > hi {
		return &FieldError{field, fmt.Sprint(v), fmt.Sprintf("a whole number from %d to %d", lo, hi)}
	}
	return nil
}

// Product formats the product of the factors, each at least 0, as
// "2 × 3 × 4 = 24", or without " = …" if it exceeds the largest int.
func Product(factors ...int) string {
	terms := make([]string, len(factors))
	p, overflow := uint64(1), false
	for i, f := range factors {
		terms[i] = fmt.Sprint(f)
		hi, lo := bits.Mul64(p, uint64(f))
		overflow = overflow || hi != 0 || lo > math.MaxInt
		p = lo
	}
	s := strings.Join(terms, " × ")
	if overflow {
		return s
	}
	return fmt.Sprintf("%s = %d", s, p)
}
