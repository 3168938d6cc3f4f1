package hedge

import (
	"errors"
	"time"

	"github.com/again-go/again/cmd/again/internal/sim"
	"github.com/again-go/again/fault/latency"
)

// Latency distributions of the hedge model: package latency's (package fault's), so that
// `again sim hedge` and a live test through fault's middleware or
// `again proxy` mean the same thing by the same word.
const (
	Pareto    = latency.Pareto    // Scale·U^(−1/Alpha): a power-law tail
	Lognormal = latency.Lognormal // Median·e^(Sigma·Z)
)

// MaxLatency caps every latency the hedge model draws:
// latency.Max.
const MaxLatency = latency.Max

// Distribution is the latency of a request on an idle server:
// latency.Distribution (fault.Distribution), whose zero fields take its
// defaults.
type Distribution = latency.Distribution

// distDefaults sets d's defaults, or returns the *FieldError of its
// invalid field, the distribution's name reported as Dist.
func distDefaults(d *Distribution) error {
	n, err := d.Defaults()
	var fe *latency.FieldError
	if errors.As(err, &fe) {
		field := fe.Field
		if field == "Name" {
			field = "Dist"
		}
		return &sim.FieldError{Field: field, Value: fe.Value, Accepted: fe.Accepted}
	}
	*d = n
	return err
}

// meanWork returns E[min(latency, cost)], in nanoseconds: the mean work
// of an attempt. It integrates the survival function over [0, cost].
func meanWork(d *Distribution, cost float64) float64 {
	const steps = 1000
	sum := 0.0
	for i := range steps {
		x := (float64(i) + 0.5) / steps * cost
		sum += d.Survival(time.Duration(x))
	}
	return sum / steps * cost
}
