package backoff

import (
	"errors"
	"time"
)

// Param names the Policy field that Solve searches for.
type Param int

// The parameters Solve can search for.
const (
	ParamInitial Param = iota
	ParamMultiplier
	ParamRetries
)

// Target is the statistic of the total wait that Solve keeps within the deadline.
type Target int

// The statistics Solve can hold to a deadline.
const (
	TargetMax Target = iota // the longest possible total wait
	TargetP99               // the 99th percentile of the total wait
)

// ErrUnsolvable is returned by Solve when no value of the parameter keeps
// the target within the deadline.
var ErrUnsolvable = errors.New("backoff: no value fits the deadline")

// Solve returns p with param set to the largest value for which the target
// statistic of the total wait stays within deadline.
//
// TODO(stats): not implemented yet.
func Solve(p Policy, param Param, deadline time.Duration, target Target, seed uint64) (Policy, error) {
	return p, ErrUnsolvable
}
