package page

// Interim parsing until internal/calc lands on this branch.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/again-go/again/backoff"
)

type input struct {
	policy   backoff.Policy
	deadline time.Duration
	target   backoff.Target
	seed     uint64
}

func parseDuration(field, s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(f * float64(time.Millisecond)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("calc: --%s: %q is not a duration; want e.g. 500ms, 1.5s, 2m or a bare number of milliseconds", field, s)
	}
	return d, nil
}

func parse(v map[string]string) (input, map[string]string) {
	errs := map[string]string{}
	in := input{seed: backoff.DefaultSeed}
	var err error
	if s, ok := v["initial"]; ok {
		if in.policy.Initial, err = parseDuration("initial", s); err != nil {
			errs["initial"] = err.Error()
		}
	}
	if s, ok := v["max"]; ok {
		if in.policy.Max, err = parseDuration("max", s); err != nil {
			errs["max"] = err.Error()
		}
	}
	if s := v["deadline"]; s != "" {
		if in.deadline, err = parseDuration("deadline", s); err != nil {
			errs["deadline"] = err.Error()
		}
	}
	if s, ok := v["multiplier"]; ok {
		if in.policy.Multiplier, err = strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
			errs["multiplier"] = fmt.Sprintf("calc: --multiplier: %q is not a number", s)
		}
	}
	if s, ok := v["retries"]; ok {
		if in.policy.Retries, err = strconv.Atoi(strings.TrimSpace(s)); err != nil {
			errs["retries"] = fmt.Sprintf("calc: --retries: %q is not a whole number", s)
		}
	}
	if s, ok := v["jitter"]; ok {
		if in.policy.Jitter, in.policy.JitterFactor, err = backoff.ParseJitter(s); err != nil {
			errs["jitter"] = err.Error()
		}
	}
	if len(errs) == 0 {
		if err := in.policy.Validate(); err != nil {
			errs["initial"] = err.Error()
		}
	}
	return in, errs
}
