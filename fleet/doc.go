// Package fleet shares one retry budget among every process of a fleet,
// through Redis (or Valkey), so that a service running as a thousand
// processes retries as much as one process would when its dependency
// fails, not a thousand times as much.
//
// A retry.TokenBucket lives in one process and starts full: under a total
// outage every process spends its own tokens, and the fleet's retries grow
// with its size. A Budget keeps gRPC A6's bucket (the same rule as
// retry.TokenBucket) in one Redis key instead, and implements
// retry.Budget, so it goes wherever a local budget goes: retry.WithBudget,
// retryhttp.Transport.Budget.
//
// This is a module of its own (github.com/again-go/again/fleet), so that
// importing the core packages never pulls a Redis client.
//
// # Quick start
//
//	budget, err := fleet.OpenBudget("redis://localhost:6379/0?key=payments", nil)
//	if err != nil {
//		return err
//	}
//	defer budget.Close()
//	err = retry.Run(ctx, backoff.Default(), call, retry.WithBudget(budget))
//
// Every process that opens the same URL shares the bucket. With an
// existing client, NewBudget takes it in a BudgetConfig (its
// ContextTimeoutEnabled must be set).
//
// From a shell, the again command (go install
// github.com/again-go/again/cmd/again@latest) shares the same bucket:
//
//	again run --deadline 1m --budget 'redis://redis:6379/0?key=db-wait' -- pg_isready -h db
//
// # Costs and failures
//
// Recording a success costs nothing at call time (successes are flushed
// in batches every 100 ms); a retry decision costs at most one round trip,
// shared by concurrent decisions. No call waits for Redis longer than
// Timeout (50 ms by default): when Redis is slow, down, failing over or
// out of memory, decisions fall back to a local bucket with the same
// settings, one log line says so, and the shared bucket is used again as
// soon as Redis answers. Nothing fails because of Redis.
package fleet
