package sim

import "slices"

// Strategy is how the clients of the outage and fleet models retry.
type Strategy string

// The strategies. outage.Run takes none, immediate, backoff, budget and breaker;
// fleet.Run takes none, retries, bucket, budget, shared and breaker.
const (
	NoRetries Strategy = "none"      // every request makes one attempt
	Immediate Strategy = "immediate" // retry at once
	Backoff   Strategy = "backoff"   // retry after the policy's delay
	Retries   Strategy = "retries"   // retry, with nothing to limit it (fleet)
	Bucket    Strategy = "bucket"    // Brooker's per-client token bucket (fleet)
	Budget    Strategy = "budget"    // a retry.TokenBucket (per client in the fleet)
	Shared    Strategy = "shared"    // one retry.TokenBucket for the whole fleet
	Breaker   Strategy = "breaker"   // a circuit breaker (per client in the fleet)
)

// OutageStrategies returns the strategies of outage.Run, in order.
func OutageStrategies() []Strategy {
	return []Strategy{NoRetries, Immediate, Backoff, Budget, Breaker}
}

// FleetStrategies returns the strategies of fleet.Run, in order.
func FleetStrategies() []Strategy {
	return []Strategy{NoRetries, Retries, Bucket, Budget, Shared, Breaker}
}

// CheckStrategies returns a *FieldError naming the first of ss not in valid.
func CheckStrategies(ss, valid []Strategy, accepted string) error {
	for _, s := range ss {
		if !slices.Contains(valid, s) {
			return &FieldError{"Strategies", `"` + string(s) + `"`, accepted}
		}
	}
	return nil
}
